package locks_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/keyslot"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// Nothing a caller passes can stall the shared Redis, hold a call past its
// context, or crash the process. Every public call of locks runs against
// real redis-servers with hostile arguments (every limit + 1, values far
// beyond, forged leases) and with the largest values the limits allow,
// while a second connection PINGs the server every few milliseconds. The
// test judges the work the calls make the server do, not the time they
// take, so a loaded machine cannot fail it:
//   - no script call does more work than maxRefUnits runs of a reference
//     script (refScript: 100k Lua additions, about 1.5 ms of CPU on a quiet
//     machine). SLOWLOG (threshold 1 ms) finds the calls over 10 ms of wall
//     time; for each, the CPU time the server's main thread used in all the
//     time the call can have spanned (INFO cpu, read after every call) is
//     compared with the CPU time the reference takes on that server at that
//     moment, measured beside it, so the machine's load slows both alike;
//   - a refused call sends no command (a go-redis hook counts the commands
//     sent on the call's context): the client refuses it before any work;
//   - no call that reaches a server returns later than its context's
//     deadline plus a round trip plus lateSlack: a call that ignores its
//     context outlives it by a lease's or a waiter's TTL (hours here) or by
//     a cleanup's own 5 s bound, which the slack tells from a scheduler's
//     delay;
//   - nothing panicked;
//   - no PING waited over a second (the longest wait is logged: CI load
//     must not make the test flaky, a stall must fail it).
func TestHostileArgumentsCannotStallTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three redis-servers")
	}
	srv := redistest.Standalone(t)
	others := []*redistest.Server{redistest.Standalone(t), redistest.Standalone(t)}
	// Every server holds every script before the calls, as a server in
	// use does: otherwise the first call's NOSCRIPT makes the client load
	// the whole set in the background (evalsha.WithCompanions), and those
	// compiles would count as the work of the call beside them.
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]*redistest.Server{srv}, others...) {
		if err := evalsha.Load(context.Background(), s.Client(), reg); err != nil {
			t.Fatal(err)
		}
	}
	h := newHostile(t, append([]*redistest.Server{srv}, others...))
	defer h.finish()

	rc := srv.Client()
	rc.AddHook(sentHook{})
	c, err := locks.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	maxName := strings.Repeat("\xff", locks.MaxNameBytes/2) + strings.Repeat("n", locks.MaxNameBytes/2) // not UTF-8
	overName := strings.Repeat("n", locks.MaxNameBytes+1)
	hugeName := strings.Repeat("n", 16<<20)
	// named is a name of MaxNameBytes that ends in suffix.
	named := func(suffix string) string { return maxName[:locks.MaxNameBytes-len(suffix)] + suffix }
	maxOwner := strings.Repeat("o", locks.MaxOwnerBytes)
	maxLabel := strings.Repeat("l", locks.MaxLabelBytes)

	t.Run("refused", func(t *testing.T) {
		for _, name := range []string{overName, hugeName} {
			h.refused(t, "Mutex", func(context.Context) error { _, err := c.Mutex(name); return err })
			h.refused(t, "RWMutex", func(context.Context) error { _, err := c.RWMutex(name); return err })
			h.refused(t, "Semaphore", func(context.Context) error { _, err := c.Semaphore(name, 2); return err })
			h.refused(t, "MultiLock", func(context.Context) error { _, err := c.MultiLock([]string{"a", name}); return err })
			h.refused(t, "Inspect", func(ctx context.Context) error { _, err := c.Inspect(ctx, name); return err })
			h.refused(t, "ForceUnlock", func(ctx context.Context) error { _, err := c.ForceUnlock(ctx, name); return err })
			h.refused(t, "Resume", func(context.Context) error {
				_, err := c.Resume(`{"name":"` + name + `","owner":"o","token":1,"ttl_ms":1000}`)
				return err
			})
		}
		sem, err := c.Semaphore("hostile-sem", 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{locks.MaxPermits + 1, 1 << 60, math.MaxInt64, 0, -1} {
			h.refused(t, fmt.Sprintf("Semaphore(%d)", n), func(context.Context) error { _, err := c.Semaphore("s", n); return err })
			h.refused(t, fmt.Sprintf("Acquire(%d)", n), func(ctx context.Context) error { _, err := sem.Acquire(ctx, n); return err })
			h.refused(t, fmt.Sprintf("TryAcquire(%d)", n), func(ctx context.Context) error { _, err := sem.TryAcquire(ctx, n); return err })
			h.refused(t, fmt.Sprintf("SetPermits(%d)", n), func(ctx context.Context) error { return sem.SetPermits(ctx, n) })
		}
		info, err := c.Inspect(context.Background(), "hostile-sem")
		if err != nil || info.Limit != 0 {
			t.Errorf("Inspect after refused SetPermits: limit %d, %v; want none stored", info.Limit, err)
		}
		for i, o := range []locks.Option{
			locks.WithTTL(locks.MaxTTL + 1), locks.WithTTL(math.MaxInt64),
			locks.WithWaiterTTL(locks.MaxWaiterTTL + 1), locks.WithWaiterTTL(math.MaxInt64), locks.WithFair(math.MaxInt64),
			locks.WithOwner(maxOwner + "o"), locks.WithLabel(maxLabel + "l"),
		} {
			h.refused(t, fmt.Sprintf("option %d", i), func(context.Context) error { _, err := c.Mutex("m", o); return err })
			h.refused(t, fmt.Sprintf("client option %d", i), func(context.Context) error { _, err := locks.New(rc, o); return err })
		}
		many := make([]string, locks.MaxMultiLockNames+1)
		for i := range many {
			many[i] = fmt.Sprintf("n%d", i)
		}
		h.refused(t, "MultiLock over MaxMultiLockNames", func(context.Context) error { _, err := c.MultiLock(many); return err })
		h.refused(t, "MultiLock with a duplicate", func(context.Context) error { _, err := c.MultiLock([]string{"a", "b", "a"}); return err })
		for _, forged := range []string{
			`{"name":"s","owner":"o","token":1,"ttl_ms":1000,"kind":"permits","permits":1152921504606846976}`,
			`{"name":"s","owner":"o","token":1,"ttl_ms":1000,"kind":"permits","permits":-1}`,
			`{"name":"s","owner":"o","token":1,"ttl_ms":9223372036854775807}`,
			`{"name":"s","owner":"o","token":1,"ttl_ms":1000,"kind":"read","permits":3}`,
			`{"name":"s","owner":"` + strings.Repeat("o", 1<<20) + `","token":1,"ttl_ms":1000}`,
			`{"name_b64":"` + base64.StdEncoding.EncodeToString([]byte(overName)) + `","owner":"o","token":1,"ttl_ms":1000}`,
		} {
			h.refused(t, fmt.Sprintf("Resume(%.50s…)", forged), func(context.Context) error { _, err := c.Resume(forged); return err })
		}
		m, _ := c.Mutex("hostile-extend")
		l := h.ok(t, "Lock", func(ctx context.Context) (*locks.Lease, error) { return m.Lock(ctx) })
		if l != nil {
			h.refused(t, "Extend(MaxTTL+1)", func(ctx context.Context) error { return l.Extend(ctx, locks.MaxTTL+1) })
			h.refused(t, "Extend(MaxInt64)", func(ctx context.Context) error { return l.Extend(ctx, math.MaxInt64) })
			h.call(t, "Unlock", func(ctx context.Context) error { return l.Unlock(ctx) })
		}
	})

	t.Run("mutex at the limits", func(t *testing.T) {
		opts := []locks.Option{locks.WithTTL(locks.MaxTTL), locks.WithWaiterTTL(locks.MaxWaiterTTL), locks.WithLabel(maxLabel)}
		m, err := c.Mutex(maxName, append(opts, locks.WithOwner(maxOwner))...)
		if err != nil {
			t.Fatal(err)
		}
		l := h.ok(t, "Lock", func(ctx context.Context) (*locks.Lease, error) { return m.Lock(ctx) })
		if l == nil {
			return
		}
		h.call(t, "Extend(MaxTTL)", func(ctx context.Context) error { return l.Extend(ctx, locks.MaxTTL) })
		h.call(t, "Inspect", func(ctx context.Context) error {
			info, err := c.Inspect(ctx, maxName)
			if err == nil && (!info.Held || info.Owner != maxOwner || info.Holder.Label != maxLabel) {
				err = fmt.Errorf("held %v by a %d-byte owner labelled with %d bytes, want the holder", info.Held, len(info.Owner), len(info.Holder.Label))
			}
			return err
		})
		// A waiter with the longest waiter TTL gives up; the release then
		// must not hand it the lock.
		waiter, _ := c.Mutex(maxName, opts...)
		h.gaveUp(t, "Lock of a held lock", func(ctx context.Context) error { _, err := waiter.Lock(ctx); return err })
		fair, _ := c.Mutex(maxName, locks.WithFair(locks.MaxWaiterTTL), locks.WithTTL(locks.MaxTTL))
		h.gaveUp(t, "fair Lock of a held lock", func(ctx context.Context) error { _, err := fair.Lock(ctx); return err })
		h.call(t, "Marshal, Resume, Unlock", func(ctx context.Context) error { return resumeAndUnlock(ctx, c, l) })
		next, _ := c.Mutex(maxName)
		l2 := h.ok(t, "TryLock after the release", func(ctx context.Context) (*locks.Lease, error) { return next.TryLock(ctx) })
		h.call(t, "ForceUnlock", func(ctx context.Context) error {
			if removed, err := c.ForceUnlock(ctx, maxName, locks.WithGrace(0)); err != nil || !removed {
				return fmt.Errorf("removed %v, %v; want the holder removed", removed, err)
			}
			return nil
		})
		if l2 != nil {
			h.call(t, "Unlock of a forced lease", func(ctx context.Context) error {
				if err := l2.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
					return fmt.Errorf("%v, want ErrLockLost", err)
				}
				return nil
			})
		}
	})

	t.Run("rwmutex at the limits", func(t *testing.T) {
		opts := []locks.Option{locks.WithTTL(locks.MaxTTL), locks.WithWaiterTTL(locks.MaxWaiterTTL), locks.WithLabel(maxLabel), locks.WithOwner(maxOwner)}
		rw, err := c.RWMutex(named("rw"), opts...)
		if err != nil {
			t.Fatal(err)
		}
		r1 := h.ok(t, "RLock", func(ctx context.Context) (*locks.Lease, error) { return rw.RLock(ctx) })
		r2 := h.ok(t, "TryRLock", func(ctx context.Context) (*locks.Lease, error) { return rw.TryRLock(ctx) })
		h.gaveUp(t, "Lock while read", func(ctx context.Context) error { _, err := rw.Lock(ctx); return err })
		h.call(t, "TryLock while read", func(ctx context.Context) error {
			if _, err := rw.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
				return fmt.Errorf("%v, want ErrNotAcquired", err)
			}
			return nil
		})
		for _, r := range []*locks.Lease{r1, r2} {
			if r != nil {
				h.call(t, "Extend and Unlock a read hold", func(ctx context.Context) error {
					if err := r.Extend(ctx, locks.MaxTTL); err != nil {
						return err
					}
					return r.Unlock(ctx)
				})
			}
		}
		w := h.ok(t, "TryLock", func(ctx context.Context) (*locks.Lease, error) { return rw.TryLock(ctx) })
		if w != nil {
			h.call(t, "Unlock", func(ctx context.Context) error { return w.Unlock(ctx) })
		}
	})

	t.Run("semaphore at the limits", func(t *testing.T) {
		name := named("sem")
		opts := []locks.Option{locks.WithTTL(locks.MaxTTL), locks.WithWaiterTTL(locks.MaxWaiterTTL), locks.WithLabel(maxLabel)}
		sem, err := c.Semaphore(name, locks.MaxPermits, opts...)
		if err != nil {
			t.Fatal(err)
		}
		h.call(t, "SetPermits(MaxPermits)", func(ctx context.Context) error { return sem.SetPermits(ctx, locks.MaxPermits) })
		all := h.ok(t, "Acquire(MaxPermits)", func(ctx context.Context) (*locks.Lease, error) { return sem.Acquire(ctx, locks.MaxPermits) })
		if all == nil {
			return
		}
		h.call(t, "Extend(MaxTTL)", func(ctx context.Context) error { return all.Extend(ctx, locks.MaxTTL) })
		h.call(t, "Inspect", func(ctx context.Context) error {
			info, err := c.Inspect(ctx, name)
			if err == nil && (info.Limit != locks.MaxPermits || len(info.Permits) != 1 || info.Permits[0].Permits != locks.MaxPermits) {
				err = fmt.Errorf("limit %d, holders %v; want one holder of all %d permits", info.Limit, info.Permits, locks.MaxPermits)
			}
			return err
		})
		h.gaveUp(t, "Acquire(MaxPermits) of a full semaphore", func(ctx context.Context) error { _, err := sem.Acquire(ctx, locks.MaxPermits); return err })
		h.call(t, "TryAcquire(1) of a full semaphore", func(ctx context.Context) error {
			if _, err := sem.TryAcquire(ctx, 1); !errors.Is(err, locks.ErrNotAcquired) {
				return fmt.Errorf("%v, want ErrNotAcquired", err)
			}
			return nil
		})
		// The waiter queues now, and the release hands it every permit.
		got := make(chan *locks.Lease, 1)
		go func() {
			l, _ := h.okNoCheck("Acquire(MaxPermits), handed over", 10*time.Second, func(ctx context.Context) (*locks.Lease, error) { return sem.Acquire(ctx, locks.MaxPermits) })
			got <- l
		}()
		h.waitQueued(t, c, name)
		h.call(t, "Marshal, Resume, Unlock of MaxPermits permits", func(ctx context.Context) error { return resumeAndUnlock(ctx, c, all) })
		handed := <-got
		if handed == nil {
			t.Fatal("the queued Acquire(MaxPermits) got nothing")
		}
		h.call(t, "SetPermits(1) below the holder", func(ctx context.Context) error { return sem.SetPermits(ctx, 1) })
		h.call(t, "Unlock of the handed-over permits", func(ctx context.Context) error { return handed.Unlock(ctx) })
		h.call(t, "Acquire(MaxPermits) above the count", func(ctx context.Context) error {
			if _, err := sem.Acquire(ctx, locks.MaxPermits); err == nil || !strings.Contains(err.Error(), "SetPermits") {
				return fmt.Errorf("%v, want a refusal that says to raise the count", err)
			}
			return nil
		})
		// Many holders of one permit each: a recount walks them all.
		// 250 keep the walk over them (Inspect, ForceUnlock, a recount) well
		// under the 10 ms bound on a loaded CI machine; each holder costs
		// about 10 µs of server time with a 1 KiB name.
		const holders = 250
		h.call(t, "SetPermits(holders)", func(ctx context.Context) error { return sem.SetPermits(ctx, holders) })
		var ones []*locks.Lease
		for range holders {
			if l := h.ok(t, "TryAcquire(1)", func(ctx context.Context) (*locks.Lease, error) { return sem.TryAcquire(ctx, 1) }); l != nil {
				ones = append(ones, l)
			}
		}
		h.call(t, "Inspect of many holders", func(ctx context.Context) error {
			info, err := c.Inspect(ctx, name)
			if err == nil && len(info.Permits) != len(ones) {
				err = fmt.Errorf("%d holders, want %d", len(info.Permits), len(ones))
			}
			return err
		})
		h.gaveUp(t, "Acquire(1) of a full semaphore", func(ctx context.Context) error { _, err := sem.Acquire(ctx, 1); return err })
		h.call(t, "ForceUnlock of many holders", func(ctx context.Context) error {
			removed, err := c.ForceUnlock(ctx, name, locks.WithGrace(0))
			if err == nil && !removed {
				err = errors.New("removed nothing")
			}
			return err
		})
	})

	t.Run("multilock at the limits", func(t *testing.T) {
		spread := make([]string, locks.MaxMultiLockNames)
		for i := range spread {
			spread[i] = fmt.Sprintf("%s%04d", maxName[:locks.MaxNameBytes-4], i)
		}
		oneSlot := oneSlotNames(maxName[:locks.MaxNameBytes-8], locks.MaxMultiLockNames)
		if len(oneSlot) != locks.MaxMultiLockNames || keyslot.Of("{"+oneSlot[0]+"}") != keyslot.Of("{"+oneSlot[len(oneSlot)-1]+"}") {
			t.Fatalf("%d names, not all in one slot", len(oneSlot))
		}
		for _, set := range []struct {
			what  string
			names []string
		}{{"names in many slots", spread}, {"names in one slot", oneSlot}} {
			ml, err := c.MultiLock(set.names, locks.WithTTL(locks.MaxTTL), locks.WithWaiterTTL(locks.MaxWaiterTTL), locks.WithLabel(maxLabel))
			if err != nil {
				t.Fatal(err)
			}
			var all *locks.MultiLease
			h.call(t, "Lock, "+set.what, func(ctx context.Context) (err error) { all, err = ml.Lock(ctx); return err })
			if all == nil {
				continue
			}
			h.call(t, "TryLock of held, "+set.what, func(ctx context.Context) error {
				if _, err := ml.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
					return fmt.Errorf("%v, want ErrNotAcquired", err)
				}
				return nil
			})
			h.gaveUp(t, "Lock of held, "+set.what, func(ctx context.Context) error { _, err := ml.Lock(ctx); return err })
			h.call(t, "Unlock, "+set.what, func(ctx context.Context) error { return all.Unlock(ctx) })
			// The last name held elsewhere: Lock takes all the others, waits
			// and gives them all back when its context ends.
			last, _ := c.Mutex(ml.Names()[len(set.names)-1])
			blocker := h.ok(t, "TryLock of the last name", func(ctx context.Context) (*locks.Lease, error) { return last.TryLock(ctx) })
			h.gaveUp(t, "Lock blocked at its last name, "+set.what, func(ctx context.Context) error { _, err := ml.Lock(ctx); return err })
			if blocker != nil {
				h.call(t, "Unlock of the last name", func(ctx context.Context) error { return blocker.Unlock(ctx) })
			}
			h.call(t, "TryLock after, "+set.what, func(ctx context.Context) error {
				l, err := ml.TryLock(ctx)
				if err != nil {
					return err
				}
				return l.Unlock(ctx)
			})
		}
	})

	t.Run("quorum at the limits", func(t *testing.T) {
		clients := []redis.UniversalClient{rc, others[0].Client(), others[1].Client()}
		for _, qc := range clients[1:] {
			qc.AddHook(sentHook{})
		}
		q, err := locks.NewQuorum(clients, locks.WithMaxTTL(locks.MaxTTL), locks.WithTTL(locks.MaxTTL), locks.WithLabel(maxLabel))
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		// The servers were started for this test: none has been up for a
		// MaxTTL, which a quorum Client otherwise waits for.
		locks.CountEveryServer(q)
		m, err := q.Mutex(named("q"), locks.WithOwner(maxOwner))
		if err != nil {
			t.Fatal(err)
		}
		l := h.ok(t, "quorum Lock", func(ctx context.Context) (*locks.Lease, error) { return m.Lock(ctx) })
		if l == nil {
			return
		}
		h.call(t, "quorum Extend(MaxTTL)", func(ctx context.Context) error { return l.Extend(ctx, locks.MaxTTL) })
		h.call(t, "quorum Inspect", func(ctx context.Context) error { _, err := q.Inspect(ctx, named("q")); return err })
		other, _ := q.Mutex(named("q"))
		h.gaveUp(t, "quorum Lock of a held lock", func(ctx context.Context) error { _, err := other.Lock(ctx); return err })
		h.call(t, "quorum Marshal, Resume, Unlock", func(ctx context.Context) error { return resumeAndUnlock(ctx, q, l) })
		h.refused(t, "quorum Mutex with an over-long name", func(context.Context) error { _, err := q.Mutex(overName); return err })
		h.refused(t, "quorum Inspect with an over-long name", func(ctx context.Context) error { _, err := q.Inspect(ctx, hugeName); return err })
	})

	t.Run("replicas that never come", func(t *testing.T) {
		m, err := c.Mutex("hostile-replicas", locks.WithReplicas(1<<30, locks.MaxTTL))
		if err != nil {
			t.Fatal(err)
		}
		h.gaveUp(t, "Lock waiting for 2^30 replicas", func(ctx context.Context) error { _, err := m.Lock(ctx); return err })
		h.gaveUp(t, "TryLock waiting for 2^30 replicas", func(ctx context.Context) error { _, err := m.TryLock(ctx); return err })
		if info, err := c.Inspect(context.Background(), "hostile-replicas"); err != nil || info.Held {
			t.Errorf("after the calls gave up: held %v, %v; want the lock free", info.Held, err)
		}
	})
}

// callTimeout is the context of every call the hostile test makes: long
// enough for the largest allowed call on a loaded machine, short enough
// that the calls that wait give up soon.
const callTimeout = 300 * time.Millisecond

// lateSlack is how long after its context's deadline (and a round trip) a
// call may return: far above what a loaded machine's scheduler delays a
// goroutine by (under 0.6 s at load 10 on 2 cores), far below what a call
// that ignored its context would take (a cleanup's 5 s bound, a TTL).
const lateSlack = 2 * time.Second

// refScript is the reference work a script call is measured against: a
// fixed loop, about 1.5 ms of a server's CPU on a quiet machine. Its first
// line tells its SLOWLOG entries from the calls under test.
const refScript = "-- hostile reference\nlocal x = 0 for i = 1, 100000 do x = x + i % 7 end return x"

// maxRefUnits bounds a script call's work: the CPU time its server's main
// thread used while the call ran may not reach maxRefUnits times the
// reference's. The largest allowed calls (a walk over 250 semaphore
// holders with 1 KiB names) use 2 to 4 units; a script that loops or scans
// over what a caller sized uses hundreds.
const maxRefUnits = 10

// refRuns is how many times a reference measurement runs refScript; the
// largest run counts, which favours the call under judgement.
const refRuns = 3

// hostile runs calls against real servers and watches them: each call's
// time against its context, panics, error sizes, the servers' SLOWLOG and
// a PING prober's longest wait.
type hostile struct {
	t       *testing.T
	servers []*redistest.Server
	admin   []*redis.Client
	rtt     time.Duration // the longest of a few PINGs before the calls

	stop    chan struct{}
	stopped sync.WaitGroup

	// checkMu orders the SLOWLOG checks; checks[i] are server i's.
	checkMu sync.Mutex
	checks  [][]slowCheck
	// ref[i] is the largest CPU time refScript took on server i so far;
	// refSpent[i] is the CPU time all its runs there took, which the checks
	// leave out of the time they judge.
	ref       []time.Duration
	refSpent  []time.Duration
	maxUnits  float64 // the most work a call over 10 ms did, in reference units
	longest   time.Duration
	perScript map[string]time.Duration // each script's longest call over 1 ms
	excused   int

	mu      sync.Mutex
	maxPing time.Duration
	pings   int
	calls   int
	maxLate time.Duration // the latest a call returned after its context's deadline
}

func newHostile(t *testing.T, servers []*redistest.Server) *hostile {
	h := &hostile{t: t, servers: servers, stop: make(chan struct{}), perScript: map[string]time.Duration{}}
	ctx := context.Background()
	for _, s := range servers {
		a := s.Client()
		for _, kv := range [][2]string{{"slowlog-log-slower-than", "1000"}, {"slowlog-max-len", "4096"}} {
			if err := a.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.SlowLogReset(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		h.admin = append(h.admin, a)
		h.checks = append(h.checks, nil)
		h.ref = append(h.ref, 0)
		h.refSpent = append(h.refSpent, 0)
	}
	for i := range servers {
		if err := h.measureRef(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	h.check(t)
	for range 10 {
		start := time.Now()
		if err := h.admin[0].Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		h.rtt = max(h.rtt, time.Since(start))
	}
	// The prober has a connection of its own.
	prober := servers[0].Client(func(o *redis.Options) { o.PoolSize = 1 })
	h.stopped.Add(1)
	go func() {
		defer h.stopped.Done()
		for {
			select {
			case <-h.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			start := time.Now()
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := prober.Ping(pctx).Err()
			cancel()
			wait := time.Since(start)
			h.mu.Lock()
			h.pings++
			h.maxPing = max(h.maxPing, wait)
			h.mu.Unlock()
			if err != nil {
				t.Errorf("PING: %v", err)
				return
			}
		}
	}()
	return h
}

// finish stops the prober and checks the servers' SLOWLOG.
func (h *hostile) finish() {
	t := h.t
	close(h.stop)
	h.stopped.Wait()
	t.Logf("%d PINGs, the longest waited %v (a round trip before the calls: %v)", h.pings, h.maxPing, h.rtt)
	t.Logf("%d calls on %v contexts, the latest returned %v after its deadline", h.calls, callTimeout, max(h.maxLate, 0))
	if h.maxPing > time.Second {
		t.Errorf("a PING waited %v: the server stalled", h.maxPing)
	}
	h.check(t)
	var scripts []string
	for id, took := range h.perScript {
		scripts = append(scripts, fmt.Sprintf("%s %v", id, took))
	}
	sort.Strings(scripts)
	t.Logf("the longest script call: %v of wall time; %d calls over 10 ms, the most work one did: %.1f reference units (bound %d, a reference run took up to %v); per script over 1ms: %s",
		h.longest, h.excused, h.maxUnits, maxRefUnits, h.ref, strings.Join(scripts, ", "))
}

// measureRef runs refScript refRuns times on server i and keeps the
// largest CPU time one run took in h.ref[i]. It reads INFO cpu around each
// run, so the PINGs of the prober in between count too, against the call.
func (h *hostile) measureRef(ctx context.Context, i int) error {
	a := h.admin[i]
	for range refRuns {
		before, err := h.rawCPU(ctx, i)
		if err != nil {
			return err
		}
		if err := a.Eval(ctx, refScript, nil).Err(); err != nil {
			return fmt.Errorf("the reference script: %w", err)
		}
		after, err := h.rawCPU(ctx, i)
		if err != nil {
			return err
		}
		h.ref[i] = max(h.ref[i], after-before)
		h.refSpent[i] += after - before
	}
	return nil
}

// rawCPU is server i's main thread's CPU time.
func (h *hostile) rawCPU(ctx context.Context, i int) (time.Duration, error) {
	info, err := h.admin[i].Info(ctx, "cpu").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO cpu: %w", err)
	}
	return mainThreadCPU(info)
}

// sentKey marks the context of a call that must be refused: sentHook
// counts the commands sent on it (or on a context made from it), so the
// count is the call's own, whatever else the clients do meanwhile (a
// quorum's slower servers, the background load of the scripts).
type sentKey struct{}

// sentHook counts the commands a client sends on a context marked with
// sentKey. The test adds it to every client it gives a locks Client.
type sentHook struct{}

func (sentHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (sentHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n, ok := ctx.Value(sentKey{}).(*atomic.Int64); ok {
			n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (sentHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if n, ok := ctx.Value(sentKey{}).(*atomic.Int64); ok {
			n.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// slowCheck is one look at a server: when, its main thread's CPU time
// until then (less the reference runs'), and the last SLOWLOG entry seen.
type slowCheck struct {
	at     time.Time
	cpu    time.Duration
	lastID int64
}

// check reads every server's new SLOWLOG entries and its main thread's CPU
// time. A script call over 10 ms of wall time fails the test when the CPU
// time the server's main thread used in every period the call can have
// spanned reaches maxRefUnits times the reference's, measured again on
// that server then: the call ended after the previous check and began at
// most its SLOWLOG duration before that.
func (h *hostile) check(t *testing.T) {
	t.Helper()
	for _, f := range h.slowCalls(t) {
		t.Error(f)
	}
}

// slowCalls is check's work: it returns the failures.
func (h *hostile) slowCalls(t *testing.T) (failures []string) {
	t.Helper()
	h.checkMu.Lock()
	defer h.checkMu.Unlock()
	ctx := context.Background()
	for i, a := range h.admin {
		cpu, err := h.rawCPU(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		cpu -= h.refSpent[i] // the reference runs are not the calls' work
		entries, err := a.Do(ctx, "SLOWLOG", "GET", -1).Slice()
		if err != nil {
			t.Fatalf("SLOWLOG GET: %v", err)
		}
		logs, err := parseSlowlog(entries)
		if err != nil {
			t.Fatal(err)
		}
		now := slowCheck{at: time.Now(), cpu: cpu, lastID: -1}
		history := h.checks[i]
		if len(history) > 0 {
			now.lastID = history[len(history)-1].lastID
		}
		for _, e := range logs {
			now.lastID = max(now.lastID, e.id)
		}
		h.checks[i] = append(history, now)
		if len(history) == 0 {
			continue // the first look: SLOWLOG was just reset
		}
		previous := history[len(history)-1]
		for _, e := range logs {
			if e.id <= previous.lastID || e.script == "" || e.script == "reference" {
				continue
			}
			h.longest = max(h.longest, e.took)
			h.perScript[e.script] = max(h.perScript[e.script], e.took)
			if e.took <= 10*time.Millisecond {
				continue
			}
			// The CPU time since the last check at or before the call's
			// earliest possible start.
			began := previous.at.Add(-e.took)
			base := history[0].cpu
			for _, c := range history {
				if !c.at.After(began) {
					base = c.cpu
				}
			}
			used := cpu - base
			units := float64(used) / float64(h.ref[i])
			if units >= maxRefUnits {
				// Measure the reference again at today's load before
				// judging: the machine may have slowed since.
				if err := h.measureRef(ctx, i); err != nil {
					t.Fatal(err)
				}
				units = float64(used) / float64(h.ref[i])
			}
			h.maxUnits = max(h.maxUnits, units)
			if units >= maxRefUnits {
				failures = append(failures, fmt.Sprintf("server %d: a call of %s did the work of %.1f reference runs (bound %d): %v of wall time, %v of the server's CPU while a reference run took %v: %s",
					i+1, e.script, units, maxRefUnits, e.took, used, h.ref[i], e.command))
			} else {
				h.excused++
				t.Logf("server %d: a call of %s took %v of wall time but did the work of %.1f reference runs (%v of CPU, a reference run %v): %s", i+1, e.script, e.took, units, used, h.ref[i], e.command)
			}
		}
	}
	return failures
}

// mainThreadCPU reads the user and system CPU time of the server's main
// thread from INFO cpu.
func mainThreadCPU(info string) (time.Duration, error) {
	var total time.Duration
	found := 0
	for _, line := range strings.Split(info, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "used_cpu_user_main_thread" && name != "used_cpu_sys_main_thread") {
			continue
		}
		seconds, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu %s: %w", line, err)
		}
		total += time.Duration(seconds * float64(time.Second))
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("INFO cpu without the main thread's user and system time: %q", info)
	}
	return total, nil
}

// slowEntry is one SLOWLOG entry.
type slowEntry struct {
	id      int64
	took    time.Duration
	command string
	script  string // the script's name@version, or "?" for an unknown one; "" when not a script call
}

// scriptHeader finds a script's name and version in the start of its source.
var scriptHeader = regexp.MustCompile(`-- name: (\S+)\s+-- version: (\d+)`)

// scriptsBySHA maps every embedded script's SHA1 to its name@version.
var scriptsBySHA = sync.OnceValues(func() (map[string]string, error) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		return nil, err
	}
	bySHA := map[string]string{}
	for _, s := range reg.Scripts() {
		bySHA[s.SHA1] = s.ID()
		if s.LegacySHA1() != "" {
			bySHA[s.LegacySHA1()] = s.ID()
		}
	}
	return bySHA, nil
})

func parseSlowlog(entries []any) ([]slowEntry, error) {
	bySHA, err := scriptsBySHA()
	if err != nil {
		return nil, err
	}
	var out []slowEntry
	for _, e := range entries {
		fields, ok := e.([]any)
		if !ok || len(fields) < 4 {
			return nil, fmt.Errorf("SLOWLOG entry %v", e)
		}
		id, _ := fields[0].(int64)
		us, _ := fields[2].(int64)
		args, _ := fields[3].([]any)
		var words []string
		for _, a := range args {
			s := fmt.Sprint(a)
			if len(s) > 40 {
				s = s[:40] + "…"
			}
			words = append(words, s)
		}
		cmd := ""
		if len(words) > 0 {
			cmd = strings.ToLower(words[0])
		}
		script := ""
		if strings.HasPrefix(cmd, "eval") || strings.HasPrefix(cmd, "fcall") {
			script = "?"
			if len(args) > 1 {
				body := fmt.Sprint(args[1])
				if body == refScript {
					script = "reference"
				} else if id, ok := bySHA[body]; ok {
					script = id
				} else if m := scriptHeader.FindStringSubmatch(body); m != nil {
					script = m[1] + "@" + m[2]
				}
			}
		}
		out = append(out, slowEntry{id: id, took: time.Duration(us) * time.Microsecond, command: strings.Join(words, " "), script: script})
	}
	return out, nil
}

// run makes one call on a context of callTimeout and checks that it
// neither panicked nor outlived its context by more than one round trip
// plus lateSlack, and that its error text is short.
func (h *hostile) run(t *testing.T, what string, timeout time.Duration, call func(context.Context) error) (err error) {
	t.Helper()
	return h.runJudged(t, context.Background(), what, timeout, true, call)
}

// runJudged is run; late says whether to judge when the call returned (a
// refusal is judged by the commands it sent instead), base is the context
// the call's is made from.
func (h *hostile) runJudged(t *testing.T, base context.Context, what string, timeout time.Duration, late bool, call func(context.Context) error) (err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(base, timeout)
	defer cancel()
	start := time.Now()
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panicked: %v", p)
				t.Errorf("%s panicked: %v", what, p)
			}
		}()
		err = call(ctx)
	}()
	after := time.Since(start) - timeout
	h.check(t)
	h.mu.Lock()
	h.calls++
	if late {
		h.maxLate = max(h.maxLate, after)
	}
	h.mu.Unlock()
	if late && after > h.rtt+lateSlack {
		t.Errorf("%s returned %v after its context's deadline (a round trip: %v): %v", what, after, h.rtt, err)
	}
	if err != nil && len(err.Error()) > 2*maxErrorText {
		t.Errorf("%s: a %d-byte error text: %.200s…", what, len(err.Error()), err)
	}
	return err
}

// refused expects call to be refused as an invalid argument, before it
// sends any command to a server (counted by sentHook on the call's
// context). Its time is not judged: a refusal of a 16 MiB argument reads
// it in the client, which a loaded machine slows.
func (h *hostile) refused(t *testing.T, what string, call func(context.Context) error) {
	t.Helper()
	var sent atomic.Int64
	err := h.runJudged(t, context.WithValue(context.Background(), sentKey{}, &sent), what, callTimeout, false, call)
	if !errors.Is(err, locks.ErrInvalidArgument) {
		t.Errorf("%s: %v, want a refusal (ErrInvalidArgument)", what, err)
	}
	if n := sent.Load(); n > 0 {
		t.Errorf("%s: refused, but it sent %d commands first; a refusal must cost the servers nothing", what, n)
	}
}

// call expects call to succeed.
func (h *hostile) call(t *testing.T, what string, call func(context.Context) error) {
	t.Helper()
	if err := h.run(t, what, callTimeout, call); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// ok expects a lease.
func (h *hostile) ok(t *testing.T, what string, call func(context.Context) (*locks.Lease, error)) *locks.Lease {
	t.Helper()
	var l *locks.Lease
	h.call(t, what, func(ctx context.Context) (err error) { l, err = call(ctx); return err })
	return l
}

// okNoCheck is ok for a goroutine: it reports instead of failing.
func (h *hostile) okNoCheck(what string, timeout time.Duration, call func(context.Context) (*locks.Lease, error)) (*locks.Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l, err := call(ctx)
	if err != nil {
		h.t.Errorf("%s: %v", what, err)
	}
	return l, err
}

// gaveUp expects a call that waits until its context ends and then fails
// with the context's error.
func (h *hostile) gaveUp(t *testing.T, what string, call func(context.Context) error) {
	t.Helper()
	err := h.run(t, what, callTimeout, call)
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, locks.ErrNotReplicated) {
		t.Errorf("%s: %v, want it to give up when its context ends", what, err)
	}
}

// waitQueued waits until a semaphore's queue (on the first server) has a
// waiter.
func (h *hostile) waitQueued(t *testing.T, c *locks.Client, name string) {
	t.Helper()
	for range 1000 {
		n, err := h.admin[0].ZCard(context.Background(), "{"+name+"}:squeue").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no waiter queued within 5s")
}

// oneSlotNames returns n names that start with prefix and share one
// Redis Cluster slot, so a MultiLock takes them in one script call.
func oneSlotNames(prefix string, n int) []string {
	state := crc16Update(0, prefix)
	target := -1
	var out []string
	for i := 0; len(out) < n && i < 1<<26; i++ {
		suffix := fmt.Sprintf("%08x", i)
		slot := int(crc16Update(state, suffix) % 16384)
		if target < 0 {
			target = slot
		}
		if slot == target {
			out = append(out, prefix+suffix)
		}
	}
	return out
}

// crc16Update continues CRC-16/XMODEM (Redis Cluster's key hash) over s.
func crc16Update(crc uint16, s string) uint16 {
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// resumeAndUnlock hands l on as another process would (Marshal, then
// Resume on c) and releases it there.
func resumeAndUnlock(ctx context.Context, c *locks.Client, l *locks.Lease) error {
	s, err := l.Marshal()
	if err != nil {
		return err
	}
	r, err := c.Resume(s)
	if err != nil {
		return err
	}
	return r.Unlock(ctx)
}

// The hostile harness fails a script call that loops or scans over what
// its caller sized: the work it judges in reference runs does not excuse
// real work, whatever the machine's load. One script loops thirty million
// times; the other walks a sorted set of 300k members, as a script that
// read a whole queue or holder set would.
func TestHostileHarnessCatchesASlowScript(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server")
	}
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	// The set is filled before the harness looks, in calls of 10k members.
	fill := "for i = ARGV[1], ARGV[1] + 9999 do redis.call('ZADD', KEYS[1], i, 'member-' .. i) end return 1"
	for from := 0; from < 300000; from += 10000 {
		if err := rc.Eval(ctx, fill, []string{"{pile}"}, from).Err(); err != nil {
			t.Fatal(err)
		}
	}
	h := newHostile(t, []*redistest.Server{srv})
	defer func() {
		close(h.stop)
		h.stopped.Wait()
	}()
	for _, c := range []struct {
		what, script string
		keys         []string
		arg          any
	}{
		{"a loop", "local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + i % 7 end return x", nil, 30000000},
		{"a scan", "local n = 0 for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do n = n + #m end return n", []string{"{pile}"}, 0},
	} {
		if err := rc.Eval(ctx, c.script, c.keys, c.arg).Err(); err != nil {
			t.Fatal(err)
		}
		failures := h.slowCalls(t)
		if len(failures) != 1 || !strings.Contains(failures[0], "a call of ?") {
			t.Fatalf("after %s: failures %q, want the script's call", c.what, failures)
		}
		t.Logf("%s caught: %s", c.what, failures[0])
	}
}
