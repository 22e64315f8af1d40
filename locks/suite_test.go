package locks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// fixture is one backend the shared suite runs on.
type fixture struct {
	// client returns a new Client, as another process would have one.
	client func(t *testing.T, opts ...locks.Option) *locks.Client
	// wrap returns a Client whose backend is wrapped, for fault injection.
	wrap func(t *testing.T, w func(locks.Backend) locks.Backend, opts ...locks.Option) *locks.Client
	// elapse makes d of server time pass.
	elapse func(d time.Duration)
	// real is the redis-server, when the backend is one.
	real *redistest.Server
	// virtual is set when elapse moves a virtual clock that the Client's
	// leases and watchdog also run on (the simulator).
	virtual bool
	// scale divides heavy workloads: miniredis interprets every script at a
	// few thousand calls a second (tens of times slower under -race), so it
	// runs the stress tests with fewer operations than the real server and
	// the simulator, which run them in full.
	scale int
}

// suite runs fn on every backend: miniredis, a real redis-server, and the
// simulator when one is registered (see simulator_test.go).
func suite(t *testing.T, fn func(t *testing.T, f fixture)) {
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		// Scripts read the server's TIME for leases kept in sorted sets, and
		// miniredis's TIME moves only with SetTime: move both clocks.
		var now time.Time
		elapse := func(d time.Duration) {
			if real := time.Now(); now.Before(real) {
				now = real
			}
			now = now.Add(d)
			mr.SetTime(now)
			mr.FastForward(d)
		}
		f := goRedisFixture(t, mr.Addr(), elapse, nil)
		f.scale = 10
		fn(t, f)
	})
	t.Run("redis-server", func(t *testing.T) {
		srv := redistest.Standalone(t)
		fn(t, goRedisFixture(t, srv.Addr, time.Sleep, srv))
	})
	for _, extra := range extraBackends {
		t.Run(extra.name, func(t *testing.T) { fn(t, extra.make(t)) })
	}
}

// extraBackends lets other files add backends (the simulator).
var extraBackends []struct {
	name string
	make func(t *testing.T) fixture
}

// suiteIOTimeout bounds one go-redis call in the suite. The suite injects no
// network faults, so the bound only has to end a call to a server that
// stopped answering; miniredis serves 32 contending goroutines one
// interpreted script at a time and, under -race on a busy machine, took
// more than a second to answer some of them.
const suiteIOTimeout = 10 * time.Second

func goRedisFixture(t *testing.T, addr string, elapse func(time.Duration), real *redistest.Server) fixture {
	wrap := func(t *testing.T, w func(locks.Backend) locks.Backend, opts ...locks.Option) *locks.Client {
		rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: suiteIOTimeout, ReadTimeout: suiteIOTimeout, WriteTimeout: suiteIOTimeout})
		runner, err := evalsha.New(rc)
		if err != nil {
			t.Fatal(err)
		}
		var b locks.Backend = runner
		if w != nil {
			b = w(b)
		}
		c, err := locks.NewWithBackend(b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { runner.Close(); rc.Close() })
		return c
	}
	return fixture{
		client: func(t *testing.T, opts ...locks.Option) *locks.Client { return wrap(t, nil, opts...) },
		wrap:   wrap,
		elapse: elapse,
		real:   real,
		scale:  1,
	}
}

func mutex(t *testing.T, c *locks.Client, name string, opts ...locks.Option) *locks.Mutex {
	t.Helper()
	m, err := c.Mutex(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// mostlyWaits runs a test beside the other tests that spend their time
// waiting on leases, worker processes and servers rather than computing:
// run one after another they took most of this package's 5.5 minutes in
// CI on a 2-core machine. Each starts its own servers (or simulators) and
// shares nothing with the others; being run beside them is load of the kind
// every test here must already pass under.
func mostlyWaits(t *testing.T) { t.Parallel() }

// 16 goroutines × 200 increments of a counter kept outside Redis, each a
// read-yield-write that loses updates unless the lock excludes the others.
// miniredis runs a tenth of the rounds (f.scale): under -race on a busy
// machine its 3200 interpreted lock/unlock pairs outran the minute.
func TestSuiteMutualExclusion(t *testing.T) {
	mostlyWaits(t)
	suite(t, func(t *testing.T, f fixture) {
		for _, mode := range []struct {
			name string
			opts []locks.Option
		}{{"plain", nil}, {"fair", []locks.Option{locks.WithFair(0)}}} {
			t.Run(mode.name, func(t *testing.T) {
				c := f.client(t, append([]locks.Option{locks.WithTTL(10 * time.Second)}, mode.opts...)...)
				const workers = 16
				rounds := 200 / f.scale
				var counter int
				var inside atomic.Int32
				ctx := timeout(t, 60*time.Second)
				var wg sync.WaitGroup
				errs := make(chan error, workers)
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						m, _ := c.Mutex("counter")
						for i := 0; i < rounds; i++ {
							l, err := m.Lock(ctx)
							if err != nil {
								errs <- err
								return
							}
							if inside.Add(1) != 1 {
								errs <- errors.New("two holders at once")
							}
							v := counter
							time.Sleep(0) // yield: a second holder would interleave here
							counter = v + 1
							inside.Add(-1)
							if err := l.Unlock(ctx); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				if counter != workers*rounds {
					t.Fatalf("counter = %d, want %d: updates were lost", counter, workers*rounds)
				}
			})
		}
	})
}

func TestSuiteExpiryAndTakeover(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		a := mutex(t, f.client(t), "job", locks.WithTTL(100*time.Millisecond))
		b := mutex(t, f.client(t), "job", locks.WithTTL(time.Second))
		la, err := a.TryLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("second TryLock = %v, want ErrNotAcquired", err)
		}
		f.elapse(150 * time.Millisecond)
		lb, err := b.TryLock(ctx)
		if err != nil {
			t.Fatalf("TryLock after the first lease expired: %v", err)
		}
		if lb.Token() <= la.Token() {
			t.Errorf("fencing token %d after takeover is not above %d", lb.Token(), la.Token())
		}
		if err := la.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("Extend after expiry = %v, want ErrLockLost", err)
		}
		select {
		case <-la.Done():
		default:
			t.Fatal("the lost lease's Done is still open")
		}
		if err := la.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("Unlock of a lost lease = %v, want ErrLockLost", err)
		}
		if err := lb.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := lb.Unlock(ctx); !errors.Is(err, locks.ErrNotHeld) {
			t.Fatalf("second Unlock = %v, want ErrNotHeld", err)
		}
	})
}

// Ownership is a token: another process releases through a marshalled lease.
func TestSuiteReleaseFromAnotherProcess(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		first := f.client(t)
		lease, err := mutex(t, first, "report", locks.WithTTL(time.Minute)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := lease.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		other := f.client(t) // another process
		resumed, err := other.Resume(wire)
		if err != nil {
			t.Fatal(err)
		}
		if resumed.Token() != lease.Token() || resumed.Owner() != lease.Owner() {
			t.Fatalf("resumed lease %d/%s differs from %d/%s", resumed.Token(), resumed.Owner(), lease.Token(), lease.Owner())
		}
		if err := resumed.Extend(ctx, 0); err != nil {
			t.Fatalf("Extend from the other process: %v", err)
		}
		if err := resumed.Unlock(ctx); err != nil {
			t.Fatalf("Unlock from the other process: %v", err)
		}
		if info, _ := other.Inspect(ctx, "report"); info.Held {
			t.Fatalf("still held after the remote Unlock: %+v", info)
		}
		// A string that is not a lease is bad input, not a lock that is not held.
		if _, err := other.Resume("not a lease"); err == nil || errors.Is(err, locks.ErrNotHeld) || !strings.Contains(err.Error(), "not a marshalled lease") {
			t.Fatalf("Resume(garbage) = %v, want an error saying it is not a marshalled lease", err)
		}
	})
}

func TestSuiteReentrant(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		m := mutex(t, c, "tree", locks.WithReentrant())
		outer, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inner, err := m.TryLock(ctx)
		if err != nil {
			t.Fatalf("re-entering: %v", err)
		}
		if inner.Token() != outer.Token() {
			t.Errorf("a reentrant hold changed the fencing token: %d vs %d", inner.Token(), outer.Token())
		}
		if info, _ := c.Inspect(ctx, "tree"); info.HoldCount != 2 {
			t.Fatalf("hold count %d, want 2", info.HoldCount)
		}
		if _, err := mutex(t, c, "tree", locks.WithReentrant()).TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("another Mutex value (another owner) = %v, want ErrNotAcquired", err)
		}
		inner.Unlock(ctx)
		if info, _ := c.Inspect(ctx, "tree"); !info.Held || info.HoldCount != 1 {
			t.Fatalf("after one Unlock: %+v", info)
		}
		outer.Unlock(ctx)
		if info, _ := c.Inspect(ctx, "tree"); info.Held {
			t.Fatalf("after both Unlocks: %+v", info)
		}
	})
}

func TestSuiteInspect(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		l, err := mutex(t, c, "inv", locks.WithLabel("nightly-import"), locks.WithTTL(time.Minute)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Inspect(ctx, "inv")
		if err != nil {
			t.Fatal(err)
		}
		if !info.Held || info.Owner != l.Owner() || info.Token != l.Token() || info.Holder.Label != "nightly-import" || info.Holder.PID == 0 || info.TTL <= 0 {
			t.Fatalf("Inspect = %+v", info)
		}
		free, err := c.Inspect(ctx, "nothing-here")
		if err != nil || free.Held {
			t.Fatalf("Inspect of a free lock = %+v, %v", free, err)
		}
	})
}

// Lock waits on the release message: with a one-minute lease a missed
// wake-up would show as a timeout.
func TestSuiteWakeUp(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		// The holder is another process: its release must reach this waiter
		// through the release message, not the same-process handoff.
		c := f.client(t, locks.WithTTL(time.Minute))
		holder, err := mutex(t, f.client(t, locks.WithTTL(time.Minute)), "w").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := mutex(t, c, "w").Lock(ctx)
			if err == nil {
				err = l.Unlock(ctx)
			}
			got <- err
		}()
		waitFor(t, func() bool { return c.Stats().Contended >= 1 })
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("the waiter: %v", err)
		}
	})
}

// A release that lands between the waiter's failed attempt and its
// subscription must not be missed (the lease is a minute long).
func TestSuiteNoLostWakeUpWhenReleaseRacesSubscribe(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		var holder atomic.Pointer[locks.Lease]
		var fired atomic.Bool
		c := f.wrap(t, func(b locks.Backend) locks.Backend {
			return &hookedBackend{Backend: b, beforeSubscribe: func() {
				if l := holder.Load(); l != nil && fired.CompareAndSwap(false, true) {
					if err := l.Unlock(context.Background()); err != nil {
						t.Errorf("release inside the race window: %v", err)
					}
				}
			}}
		}, locks.WithTTL(time.Minute))
		// The holder is another process, so the waiter depends on the message.
		l, err := mutex(t, f.client(t, locks.WithTTL(time.Minute)), "race").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		holder.Store(l)
		l2, err := mutex(t, c, "race").Lock(ctx)
		if err != nil {
			t.Fatalf("the waiter missed the release that raced its subscription: %v", err)
		}
		if !fired.Load() {
			t.Fatal("the race was not injected")
		}
		l2.Unlock(ctx)
	})
}

// A Lock call's place in the queue dates from the call, also for the first
// waiter of a lock in its Client, whose grant channel is not subscribed yet:
// a waiter that arrives while that subscription is on its way queues behind
// it. (Before, that first attempt did not queue, and the call took its place
// only after subscribing, behind everyone who came meanwhile.) The
// subscription is held open until the later waiter has queued, and the
// release comes before it is confirmed, so the grant also has to be claimed
// by the attempt that follows the subscription.
func TestSuiteFirstWaiterQueuesFromItsCall(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		arrived, gate := make(chan struct{}), make(chan struct{})
		var once sync.Once
		first := f.wrap(t, func(b locks.Backend) locks.Backend {
			return &hookedBackend{Backend: b, beforeSubscribe: func() {
				once.Do(func() { close(arrived); <-gate })
			}}
		}, locks.WithTTL(time.Minute))
		later := f.client(t, locks.WithTTL(time.Minute))
		ops := f.client(t, locks.WithTTL(time.Minute))
		holder, err := mutex(t, ops, "place").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			who string
			l   *locks.Lease
			err error
		}
		got := make(chan result, 2)
		lock := func(who string, c *locks.Client) {
			l, err := mutex(t, c, "place").Lock(ctx)
			got <- result{who, l, err}
		}
		go lock("first", first)
		<-arrived // its first attempt came back; its subscription waits at the gate
		info, err := ops.Inspect(ctx, "place")
		if err != nil {
			t.Fatal(err)
		}
		go lock("later", later)
		waitFor(t, func() bool {
			now, err := ops.Inspect(ctx, "place")
			return err == nil && now.Waiters > info.Waiters
		})
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		close(gate)
		r := <-got
		if r.err != nil {
			t.Fatalf("%s: %v", r.who, r.err)
		}
		if r.who != "first" {
			t.Fatal("the waiter that called Lock later got the lock first: the first call's place dated from its subscription")
		}
		if err := r.l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if r = <-got; r.err != nil {
			t.Fatalf("%s: %v", r.who, r.err)
		}
		if err := r.l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The EventContended of a Lock that queued tells its place in the queue,
// as the server counted it: operators see how long the line is, and the
// bench checks first-come, first-served against it.
func TestSuiteContendedEventTellsThePlace(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		places := make(chan int64, 3)
		c := f.client(t, locks.WithTTL(time.Minute), locks.WithHook(func(e locks.Event) {
			if e.Kind == locks.EventContended {
				places <- e.Position
			}
		}))
		holder, err := mutex(t, f.client(t, locks.WithTTL(time.Minute)), "line").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *locks.Lease, 3)
		for want := int64(1); want <= 3; want++ {
			go func() {
				l, err := mutex(t, c, "line").Lock(ctx)
				if err != nil {
					t.Errorf("waiter %d: %v", want, err)
				}
				got <- l
			}()
			if place := <-places; place != want {
				t.Fatalf("waiter %d was told place %d", want, place)
			}
		}
		if _, err := mutex(t, c, "line").TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("TryLock on a held lock: %v", err)
		}
		if place := <-places; place != 0 {
			t.Fatalf("TryLock does not queue, yet was told place %d", place)
		}
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			l := <-got
			if l == nil {
				t.FailNow()
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

type hookedBackend struct {
	locks.Backend
	beforeSubscribe func()
}

func (h *hookedBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	h.beforeSubscribe()
	return h.Backend.Subscribe(ctx, channel, deliver)
}

func TestSuiteFairFIFO(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		c := f.client(t, locks.WithFair(2*time.Second), locks.WithTTL(time.Minute))
		holder, err := mutex(t, c, "fifo").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const waiters = 6
		order := make(chan int, waiters)
		var wg sync.WaitGroup
		for i := 0; i < waiters; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				l, err := mutex(t, c, "fifo").Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				order <- i
				l.Unlock(ctx)
			}(i)
			// The next waiter starts only once this one is queued.
			waitFor(t, func() bool { info, _ := c.Inspect(ctx, "fifo"); return info.Waiters == int64(i+1) })
		}
		holder.Unlock(ctx)
		wg.Wait()
		close(order)
		want := 0
		for got := range order {
			if got != want {
				t.Fatalf("waiter %d acquired in position %d: not FIFO", got, want)
			}
			want++
		}
		if want != waiters {
			t.Fatalf("%d of %d waiters acquired", want, waiters)
		}
	})
}

// A waiter that gives up leaves the queue, so it delays no one.
func TestSuiteCancelledWaiter(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		for _, fair := range []bool{false, true} {
			t.Run(fmt.Sprint("fair=", fair), func(t *testing.T) {
				opts := []locks.Option{locks.WithTTL(time.Minute)}
				if fair {
					opts = append(opts, locks.WithFair(0))
				}
				c := f.client(t, opts...)
				ctx := timeout(t, 10*time.Second)
				name := fmt.Sprint("busy-", fair)
				if _, err := mutex(t, c, name).Lock(ctx); err != nil {
					t.Fatal(err)
				}
				short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				_, err := mutex(t, c, name).Lock(short)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Lock past its deadline = %v, want errors.Is(err, context.DeadlineExceeded)", err)
				}
				if info, _ := c.Inspect(ctx, name); info.Waiters != 0 {
					t.Fatalf("the cancelled waiter is still queued: %+v", info)
				}
				if c.Stats().WaitFailures != 1 {
					t.Errorf("stats %+v: want one wait failure", c.Stats())
				}
			})
		}
	})
}

func TestSuiteWatchdogKeepsTheLock(t *testing.T) {
	mostlyWaits(t)
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		// On the simulator the watchdog's timers run on the virtual clock,
		// but a renewal's own timeout (what is left of the lease) is wall
		// time, the script's run on a busy machine included: a long
		// virtual lease costs no wall time and leaves each renewal seconds.
		// On wall time the lease is long enough that only a scheduling
		// delay above a second could make a renewal late.
		ttl, rounds := 2*time.Second, 3
		if f.virtual {
			ttl, rounds = 30*time.Second, 10
		}
		c := f.client(t)
		l, err := mutex(t, c, "long", locks.WithTTL(ttl), locks.WithWatchdog(0)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rounds; i++ { // rounds × TTL of server time
			if !f.virtual {
				time.Sleep(ttl / 2) // the watchdog runs on wall time
			}
			f.elapse(ttl / 2)
			if f.virtual {
				f.elapse(ttl / 2)
			}
			if l.Err() != nil {
				t.Fatalf("lost after %d TTLs: %v", i, l.Err())
			}
		}
		if _, err := mutex(t, c, "long").TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("after %d×TTL another owner got the lock: %v", rounds, err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		// No renewal after Unlock: the lock stays free.
		if f.virtual {
			f.elapse(ttl)
		} else {
			time.Sleep(ttl / 2)
		}
		if info, _ := c.Inspect(ctx, "long"); info.Held {
			t.Fatalf("renewed after Unlock: %+v", info)
		}
	})
}

// Waiters queue in Redis and each release hands the lock to the oldest:
// they get it in the order they queued, each with a new token.
func TestSuiteLocalHandoff(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t, locks.WithTTL(time.Minute))
		holder, err := mutex(t, c, "hand").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const waiters = 4
		type got struct {
			i     int
			token int64
		}
		order := make(chan got, waiters)
		var wg sync.WaitGroup
		for i := 0; i < waiters; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				l, err := mutex(t, c, "hand").Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				order <- got{i, l.Token()}
				l.Unlock(ctx)
			}(i)
			waitFor(t, func() bool { info, _ := c.Inspect(ctx, "hand"); return info.Waiters >= int64(i+1) })
		}
		holder.Unlock(ctx)
		wg.Wait()
		close(order)
		want, last := 0, holder.Token()
		for g := range order {
			if g.i != want || g.token <= last {
				t.Fatalf("waiter %d (token %d) came in position %d after token %d", g.i, g.token, want, last)
			}
			want, last = want+1, g.token
		}
		if info, _ := c.Inspect(ctx, "hand"); info.Held {
			t.Fatalf("still held after the last handoff: %+v", info)
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	poll(t, "condition", 10*time.Second, nil, cond)
}

// poll checks cond every 2ms until it holds, running step (when set) before
// each pause, and fails the test once bound has passed with what not reached.
func poll(t *testing.T, what string, bound time.Duration, step func(), cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s not reached in %v", what, bound)
		}
		if step != nil {
			step()
		}
		time.Sleep(2 * time.Millisecond)
	}
}
