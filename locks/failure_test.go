package locks_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// stoppedClock is a clock whose timers never fire, as for a process that
// was stopped: only a look at the time can notice that a deadline passed.
type stoppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stoppedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stoppedClock) AfterFunc(time.Duration, func()) (stop func() bool) {
	return func() bool { return true }
}
func (c *stoppedClock) jump(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// A holder frozen past its lease sees ErrLockLost at the first look after
// it resumes, before any timer ran: Err, Done and the lease's Context.
func TestLeaseDeadlineCheckedOnEveryLook(t *testing.T) {
	for _, look := range []string{"Err", "Done", "Context.Err", "Context.Done"} {
		t.Run(look, func(t *testing.T) {
			clock := &stoppedClock{t: time.Now()}
			srv := simulate.New(simulate.WithClock(simulate.WallClock{}))
			c, err := locks.NewWithBackend(srv, locks.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			m, _ := c.Mutex("frozen", locks.WithTTL(time.Second))
			l, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			work, stop := l.Context(ctx)
			defer stop()
			if l.Err() != nil || work.Err() != nil {
				t.Fatal("a fresh lease says it is lost")
			}
			clock.jump(2 * time.Second) // the process was stopped for 2×TTL
			var lost bool
			switch look {
			case "Err":
				lost = errors.Is(l.Err(), locks.ErrLockLost)
			case "Done":
				select {
				case <-l.Done():
					lost = errors.Is(l.Err(), locks.ErrLockLost)
				default:
				}
			case "Context.Err":
				lost = work.Err() != nil && errors.Is(context.Cause(work), locks.ErrLockLost)
			case "Context.Done":
				select {
				case <-work.Done():
					lost = errors.Is(context.Cause(work), locks.ErrLockLost)
				default:
				}
			}
			if !lost {
				t.Fatalf("after 2×TTL the first %s still says held (Err=%v)", look, l.Err())
			}
		})
	}
}

// failingRelease makes every release script fail, as a cancelled context or
// a dropped connection would.
type failingRelease struct{ locks.Backend }

func (f failingRelease) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if strings.Contains(s.Name, "release") {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errors.New("connection reset"))
		return cmd
	}
	return f.Backend.Run(ctx, s, keys, args...)
}

// A failed Unlock still ends the lease here: the holder must stop working.
func TestFailedUnlockEndsTheLease(t *testing.T) {
	srv := simulate.New()
	c, err := locks.NewWithBackend(failingRelease{srv})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, _ := c.Mutex("job")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err == nil {
		t.Fatal("Unlock succeeded through a failing backend")
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Done is still open after a failed Unlock")
	}
	if !errors.Is(l.Err(), locks.ErrLockLost) {
		t.Fatalf("Err after a failed Unlock = %v, want ErrLockLost", l.Err())
	}
}

// Kinds must not share a name silently.
func TestWrongKindOnOneName(t *testing.T) {
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, _ := c.Mutex("shared")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sem, _ := c.Semaphore("shared", 3)
	if _, err := sem.TryAcquire(ctx, 1); !errors.Is(err, locks.ErrWrongKind) || !strings.Contains(err.Error(), "mutex") {
		t.Errorf("Semaphore on a held Mutex's name = %v, want ErrWrongKind naming the mutex", err)
	}
	rw, _ := c.RWMutex("shared")
	if _, err := rw.TryRLock(ctx); !errors.Is(err, locks.ErrWrongKind) {
		t.Errorf("RLock on a held Mutex's name = %v, want ErrWrongKind", err)
	}
	l.Unlock(ctx)
	r, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryLock(ctx); !errors.Is(err, locks.ErrWrongKind) {
		t.Errorf("Mutex on a read-held name = %v, want ErrWrongKind", err)
	}
	r.Unlock(ctx)
	if l, err := m.TryLock(ctx); err != nil {
		t.Errorf("the name is free again, but TryLock = %v", err)
	} else {
		l.Unlock(ctx)
	}

	// A MultiLock's names are Mutex names: another kind on one of them is
	// refused, whether the name is taken alone (mutex.acquire) or with
	// another name of its slot (multi.acquire@3; version 2 took a name a
	// Semaphore or readers held).
	names := sameSlotNames(t, "kinds")
	for _, set := range [][]string{names, {names[1]}} {
		ml, err := c.MultiLock(set)
		if err != nil {
			t.Fatal(err)
		}
		sem, _ := c.Semaphore(names[1], 2)
		p, err := sem.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ml.TryLock(ctx); !errors.Is(err, locks.ErrWrongKind) || !strings.Contains(err.Error(), "semaphore") || !strings.Contains(err.Error(), names[1]) {
			t.Errorf("MultiLock%q on a name with a Semaphore's permits = %v, want ErrWrongKind naming %s and the semaphore", set, err, names[1])
		}
		p.Unlock(ctx)
		rw, _ := c.RWMutex(names[1])
		w, err := rw.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := ml.Lock(wait); !errors.Is(err, locks.ErrWrongKind) || !strings.Contains(err.Error(), "rwmutex") {
			t.Errorf("MultiLock%q.Lock on a name an RWMutex writer holds = %v, want ErrWrongKind at once, not a wait", set, err)
		}
		cancel()
		w.Unlock(ctx)
		r, err := rw.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ml.TryLock(ctx); !errors.Is(err, locks.ErrWrongKind) || !strings.Contains(err.Error(), "rwmutex") {
			t.Errorf("MultiLock%q on a read-held name = %v, want ErrWrongKind naming the rwmutex", set, err)
		}
		r.Unlock(ctx)
		if ls, err := ml.TryLock(ctx); err != nil {
			t.Errorf("MultiLock%q: the names are free again, but TryLock = %v", set, err)
		} else {
			ls.Unlock(ctx)
		}
	}
}

// Marshal/Resume carry any name; nonsense is refused with a reason.
func TestResumeRoundTripAndBadInput(t *testing.T) {
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "inv\xff\xfe:\x00é"
	m, err := c.Mutex(name)
	if err != nil {
		t.Fatal(err)
	}
	s := lockMarshalled(t, ctx, m)
	if !strings.Contains(s, `"attempt":"`) {
		t.Fatalf("marshalled lease %s carries no attempt: a resumed Unlock could drop another call's hold of the owner", s)
	}
	resumed, err := c.Resume(s)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Name() != name {
		t.Fatalf("resumed name %q, want %q", resumed.Name(), name)
	}
	if err := resumed.Unlock(ctx); err != nil {
		t.Fatalf("Unlock of the resumed lease: %v", err)
	}
	if info, _ := c.Inspect(ctx, name); info.Held {
		t.Fatal("the lock is still held after the resumed Unlock")
	}
	for _, bad := range []struct{ json, want string }{
		{`{"name":"a","owner":"o","token":1,"ttl_ms":99999999999999999}`, "ttl_ms"},
		{`{"name":"a","owner":"o","token":1,"ttl_ms":0}`, "ttl_ms"},
		{`{"name":"a","owner":"o","token":-5,"ttl_ms":1000}`, "token -5"},
		{`{"name":"a","owner":"","token":1,"ttl_ms":1000}`, "no owner"},
		{`{"name":"a","owner":"\tcall","token":1,"ttl_ms":1000}`, "no owner token"},
		{`{"name":"a","owner":"o","token":1,"ttl_ms":1000,"kind":"permits"}`, "permits"},
		{`{"name_b64":"!!","owner":"o","token":1,"ttl_ms":1000}`, "name_b64"},
		{`{"name":"a","owner":"o","token":1,"ttl_ms":1000,"kind":"read","attempt":"x"}`, "attempt"},
	} {
		if _, err := c.Resume(bad.json); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Resume(%s) = %v, want an error about %q", bad.json, err, bad.want)
		}
	}
}

// Default settings leave no key behind once locks are released and their
// leases have run out: not even the fencing counter.
// lockKeys is what srv holds but the Clients' holder records (one per
// Client, not per lock: "{redlua-holders}:<client id>", which expires
// within a day of the Client's last write).
func lockKeys(srv *simulate.Server) []simulate.KeyDump {
	var out []simulate.KeyDump
	for _, k := range srv.Dump() {
		if !strings.HasPrefix(k.Key, "{redlua-holders}:") || k.PTTL > 24*time.Hour.Milliseconds() || k.PTTL < 0 {
			out = append(out, k)
		}
	}
	return out
}

func TestNoKeysLeftBehind(t *testing.T) {
	clock := simulate.NewVirtualClock(time.Now())
	srv := simulate.New(simulate.WithClock(clock))
	c, err := locks.NewWithBackend(srv, locks.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var highest int64
	for i := range 10000 {
		m, _ := c.Mutex(fmt.Sprintf("invoice:%d", i))
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		highest = max(highest, l.Token())
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(locks.DefaultTTL + time.Second)
	if left := lockKeys(srv); len(left) != 0 {
		t.Fatalf("%d keys left after 10,000 released locks, such as %+v", len(left), left[0])
	}
	// And a token taken now is still above every earlier one.
	m, _ := c.Mutex("invoice:0")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.Token() <= highest {
		t.Fatalf("token %d after the keys expired, want above %d", l.Token(), highest)
	}
}

// Nor does a name whose holder and waiters all died: every key it used,
// the waiters' queues included, expires once their leases and waiter TTLs
// have run out, whatever kind of lock it is.
func TestNoKeysLeftByDeadHoldersAndWaiters(t *testing.T) {
	type take func(ctx context.Context, c *locks.Client) error
	mutex := func(opts ...locks.Option) take {
		return func(ctx context.Context, c *locks.Client) error {
			m, err := c.Mutex("job", opts...)
			if err == nil {
				_, err = m.Lock(ctx)
			}
			return err
		}
	}
	semaphore := func(ctx context.Context, c *locks.Client) error {
		s, err := c.Semaphore("job", 1)
		if err == nil {
			_, err = s.Acquire(ctx, 1)
		}
		return err
	}
	writer := func(ctx context.Context, c *locks.Client) error {
		rw, err := c.RWMutex("job")
		if err == nil {
			_, err = rw.Lock(ctx)
		}
		return err
	}
	for _, tc := range []struct {
		kind  string
		take  take
		queue string // the key a waiter's queueing writes
		field string // and the prefix of the hash field it writes there, if any
	}{
		{"mutex", mutex(), "{job}:queue", ""},
		{"fair mutex", mutex(locks.WithFair(time.Second)), "{job}:queue", ""},
		{"semaphore", semaphore, "{job}:squeue", ""},
		{"rwmutex writer", writer, "{job}", "W:"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			clock := simulate.NewVirtualClock(time.Now())
			srv := simulate.New(simulate.WithClock(clock))
			holderNode, waiterNode := &downBackend{Backend: srv}, &downBackend{Backend: srv}
			holder, err := locks.NewWithBackend(holderNode, locks.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			waiter, err := locks.NewWithBackend(waiterNode, locks.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { holder.Close(); waiter.Close() })
			if err := tc.take(context.Background(), holder); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			waited := make(chan error, 1)
			go func() { waited <- tc.take(ctx, waiter) }()
			queued := func() bool {
				for _, k := range srv.Dump() {
					if k.Key != tc.queue {
						continue
					}
					if tc.field == "" {
						return true
					}
					for f := range k.Value.(map[string]string) {
						if strings.HasPrefix(f, tc.field) {
							return true
						}
					}
				}
				return false
			}
			for start := time.Now(); !queued(); time.Sleep(time.Millisecond) {
				if time.Since(start) > 10*time.Second {
					t.Fatalf("the waiter did not queue (no %s %s) in 10s", tc.queue, tc.field)
				}
			}
			// Both die: nothing they send arrives any more, not even the
			// waiter's undo when its call ends.
			holderNode.down.Store(true)
			waiterNode.down.Store(true)
			cancel()
			select {
			case err := <-waited:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("the waiter's call ended with %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiter's call did not end 10s after its context")
			}
			clock.Advance(time.Hour)
			if left := lockKeys(srv); len(left) != 0 {
				t.Fatalf("%d keys left an hour after the holder and the waiter died, such as %+v", len(left), left[0])
			}
		})
	}
}

// downBackend fails every call while down is set, as a killed server would.
type downBackend struct {
	locks.Backend
	down atomic.Bool
}

func (d *downBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if d.down.Load() {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errors.New("dial tcp: connection refused"))
		return cmd
	}
	return d.Backend.Run(ctx, s, keys, args...)
}

// Redlock over 5 servers: holds with 2 down, fails clearly with 3 down, and
// excludes while servers come and go.
func TestQuorum(t *testing.T) {
	nodes := make([]*downBackend, 5)
	backends := make([]locks.Backend, 5)
	for i := range nodes {
		nodes[i] = &downBackend{Backend: simulate.New()}
		backends[i] = nodes[i]
	}
	c, err := locks.NewQuorumWithBackends(backends, locks.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, _ := c.Mutex("ledger")
	nodes[0].down.Store(true)
	nodes[3].down.Store(true)
	l, err := m.TryLock(ctx)
	if err != nil {
		t.Fatalf("with 2 of 5 down: %v", err)
	}
	if _, err := m.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("a second holder with 2 of 5 down: %v, want ErrNotAcquired", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	nodes[4].down.Store(true)
	if _, err := m.TryLock(ctx); !errors.Is(err, locks.ErrNoQuorum) || !strings.Contains(err.Error(), "3 of 5 servers failed") {
		t.Fatalf("TryLock with 3 of 5 down: %v, want ErrNoQuorum saying 3 of 5 failed", err)
	}
	// Lock keeps trying until its context ends, and then says both why.
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = m.Lock(short)
	cancelShort()
	if !errors.Is(err, locks.ErrNoQuorum) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with 3 of 5 down: %v, want ErrNoQuorum and the context's error", err)
	}
	for _, n := range nodes {
		n.down.Store(false)
	}

	// Goroutines increment while random servers go down and up
	// (one at a time: a release that misses a server leaves a lease there
	// until it expires, and two down plus one such lease leave no majority).
	m, _ = c.Mutex("ledger:chaos", locks.WithTTL(3*time.Second))
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				for _, n := range nodes {
					n.down.Store(false)
				}
				return
			case <-time.After(20 * time.Millisecond):
			}
			for _, n := range nodes {
				n.down.Store(false)
			}
			for _, j := range rand.Perm(5)[:i%2] {
				nodes[j].down.Store(true)
			}
		}
	}()
	// Up to 200 rounds each, for at most 20 s: Redlock rounds split votes
	// under contention, and the point is exclusion, not speed. Four
	// goroutines, not sixteen: under -race on a busy machine sixteen
	// contenders split nearly every round (2 to 18 holds in 20 s, against
	// about 1200 without -race), which left the exclusion check almost
	// nothing to look at and the "no increment" check to luck; four got 67
	// to 284 holds.
	const goroutines = 4
	var counter, inside int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				l, err := m.Lock(lctx)
				if lctx.Err() != nil {
					return
				}
				if errors.Is(err, locks.ErrNoQuorum) {
					continue // no majority until the context ended: try again
				}
				if err != nil {
					errs <- err
					return
				}
				if atomic.AddInt64(&inside, 1) != 1 {
					errs <- errors.New("two holders at once")
				}
				counter++
				atomic.AddInt64(&inside, -1)
				_ = l.Unlock(ctx) // a release that misses servers leaves leases that expire
			}
		}()
	}
	wg.Wait()
	close(stop)
	chaos.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if counter == 0 {
		t.Fatal("no increment in 20 s")
	}
	t.Logf("quorum: %d increments by %d goroutines with servers failing, no overlap", counter, goroutines)
}
