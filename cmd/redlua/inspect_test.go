package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// An operator sees a semaphore's holders, permit count and queue, in text
// and JSON, and frees it with unlock --force: the queued Acquire takes the
// permits and the removed holders' leases end as lost.
func TestInspectAndForceUnlockSemaphore(t *testing.T) {
	srv := redistest.Standalone(t)
	url := serverURL(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
	sem, err := testLocks(t, srv).Semaphore("pool", 3, opts...)
	if err != nil {
		t.Fatal(err)
	}
	one, err := sem.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	two, err := sem.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := testLocks(t, srv).Semaphore("pool", 3, opts...)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := waiter.Acquire(ctx, 3)
		got <- err
	}()
	inspector := testLocks(t, srv)
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, err := inspector.Inspect(ctx, "pool")
		if err != nil {
			t.Fatal(err)
		}
		if info.Waiters == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Acquire did not queue in 10s: %+v", info)
		}
		time.Sleep(5 * time.Millisecond)
	}

	r := redlua(t, url, "inspect", "--json", "pool")
	if r.code != 0 {
		t.Fatalf("inspect exited %d: %s", r.code, r.stderr)
	}
	var views []lockView
	if err := json.Unmarshal([]byte(r.stdout), &views); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
	}
	if len(views) != 1 {
		t.Fatalf("inspect --json =\n%s", r.stdout)
	}
	v := views[0]
	permits := map[string]int64{}
	for _, p := range v.Permits {
		if p.TTLms <= 0 || p.TTLms > time.Minute.Milliseconds() {
			t.Fatalf("holder %s with ttl_ms %d\n%s", p.Owner, p.TTLms, r.stdout)
		}
		permits[p.Owner] = p.Permits
	}
	if !v.Held || v.Kind != "semaphore" || v.Waiters != 1 || v.Limit != 0 || len(permits) != 2 ||
		permits[one.Owner()] != 1 || permits[two.Owner()] != 2 || v.Owner != "" {
		t.Fatalf("inspect --json =\n%s", r.stdout)
	}
	for _, field := range []string{`"kind": "semaphore"`, `"permits": [`, `"ttl_ms": `} {
		if !strings.Contains(r.stdout, field) {
			t.Fatalf("inspect --json lacks %s:\n%s", field, r.stdout)
		}
	}

	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	r = redlua(t, url, "inspect", "pool")
	for _, want := range []string{"pool: held\n", "  kind     semaphore\n", "  permits  3 of 3 in use\n", "  holders  2\n",
		"    " + one.Owner() + "  1 permit, ", "    " + two.Owner() + "  2 permits, ", "  waiters  1\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("inspect: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}

	r = redlua(t, url, "unlock", "--force", "pool")
	if r.code != 0 || !strings.Contains(r.stdout, "pool: revoked the semaphore's 2 permit holders (") || !strings.Contains(r.stdout, one.Owner()) {
		t.Fatalf("unlock --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The holders are told at once; their Unlock confirms that they
	// stopped, and the queued Acquire is served.
	for _, l := range []*locks.Lease{one, two} {
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a revoked holder was not told within 10s of unlock --force")
		}
		if err := l.Unlock(ctx); !errors.Is(err, locks.ErrForced) {
			t.Fatalf("revoked holder's Unlock = %v, want ErrForced", err)
		}
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the queued Acquire after unlock --force: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued Acquire was not served within 10s of unlock --force")
	}
}

// A name held only by readers is reported as an RWMutex with its readers,
// and unlock --force says it leaves them.
func TestInspectReaders(t *testing.T) {
	srv := redistest.Standalone(t)
	url := serverURL(srv)
	ctx := context.Background()
	rw, err := testLocks(t, srv).RWMutex("table", locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := redlua(t, url, "inspect", "table")
	for _, want := range []string{"table: held\n", "  kind     rwmutex\n", "  readers  1\n", "    " + reader.Owner() + "  1 hold, "} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("inspect: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = redlua(t, url, "unlock", "--force", "--grace", "0", "table")
	if r.code != 0 || !strings.Contains(r.stdout, "table: removed the 1 reader (owner "+reader.Owner()+": 1 hold, lease ") {
		t.Fatalf("unlock --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := reader.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
		t.Fatalf("the removed reader's Unlock = %v, want ErrLockLost", err)
	}
	if r = redlua(t, url, "unlock", "--force", "table"); r.code != 0 || !strings.Contains(r.stdout, "table: was not held") {
		t.Fatalf("unlock --force of a free lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
