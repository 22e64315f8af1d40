package lockbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// ScaleWorkloads names the pile-ups RunScale measures, in order.
var ScaleWorkloads = []string{"mutex-giveup", "mutex-inturn", "rw-readers", "sem-holders", "raw-setnx"}

// ScaleResult is what one pile-up on one lock name cost the server.
type ScaleResult struct {
	Workload string
	Callers  int
	// ScriptRuns counts EVALSHA and the other script commands in the
	// measured window (raw-setnx: its SET commands); ServerTime is their
	// usec in INFO commandstats.
	ScriptRuns int64
	ServerTime time.Duration
	// LongestScript is the slowest entry SLOWLOG kept (threshold 500 µs),
	// LongestScriptName its script as name@version (or the command).
	LongestScript     time.Duration
	LongestScriptName string
	// LongestPing is the longest a PING on another connection waited
	// during the window.
	LongestPing time.Duration
	Elapsed     time.Duration
}

// PerCall is the server time per script run.
func (r ScaleResult) PerCall() time.Duration {
	if r.ScriptRuns == 0 {
		return 0
	}
	return r.ServerTime / time.Duration(r.ScriptRuns)
}

// RunScale runs workload with n callers on one name against the server at
// addr: every caller is a goroutine of this process sharing one locks
// Client (the server's work per call does not depend on where the calls
// come from). The window measured is the pile-up's arrival and its
// resolution.
func RunScale(ctx context.Context, addr, workload string, n int) (ScaleResult, error) {
	res := ScaleResult{Workload: workload, Callers: n}
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rc.Close()
	admin := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, ReadTimeout: time.Minute})
	defer admin.Close()
	if err := admin.FlushAll(ctx).Err(); err != nil {
		return res, fmt.Errorf("FLUSHALL: %w", err)
	}
	for _, kv := range [][2]string{{"slowlog-log-slower-than", "500"}, {"slowlog-max-len", "1024"}} {
		if err := admin.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return res, fmt.Errorf("CONFIG SET %s: %w", kv[0], err)
		}
	}
	c, err := locks.New(rc, locks.WithTTL(time.Minute), locks.WithWatchdog(0), locks.WithWaiterTTL(time.Minute))
	if err != nil {
		return res, err
	}
	defer c.Close()
	holder, err := locks.New(redis.NewClient(&redis.Options{Addr: addr}), locks.WithTTL(time.Minute), locks.WithWatchdog(0))
	if err != nil {
		return res, err
	}
	defer holder.Close()

	if err := admin.SlowLogReset(ctx).Err(); err != nil {
		return res, fmt.Errorf("SLOWLOG RESET: %w", err)
	}
	before, err := ReadServerStats(ctx, admin)
	if err != nil {
		return res, err
	}
	stopPing, err := pingWatch(addr)
	if err != nil {
		return res, err
	}
	began := time.Now()
	switch workload {
	case "mutex-giveup":
		err = scaleMutexGiveUp(ctx, c, holder, admin, n)
	case "mutex-inturn":
		err = scaleMutexInTurn(ctx, c, holder, admin, n)
	case "rw-readers":
		err = scaleReaders(ctx, c, n)
	case "sem-holders":
		err = scaleSemHolders(ctx, c, n)
	case "raw-setnx":
		err = scaleRawSetNX(ctx, rc, admin, n)
	default:
		err = fmt.Errorf("unknown workload %q: want one of %s", workload, strings.Join(ScaleWorkloads, ", "))
	}
	res.Elapsed = time.Since(began)
	var pingErr error
	res.LongestPing, pingErr = stopPing()
	if err = errors.Join(err, pingErr); err != nil {
		return res, fmt.Errorf("%s with %d callers: %w", workload, n, err)
	}
	after, err := ReadServerStats(ctx, admin)
	if err != nil {
		return res, err
	}
	cost := costBetween(before, after)
	res.ScriptRuns, res.ServerTime = cost.ScriptRuns, cost.ScriptTime
	if workload == "raw-setnx" {
		res.ScriptRuns = after.Calls["set"] - before.Calls["set"]
		res.ServerTime = after.Usec["set"] - before.Usec["set"]
	}
	res.LongestScript, res.LongestScriptName, err = slowest(ctx, admin)
	return res, err
}

// pingEnv marks a process as RunScale's PING watcher; its value is the
// server's address.
const pingEnv = "LOCKBENCH_PING"

// pingWatch starts the PING watcher, a copy of this program of its own
// (see RunWorkerIfAsked), and returns a function that stops it and returns
// the longest wait it saw. A watcher inside this process would count the
// Go scheduler's delays among the pile's goroutines as the server's.
func pingWatch(addr string) (func() (time.Duration, error), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("lockbench: finding this program to start the PING watcher: %w", err)
	}
	cmd, stdin, stdout, err := startCopy(exe, pingEnv+"="+addr)
	if err != nil {
		return nil, fmt.Errorf("lockbench: the PING watcher: %w", err)
	}
	// The watcher says "ready" once its connection answered a PING, so that
	// the window does not start before it watches.
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("lockbench: the PING watcher did not start (%q): %v", line, err)
	}
	return func() (time.Duration, error) {
		stdin.Close()
		line, readErr := out.ReadString('\n')
		waitErr := cmd.Wait()
		var ns int64
		if _, err := fmt.Sscan(line, &ns); err != nil {
			return 0, fmt.Errorf("lockbench: the PING watcher's report %q: %w", line, errors.Join(err, readErr, waitErr))
		}
		return time.Duration(ns), nil
	}, nil
}

// runPingWatcher PINGs addr on one connection, one PING a millisecond,
// until in closes, then writes the longest wait in nanoseconds to out.
func runPingWatcher(addr string, in io.Reader, out io.Writer) error {
	pc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, ReadTimeout: time.Minute})
	defer pc.Close()
	if err := pc.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("PING %s: %w", addr, err)
	}
	fmt.Fprintln(out, "ready")
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, in); close(done) }()
	var longest time.Duration
	for {
		select {
		case <-done:
			_, err := fmt.Fprintln(out, int64(longest))
			return err
		default:
		}
		t := time.Now()
		if err := pc.Ping(context.Background()).Err(); err != nil {
			return fmt.Errorf("PING %s: %w", addr, err)
		}
		longest = max(longest, time.Since(t))
		time.Sleep(time.Millisecond)
	}
}

// slowest reads SLOWLOG and names the slowest entry's script.
func slowest(ctx context.Context, admin *redis.Client) (time.Duration, string, error) {
	logs, err := admin.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return 0, "", fmt.Errorf("SLOWLOG GET: %w", err)
	}
	if len(logs) == 0 {
		return 0, "", nil
	}
	// The harness's own commands (INFO, CONFIG, SLOWLOG) are not the pile's.
	logs = slices.DeleteFunc(logs, func(l redis.SlowLog) bool {
		return len(l.Args) == 0 || slices.Contains([]string{"info", "config", "slowlog", "flushall", "zcard"}, strings.ToLower(l.Args[0]))
	})
	if len(logs) == 0 {
		return 0, "", nil
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].Duration > logs[j].Duration })
	top := logs[0]
	name := ""
	if len(top.Args) > 0 {
		name = strings.ToLower(top.Args[0])
	}
	if len(top.Args) > 1 && (name == "evalsha" || name == "evalsha_ro") {
		name = scriptBySHA(top.Args[1])
	}
	return top.Duration, name, nil
}

// scriptBySHA names a script of lua/ by its SHA1.
func scriptBySHA(sha string) string {
	reg, err := registry.New(lua.FS)
	if err != nil {
		return sha
	}
	for _, s := range reg.Scripts() {
		if s.SHA1 == sha || s.LegacySHA1() == sha {
			return s.ID()
		}
	}
	return sha
}

// queued waits until the lock's queue holds n callers (bounded).
func queued(ctx context.Context, admin *redis.Client, key string, n int) error {
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		got, err := admin.ZCard(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("ZCARD %s: %w", key, err)
		}
		if int(got) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d callers queued in 10 minutes", got, n)
		}
	}
}

// scaleMutexGiveUp: one holder, n waiters whose contexts end together.
func scaleMutexGiveUp(ctx context.Context, c, holder *locks.Client, admin *redis.Client, n int) error {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	return queueBehindHolder(ctx, c, holder, admin, "scale-giveup", n,
		func(m *locks.Mutex) error {
			l, err := m.Lock(waitCtx)
			if err == nil {
				l.Unlock(ctx)
				return errors.New("a waiter got a lock that was held all along")
			}
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
		func(held *locks.Lease) error {
			cancel()
			return nil
		})
}

// scaleMutexInTurn: n waiters queue behind a holder, which releases; they
// are served in turn, each releasing at once.
func scaleMutexInTurn(ctx context.Context, c, holder *locks.Client, admin *redis.Client, n int) error {
	return queueBehindHolder(ctx, c, holder, admin, "scale-inturn", n,
		func(m *locks.Mutex) error {
			l, err := m.Lock(ctx)
			if err != nil {
				return err
			}
			return l.Unlock(ctx)
		},
		func(held *locks.Lease) error { return held.Unlock(ctx) })
}

// queueBehindHolder takes the Mutex name through holder, starts n callers
// of wait on it through c, and once all n are queued calls then with the
// holder's lease; it returns when every caller has.
func queueBehindHolder(ctx context.Context, c, holder *locks.Client, admin *redis.Client, name string, n int,
	wait func(*locks.Mutex) error, then func(held *locks.Lease) error) error {
	hm, err := holder.Mutex(name)
	if err != nil {
		return err
	}
	lease, err := hm.Lock(ctx)
	if err != nil {
		return err
	}
	defer lease.Unlock(context.WithoutCancel(ctx))
	m, err := c.Mutex(name)
	if err != nil {
		return err
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = wait(m) }()
	}
	err = queued(ctx, admin, "{"+name+"}:queue", n)
	if thenErr := then(lease); err == nil {
		err = thenErr
	}
	wg.Wait()
	return errors.Join(append([]error{err}, errs...)...)
}

// scaleReaders: n readers take the read lock, then all release it.
func scaleReaders(ctx context.Context, c *locks.Client, n int) error {
	rw, err := c.RWMutex("scale-readers")
	if err != nil {
		return err
	}
	return holdAllThenRelease(ctx, n, func() (*locks.Lease, error) { return rw.RLock(ctx) })
}

// scaleSemHolders: a Semaphore of n permits, n holders of one permit
// each, then all release.
func scaleSemHolders(ctx context.Context, c *locks.Client, n int) error {
	sem, err := c.Semaphore("scale-permits", n)
	if err != nil {
		return err
	}
	return holdAllThenRelease(ctx, n, func() (*locks.Lease, error) { return sem.Acquire(ctx, 1) })
}

// scaleRawSetNX is the floor the lock kinds stand on: one SET NX PX holds
// the name, then n callers each try it once with SET NX PX (and fail), the
// same pile of one-command calls without a script. What SLOWLOG and the
// PING watcher see here is the server and machine, not a lock's scripts.
func scaleRawSetNX(ctx context.Context, rc, admin *redis.Client, n int) error {
	token := strings.Repeat("t", 32)
	if err := admin.SetArgs(ctx, "scale-raw", token, redis.SetArgs{Mode: "NX", TTL: time.Minute}).Err(); err != nil {
		return fmt.Errorf("SET NX PX: %w", err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := rc.SetArgs(ctx, "scale-raw", token, redis.SetArgs{Mode: "NX", TTL: time.Minute}).Err()
			if !errors.Is(err, redis.Nil) {
				errs[i] = fmt.Errorf("SET NX PX on a held name: %v, want nil (not set)", err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// holdAllThenRelease takes n leases side by side, then releases them all.
func holdAllThenRelease(ctx context.Context, n int, take func() (*locks.Lease, error)) error {
	leases := make([]*locks.Lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); leases[i], errs[i] = take() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = leases[i].Unlock(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// HoldKinds names what BytesPerHeld measures, in order.
var HoldKinds = []string{"raw SET NX PX", "redlua Mutex", "redlua RWMutex reader", "redlua Semaphore holder", "redsync", "redislock"}

// BytesPerHeld holds k locks of one kind, each on its own name, and
// returns the server's used_memory growth per lock.
func BytesPerHeld(ctx context.Context, addr, kind string, k int) (float64, error) {
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	defer rc.Close()
	if err := rc.FlushAll(ctx).Err(); err != nil {
		return 0, fmt.Errorf("FLUSHALL: %w", err)
	}
	var take func(i int) error
	switch kind {
	case "raw SET NX PX":
		token := strings.Repeat("t", 32)
		take = func(i int) error {
			return rc.SetArgs(ctx, fmt.Sprintf("lock:%d", i), token, redis.SetArgs{Mode: "NX", TTL: time.Hour}).Err()
		}
	case "redsync":
		rs := redsync.New(goredis.NewPool(rc))
		take = func(i int) error { return rs.NewMutex(fmt.Sprintf("lock:%d", i), redsync.WithExpiry(time.Hour)).Lock() }
	case "redislock":
		bl := redislock.New(rc)
		take = func(i int) error { _, err := bl.Obtain(ctx, fmt.Sprintf("lock:%d", i), time.Hour, nil); return err }
	default:
		c, err := locks.New(rc, locks.WithTTL(time.Hour), locks.WithWatchdog(0))
		if err != nil {
			return 0, err
		}
		defer c.Close()
		take = func(i int) error {
			name := fmt.Sprintf("lock:%d", i)
			var err error
			switch kind {
			case "redlua Mutex":
				var m *locks.Mutex
				if m, err = c.Mutex(name); err == nil {
					_, err = m.Lock(ctx)
				}
			case "redlua RWMutex reader":
				var rw *locks.RWMutex
				if rw, err = c.RWMutex(name); err == nil {
					_, err = rw.RLock(ctx)
				}
			case "redlua Semaphore holder":
				var s *locks.Semaphore
				if s, err = c.Semaphore(name, 2); err == nil {
					_, err = s.Acquire(ctx, 1)
				}
			default:
				err = fmt.Errorf("unknown kind %q: want one of %s", kind, strings.Join(HoldKinds, ", "))
			}
			return err
		}
	}
	used := func() (int64, error) {
		info, err := rc.Info(ctx, "memory").Result()
		if err != nil {
			return 0, fmt.Errorf("INFO memory: %w", err)
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
				var n int64
				_, err := fmt.Sscan(v, &n)
				return n, err
			}
		}
		return 0, errors.New("INFO memory has no used_memory")
	}
	// One lock first, so that what a kind allocates once (a script
	// cache entry, a subscription) is not charged to every lock.
	if err := take(-1); err != nil {
		return 0, fmt.Errorf("%s: %w", kind, err)
	}
	start, err := used()
	if err != nil {
		return 0, err
	}
	for i := range k {
		if err := take(i); err != nil {
			return 0, fmt.Errorf("%s, lock %d: %w", kind, i, err)
		}
	}
	end, err := used()
	if err != nil {
		return 0, err
	}
	return float64(end-start) / float64(k), nil
}
