package locks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/locks"
)

// Worker processes of the fault suite: the test binary run again with
// faulttest.WorkerEnv set to a role. Each has its own go-redis client and
// locks.Client, as separate services would. Settings arrive in the
// environment (workerEnv names them).
const (
	envAddr     = "REDLUA_FT_ADDR"     // redis-server host:port
	envName     = "REDLUA_FT_NAME"     // lock name
	envTTL      = "REDLUA_FT_TTL"      // lease TTL, a Go duration
	envFence    = "REDLUA_FT_FENCE"    // fenced resource host:port
	envHold     = "REDLUA_FT_HOLD"     // critical section length
	envFair     = "REDLUA_FT_FAIR"     // fair mode with this waiter TTL, when set
	envWatchdog = "REDLUA_FT_WATCHDOG" // "1": renew in the background
	envTimeout  = "REDLUA_FT_TIMEOUT"  // go-redis read/write timeout (default 1s)
)

func workerEnv(addr, name string, ttl time.Duration, fence string, extra ...string) []string {
	return append([]string{envAddr + "=" + addr, envName + "=" + name, envTTL + "=" + ttl.String(), envFence + "=" + fence}, extra...)
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

// TestFaultHelperWorker is not a test: it is the body of the worker
// processes (it returns at once in a normal test run).
func TestFaultHelperWorker(t *testing.T) {
	io := faulttest.RunWorker()
	if io == nil {
		return
	}
	opts := []locks.Option{locks.WithTTL(envDuration(envTTL, time.Second))}
	if wt := os.Getenv(envFair); wt != "" {
		opts = append(opts, locks.WithFair(envDuration(envFair, 0)))
	}
	if os.Getenv(envWatchdog) == "1" {
		opts = append(opts, locks.WithWatchdog(0))
	}
	ro := faultRedisOptions(os.Getenv(envAddr))
	ro.ReadTimeout = envDuration(envTimeout, ro.ReadTimeout)
	ro.WriteTimeout = ro.ReadTimeout
	rc := redis.NewClient(ro)
	defer rc.Close()
	c, err := locks.New(rc)
	if err != nil {
		io.Fatal("%v", err)
	}
	defer c.Close()
	m, err := c.Mutex(os.Getenv(envName), opts...)
	if err != nil {
		io.Fatal("%v", err)
	}
	fence, err := faulttest.DialFence(os.Getenv(envFence))
	if err != nil {
		io.Fatal("%v", err)
	}
	defer fence.Close()
	switch role := faulttest.Role(); role {
	case "loop":
		workerLoop(io, m, fence)
	case "holder":
		workerHolder(io, c, m, fence)
	case "fairwaiter":
		workerFairWaiter(io, c, m)
	default:
		io.Fatal("unknown worker role %q", role)
	}
}

// workerLoop locks, writes to the fenced resource, holds for the critical
// section, and unlocks, until stdin closes (at most 100000 rounds). Each
// hold is reported with its interval; failures are reported, not fatal.
func workerLoop(io *faulttest.WorkerIO, m *locks.Mutex, fence *faulttest.FenceClient) {
	hold := envDuration(envHold, 20*time.Millisecond)
	stop := make(chan struct{})
	go func() {
		for range io.Lines {
		}
		close(stop)
	}()
	for round := 0; round < 100000; round++ {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		asked := time.Now()
		l, err := m.Lock(ctx)
		cancel()
		if err != nil {
			io.Emit(faulttest.Report{Kind: "error", Err: err.Error(), Note: "lock"})
			time.Sleep(10 * time.Millisecond)
			continue
		}
		start := time.Now()
		werr := fence.Write(l.Token(), l.Owner())
		time.Sleep(hold)
		// The hold ends where the holder stops relying on it: now, or earlier
		// if the lease says it was lost.
		end := time.Now()
		r := faulttest.Report{Kind: "hold", Owner: l.Owner(), Token: l.Token(), Start: start, End: end, N: int64(start.Sub(asked))}
		if err := l.Err(); err != nil {
			r.Err = err.Error()
		}
		if werr != nil {
			r.Note = "fence: " + werr.Error()
		}
		io.Emit(r)
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		if err := l.Unlock(ctx); err != nil {
			io.Emit(faulttest.Report{Kind: "error", Err: err.Error(), Note: "unlock"})
		}
		cancel()
	}
}

// workerHolder locks once, reports "held", and on the command "check"
// looks at its lease first thing (the acceptance: the first check after a
// freeze already says the lease is lost), then tries a fenced write.
func workerHolder(io *faulttest.WorkerIO, c *locks.Client, m *locks.Mutex, fence *faulttest.FenceClient) {
	ctx := context.Background()
	l, err := m.Lock(ctx)
	if err != nil {
		io.Fatal("lock: %v", err)
	}
	if err := fence.Write(l.Token(), l.Owner()); err != nil {
		io.Fatal("first fenced write: %v", err)
	}
	io.Emit(faulttest.Report{Kind: "held", Owner: l.Owner(), Token: l.Token(), Start: time.Now(), End: l.Deadline()})
	for line := range io.Lines {
		if line != "check" {
			continue
		}
		// First thing after the command: nothing else runs before this look.
		leaseErr, now, deadline := l.Err(), time.Now(), l.Deadline()
		done := "open"
		select {
		case <-l.Done():
			done = "closed"
		default:
		}
		r := faulttest.Report{Kind: "checked", Owner: l.Owner(), Token: l.Token(), Start: now, End: deadline,
			Note: "done " + done + ", past deadline " + strconv.FormatBool(now.After(deadline))}
		if leaseErr != nil {
			r.Err = leaseErr.Error()
			if errors.Is(leaseErr, locks.ErrLockLost) {
				r.N = 1
			}
		}
		io.Emit(r)
		// A holder that ignores its lease writes anyway: fencing must catch it.
		wr := faulttest.Report{Kind: "wrote", Token: l.Token()}
		if err := fence.Write(l.Token(), l.Owner()); err != nil {
			wr.Err = err.Error()
		}
		io.Emit(wr)
		uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_ = l.Unlock(uctx)
		cancel()
		io.Emit(faulttest.Report{Kind: "unlocked"})
	}
}

// workerFairWaiter waits in a fair queue; the test freezes it there. When
// Lock returns it reports at once what its lease says and whether the
// server agrees that it holds the lock.
func workerFairWaiter(io *faulttest.WorkerIO, c *locks.Client, m *locks.Mutex) {
	io.Emit(faulttest.Report{Kind: "queuing"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := m.Lock(ctx)
	if err != nil {
		io.Emit(faulttest.Report{Kind: "acquired", Err: err.Error(), N: 1})
		return
	}
	leaseErr := l.Err()
	info, ierr := c.Inspect(ctx, m.Name())
	r := faulttest.Report{Kind: "acquired", Owner: l.Owner(), Token: l.Token(), Start: time.Now(), End: l.Deadline()}
	if leaseErr != nil {
		r.Err = leaseErr.Error()
		if errors.Is(leaseErr, locks.ErrLockLost) {
			r.N = 1
		}
	}
	switch {
	case ierr != nil:
		r.Note = "inspect: " + ierr.Error()
	case info.Held && info.Owner == l.Owner():
		r.Note = "server: held by us"
	case info.Held:
		r.Note = fmt.Sprintf("server: held by %s (token %d)", info.Owner, info.Token)
	default:
		r.Note = "server: free"
	}
	io.Emit(r)
	uctx, ucancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = l.Unlock(uctx)
	ucancel()
	for range io.Lines { // wait for the test to let go
	}
}
