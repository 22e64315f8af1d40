package locks_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// heldBackend is a server whose script calls wait until the test lets
// them through (or their context ends): the slow member of a quorum.
type heldBackend struct {
	*simulate.Server
	gate  chan struct{}
	ended atomic.Int64 // calls that returned
	once  sync.Once
}

func (h *heldBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	defer h.ended.Add(1)
	select {
	case <-h.gate:
	case <-ctx.Done():
		return ctxEnded(ctx)
	}
	return h.Server.Run(ctx, s, keys, args...)
}

func (h *heldBackend) open() { h.once.Do(func() { close(h.gate) }) }

// ctxEnded is the reply of a call whose context ended before the server
// answered.
func ctxEnded(ctx context.Context) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(ctx.Err())
	return cmd
}

// A quorum Lock, extension and Unlock return once a majority answered:
// the slowest server does not set the pace (Redlock needs a majority, not
// every server). None of the slow server's calls has ended when they
// return, which a wait for every answer (until the per-server timeout)
// could not allow.
func TestQuorumReturnsOnMajority(t *testing.T) {
	slow := &heldBackend{Server: simulate.New(), gate: make(chan struct{})}
	t.Cleanup(slow.open)
	fast1, fast2 := simulate.New(), simulate.New()
	c, err := locks.NewQuorumWithBackends([]locks.Backend{fast1, fast2, slow}, locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.Mutex("majority")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := slow.ended.Load(); n != 0 {
		t.Fatalf("Lock returned after %d calls on the slow server ended, want its acquisition still waiting", n)
	}
	if err := l.Extend(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := slow.ended.Load(); n != 0 {
		t.Fatalf("Extend and Unlock returned after %d calls on the slow server ended, want all still waiting", n)
	}
	// The two fast servers are free: another client gets the lock.
	l2, err := m.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock after Unlock: %v", err)
	}
	if err := l2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A quorum Close waits for the calls that Lock and Unlock left running on
// the slow minority once a majority had answered: a process that unlocks,
// closes and exits must not drop its release to that server (it would
// fail once the caller closed its go-redis clients, and the lock would
// stay held there until the lease ran out). Here the slow server never
// lets a call through, so its calls end at their per-server timeout
// (TTL/20): Close returns only after both have.
func TestQuorumCloseWaitsForTheMinority(t *testing.T) {
	slow := &heldBackend{Server: simulate.New(), gate: make(chan struct{})}
	t.Cleanup(slow.open)
	c := quorumOf(t, simulate.New(), simulate.New(), slow)
	m := mutex(t, c, "close-waits", locks.WithTTL(10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lockUnlock(t, ctx, m)
	if n := slow.ended.Load(); n != 0 {
		t.Fatalf("%d calls on the slow server ended before Close, want its acquisition and release still waiting", n)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close = %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Close still waiting 30s later, though every call it waits for ends within 500ms")
	}
	if n := slow.ended.Load(); n != 2 {
		t.Fatalf("Close returned while %d of the slow server's 2 calls were still running", 2-n)
	}
}

// slowAcquireBackend holds a server's acquisitions until the test opens gate and
// runs every other script at once. A held acquisition runs when the gate
// opens even if its caller gave up waiting (its context ended first), as a
// command stuck in a frozen server's buffers runs when the server resumes.
type slowAcquireBackend struct {
	*simulate.Server
	gate chan struct{}
	ran  sync.WaitGroup // held acquisitions, done once they ran
	// releaseTakes is how long a release takes to answer (within its
	// caller's context) before it runs.
	releaseTakes time.Duration
}

func (b *slowAcquireBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if (s.Name == "mutex.release" || s.Name == "mutex.undo") && b.releaseTakes > 0 {
		select {
		case <-time.After(b.releaseTakes):
		case <-ctx.Done():
			return ctxEnded(ctx)
		}
	}
	if s.Name != "mutex.acquire" {
		return b.Server.Run(ctx, s, keys, args...)
	}
	b.ran.Add(1)
	reply := make(chan *redis.Cmd, 1)
	go func() {
		defer b.ran.Done()
		<-b.gate
		reply <- b.Server.Run(context.Background(), s, keys, args...)
	}()
	select {
	case cmd := <-reply:
		return cmd
	case <-ctx.Done():
		return ctxEnded(ctx)
	}
}

// A quorum acquisition that reaches a server after the lease's release did
// must not leave the lock held there. Lock returns on the two fast
// servers; the slow server's acquisition runs only after Unlock returned:
// with an answer while its caller still waits (arrived late), or after
// the caller timed out (given up, still in the server's buffers). Either
// way the slow server is free afterwards: the release there waits for the
// acquisition's answer, or, without one, undoes the attempt so the server
// refuses it. Releasing at once (before the fix) left the lock held on
// the slow server until the lease ran out, in both cases. Given up, the
// undo takes 50ms to answer: the wait for the acquisition's timeout must
// not use up the release's own time. Handed on, the lease is released by
// another Client that resumed it and knows nothing of the round's calls:
// where the release finds no holder, it undoes the attempt too. A
// reentrant owner's release waits for the late answer as well.
func TestQuorumLateAcquisitionDoesNotOutliveUnlock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ttl     time.Duration
		timeout bool // open the gate only after the acquisition call timed out
		resumed bool // released by another Client, through Marshal and Resume
		opts    []locks.Option
	}{
		{"arrived late", time.Minute, false, false, nil},
		{"given up", 10 * time.Second, true, false, nil}, // per-server timeout TTL/20 = 500ms
		{"handed on", time.Minute, false, true, nil},
		{"reentrant, arrived late", time.Minute, false, false, []locks.Option{locks.WithReentrant()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow := &slowAcquireBackend{Server: simulate.New(), gate: make(chan struct{})}
			if tc.timeout {
				slow.releaseTakes = 50 * time.Millisecond
			}
			var once sync.Once
			open := func() { once.Do(func() { close(slow.gate) }) }
			t.Cleanup(open)
			fast1, fast2 := simulate.New(), simulate.New()
			c := quorumOf(t, fast1, fast2, slow)
			m := mutex(t, c, "late", append(tc.opts, locks.WithTTL(tc.ttl))...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if tc.resumed {
				unlockElsewhere(t, ctx, m, quorumOf(t, fast1, fast2, slow))
			} else {
				lockUnlock(t, ctx, m)
			}
			if tc.timeout {
				c.Close() // returns once the acquisition call timed out and the release ran
				open()
			} else {
				open()
				c.Close()
			}
			slow.ran.Wait()
			freeOn(t, ctx, slow.Server, "late", "the slow server after Unlock")
		})
	}
}

// A quorum round that failed is undone everywhere, but TryLock returns
// once a majority answered the undo: a server that does not answer must
// not hold every failed round for a second per-server timeout. Here one
// fast server is held by another owner and the slow one never answers, so
// the round fails after the slow server's acquisition timed out; TryLock
// returns with the slow server's undo still waiting.
func TestQuorumUndoReturnsOnMajority(t *testing.T) {
	slow := &heldBackend{Server: simulate.New(), gate: make(chan struct{})}
	t.Cleanup(slow.open)
	taken, free := simulate.New(), simulate.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holdOn(t, taken, "undo-majority")

	// TTL 10s: the per-server timeout is 500ms.
	m := mutex(t, quorumOf(t, taken, free, slow), "undo-majority", locks.WithTTL(10*time.Second))
	if _, err := m.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("TryLock = %v, want ErrNotAcquired", err)
	}
	if n := slow.ended.Load(); n != 1 {
		t.Fatalf("TryLock returned after %d calls on the slow server ended, want only its acquisition (the undo still waiting)", n)
	}
	// The undo did reach the servers that answer: the free one is free.
	freeOn(t, ctx, free, "undo-majority", "the free server after the undo")
}

// A failed quorum round is undone only where it may have taken something:
// a server that answered "held by another" ran the acquisition and wrote
// nothing, so it gets no undo (a contended Lock fails most rounds, and
// each undo is a script run and a record of the attempt that slows that
// server's next acquisitions). Two servers are held by another owner,
// the third is free: the round fails, the free server's grant is undone,
// and the two others see no release call.
func TestQuorumUndoOnlyWhereTaken(t *testing.T) {
	var released atomic.Int64
	held1, held2, free := simulate.New(), simulate.New(), simulate.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holdOn(t, held1, "undo-where")
	holdOn(t, held2, "undo-where")
	m := mutex(t, quorumOf(t,
		scriptCounter{Backend: scriptCounter{Backend: held1, name: "mutex.release", runs: &released}, name: "mutex.undo", runs: &released},
		scriptCounter{Backend: scriptCounter{Backend: held2, name: "mutex.release", runs: &released}, name: "mutex.undo", runs: &released}, free), "undo-where")
	if _, err := m.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("TryLock = %v, want ErrNotAcquired", err)
	}
	if n := released.Load(); n != 0 {
		t.Fatalf("%d release or undo calls on the two servers that refused the round, want none", n)
	}
	freeOn(t, ctx, free, "undo-where", "the free server after the failed round")
}

func lockUnlock(t *testing.T, ctx context.Context, m *locks.Mutex) {
	t.Helper()
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// unlockElsewhere takes m and releases the lease through other, which
// resumes it, and waits until other's release reached every server.
func unlockElsewhere(t *testing.T, ctx context.Context, m *locks.Mutex, other *locks.Client) {
	t.Helper()
	r, err := other.Resume(lockMarshalled(t, ctx, m))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	other.Close()
}

// lockMarshalled takes m and returns the lease marshalled, to hand on.
func lockMarshalled(t *testing.T, ctx context.Context, m *locks.Mutex) string {
	t.Helper()
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// freeOn fails the test (saying where) unless lock name is free on one
// server alone (holdOn's counterpart).
func freeOn(t *testing.T, ctx context.Context, server locks.Backend, name, where string) {
	t.Helper()
	alone, err := locks.NewWithBackend(server, locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	l, err := mutex(t, alone, name).TryLock(ctx)
	if err != nil {
		t.Fatalf("%s: %v, want the lock free there", where, err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// deadBackend answers every call with a connection error.
type deadBackend struct{ *simulate.Server }

func (deadBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errors.New("dial tcp: connection refused"))
	return cmd
}

// quorumMutex is a Mutex with a one-minute TTL on a quorum of backends.
func quorumMutex(t *testing.T, name string, backends ...locks.Backend) *locks.Mutex {
	t.Helper()
	return mutex(t, quorumOf(t, backends...), name)
}

// A quorum Lock that runs out of time while no majority answers says both
// why (its context, the last round), naming the lock once.
func TestQuorumLockNoMajorityError(t *testing.T) {
	m := quorumMutex(t, "unreachable", simulate.New(), deadBackend{simulate.New()}, deadBackend{simulate.New()})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := m.Lock(ctx)
	if !errors.Is(err, locks.ErrNoQuorum) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, want ErrNoQuorum and the context's error", err)
	}
	if n := strings.Count(err.Error(), "locks: unreachable:"); n != 1 {
		t.Fatalf("the error names the lock %d times, want once: %q", n, err)
	}
}

// A round cut short by the caller's context does not count the servers it
// stopped waiting for as failed: one of five refuses the connection, two
// never answer (held), and the error says so instead of "3 of 5 servers
// failed".
func TestQuorumRoundCutShortIsNotAFailure(t *testing.T) {
	held1 := &heldBackend{Server: simulate.New(), gate: make(chan struct{})}
	held2 := &heldBackend{Server: simulate.New(), gate: make(chan struct{})}
	t.Cleanup(held1.open)
	t.Cleanup(held2.open)
	m := quorumMutex(t, "cut-short", simulate.New(), simulate.New(), deadBackend{simulate.New()}, held1, held2)
	// The per-server timeout is TTL/20 = 3s; the call ends first.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := m.TryLock(ctx)
	if !errors.Is(err, locks.ErrNoQuorum) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryLock = %v, want ErrNoQuorum and the context's error", err)
	}
	if want := "1 of 5 servers failed and 2 did not answer before the call ended"; !strings.Contains(err.Error(), want) {
		t.Fatalf("TryLock = %q, want it to say %q", err, want)
	}
}
