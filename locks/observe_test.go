package locks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

func TestEventKindString(t *testing.T) {
	want := map[locks.EventKind]string{
		locks.EventAcquired: "acquired", locks.EventContended: "contended", locks.EventWaitFailed: "wait-failed",
		locks.EventRenewFailed: "renew-failed", locks.EventLost: "lost", locks.EventReleased: "released",
		0: "EventKind(0)", 99: "EventKind(99)",
	}
	for k, w := range want {
		if got := k.String(); got != w {
			t.Errorf("EventKind(%d).String() = %q, want %q", int(k), got, w)
		}
	}
}

// records is a slog handler's output, safe for the watchdog's goroutine.
type records struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *records) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// find returns the first record whose msg contains msg, or nil.
func (r *records) find(msg string) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range strings.Split(r.buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && strings.Contains(rec["msg"].(string), msg) {
			return rec
		}
	}
	return nil
}

func (r *records) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

func newRecords(level slog.Level) (*records, *slog.Logger) {
	r := &records{}
	return r, slog.New(slog.NewJSONHandler(r, &slog.HandlerOptions{Level: level}))
}

// failingExtend fails every renewal with a network-like error, as a server
// that stopped answering would.
type failingExtend struct{ locks.Backend }

func (b failingExtend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if s.Name == "mutex.extend" {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errors.New("connection refused"))
		return cmd
	}
	return b.Backend.Run(ctx, s, keys, args...)
}

// The watchdog and the lease run on a virtual clock: on wall time a
// scheduling delay of 200 ms let the lease run out before the first renewal
// was even tried, and no "renewal failed" was logged.
func TestWithLoggerRenewalFailureAndLoss(t *testing.T) {
	recs, logger := newRecords(slog.LevelWarn)
	clock := simulate.NewVirtualClock(time.Now())
	c, err := locks.NewWithBackend(failingExtend{simulate.New(simulate.WithClock(clock))}, locks.WithLogger(logger), locks.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Mutex("report", locks.WithTTL(300*time.Millisecond), locks.WithWatchdog(1.0/3))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := m.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(100 * time.Millisecond) // the first renewal is due, and fails
	if recs.find("renewal failed") == nil || lease.Err() != nil {
		t.Fatalf("after one failed renewal with time left: lease Err = %v, want nil; log:\n%s", lease.Err(), recs)
	}
	clock.Advance(300 * time.Millisecond) // past the deadline: lost
	select {
	case <-lease.Done():
	default:
		t.Fatalf("the lease is still open past its deadline with every renewal failing; log:\n%s", recs)
	}
	for _, msg := range []string{"renewal failed", "lease lost"} {
		rec := recs.find(msg)
		if rec == nil || rec["level"] != "WARN" || rec["lock"] != "report" || rec["err"] == nil {
			t.Fatalf("no warn record %q with lock and err in:\n%s", msg, recs)
		}
	}
	if recs.find("acquired") != nil {
		t.Fatalf("an acquisition without waiting was logged above debug:\n%s", recs)
	}
}

func TestWithLoggerSlowWait(t *testing.T) {
	ctx := context.Background()
	srv := simulate.New()
	recs, logger := newRecords(slog.LevelInfo)
	holder, _ := locks.NewWithBackend(srv)
	waiter, err := locks.NewWithBackend(srv, locks.WithLogger(logger, locks.LogSlowWaits(0)))
	if err != nil {
		t.Fatal(err)
	}
	first, err := mutex(t, holder, "nightly").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := mutex(t, waiter, "nightly").Lock(ctx)
		if err == nil {
			err = l.Unlock(ctx)
		}
		got <- err
	}()
	waitFor(t, func() bool { return waiter.Stats().Contended > 0 })
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	rec := recs.find("slow wait")
	if rec == nil || rec["level"] != "INFO" || rec["lock"] != "nightly" || rec["wait"] == nil || rec["event"] != "acquired" {
		t.Fatalf("no info record of the slow wait in:\n%s", recs)
	}
	if recs.find("released") != nil {
		t.Fatalf("a release was logged above debug:\n%s", recs)
	}
}

// Hooks add up, at the Client and per lock; WithLogger is one of them.
func TestWithHookAddsUp(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	hook := func(who string) func(locks.Event) {
		return func(e locks.Event) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, who+":"+e.Kind.String())
		}
	}
	recs, logger := newRecords(slog.LevelDebug)
	if _, err := locks.NewWithBackend(simulate.New(), locks.WithHook(nil)); err == nil || !strings.Contains(err.Error(), "WithHook(nil)") {
		t.Fatalf("WithHook(nil) = %v, want an error naming it (nothing is silently ignored)", err)
	}
	c, err := locks.NewWithBackend(simulate.New(), locks.WithHook(hook("client")), locks.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	l, err := mutex(t, c, "x", locks.WithHook(hook("mutex"))).Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := strings.Join(seen, " ")
	mu.Unlock()
	if got != "client:acquired mutex:acquired" || recs.find("lock acquired") == nil {
		t.Fatalf("hooks saw %q, logger wrote:\n%s", got, recs)
	}
	_ = l.Unlock(context.Background())
}
