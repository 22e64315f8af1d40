package locks_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
)

// A quorum Mutex's lease is marshalled and resumed like any other (a
// lease is a token, not a process): another process's quorum Client over
// the same servers extends and releases it on every server. Resumed on a
// Client of one server it would reach one server only, so that is refused,
// as is a one-server lease resumed on a quorum Client.
func TestQuorumLeaseResumes(t *testing.T) {
	ctx := timeout(t, 30*time.Second)
	servers, clocks := virtualServers(3)
	qc := quorumOf(t, servers[0], servers[1], servers[2])
	l, err := mutex(t, qc, "handed-on").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}

	other := quorumOf(t, servers[0], servers[1], servers[2])
	r, err := other.Resume(s)
	if err != nil {
		t.Fatalf("Resume of a quorum lease on a quorum Client = %v", err)
	}
	if r.Owner() != l.Owner() || r.Token() != l.Token() {
		t.Fatalf("resumed lease: owner %q token %d, want %q and %d", r.Owner(), r.Token(), l.Owner(), l.Token())
	}
	if err := r.Extend(ctx, time.Minute); err != nil {
		t.Fatalf("Extend of the resumed lease = %v", err)
	}
	if err := r.Unlock(ctx); err != nil {
		t.Fatalf("Unlock of the resumed lease = %v", err)
	}
	// Unlock returns once a majority released; Close waits for the rest.
	other.Close()
	info, err := qc.Inspect(ctx, "handed-on")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Servers {
		if s.Err != nil || s.Info.Held {
			t.Fatalf("server %d after the resumed Unlock: %+v, want free", s.Server, s)
		}
	}

	// The lease names the call that took the hold: resumed after its lease
	// ran out and another call of the same owner took the lock, its Unlock
	// must not release that call's hold.
	shared := mutex(t, qc, "shared", locks.WithOwner("batch-job"))
	first, err := shared.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale, _ := first.Marshal()
	for _, c := range clocks {
		c.Advance(2 * time.Minute)
	}
	second, err := shared.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err = quorumOf(t, servers[0], servers[1], servers[2]).Resume(stale)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
		t.Fatalf("Unlock of a resumed lease that ran out = %v, want ErrLockLost", err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatalf("the second call's Unlock after the stale one = %v, want its hold kept", err)
	}

	single, err := locks.NewWithBackend(servers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	if _, err := single.Resume(s); err == nil || !strings.Contains(err.Error(), "needs a quorum Client") {
		t.Fatalf("Resume of a quorum lease on a one-server Client = %v, want it refused", err)
	}
	plain, err := mutex(t, single, "one-server").TryLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := plain.Marshal()
	if _, err := qc.Resume(ps); err == nil || !strings.Contains(err.Error(), "resumes only quorum leases") || errors.Is(err, locks.ErrNotHeld) {
		t.Fatalf("Resume of a one-server lease on a quorum Client = %v, want it refused", err)
	}
}
