package conformance

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/locks"
)

// bare hides a lease's Err, so a fenced transaction commits without asking
// the lease: what protects the resource then is the database alone.
type bare struct{ l *locks.Lease }

func (b bare) Name() string  { return b.l.Name() }
func (b bare) Token() int64  { return b.l.Token() }
func (b bare) Owner() string { return b.l.Owner() }

// TestWorkerHolder is the worker process of the frozen-holder trials: a
// lock holder with its own lock client (Redis at FENCE_LOCKS) and its own
// connection to the fenced resource. It does what each stdin line says:
//
//	lock NAME TTL_MS        take the Mutex NAME (no watchdog) -> locked
//	write KEY VALUE [bare]  a fenced write with the lease (bare: no lease check) -> wrote (N: transient failures retried)
//	intx KEY VALUE BARE     a fenced transaction that writes, reports intx, waits for "commit" -> committed
//	incr NAME N TTL_MS      N times: lock, fenced increment (with its marker), unlock -> call, op ...; incrdone
//	connect ADDR            use the lock server at ADDR from now on (a failover moved the primary)
//	trylock NAME TTL_MS     try the Mutex NAME once (no watchdog) -> trylocked (Err "not acquired" when held)
//	advance                 raise the fence to the lease's token, no data -> advanced
//	rawwrite KEY VALUE      write without the fence, as an application that ignores it -> wrote
func TestWorkerHolder(t *testing.T) {
	io := faulttest.RunWorker()
	if io == nil {
		return
	}
	ctx := context.Background()
	connect := func(addr string) (*redis.Client, *locks.Client) {
		rc := redis.NewClient(&redis.Options{Addr: addr})
		lc, err := locks.New(rc)
		if err != nil {
			io.Fatal("%v", err)
		}
		return rc, lc
	}
	rc, lc := connect(os.Getenv("FENCE_LOCKS"))
	var err error
	retried := 0
	var stopStage string
	stopAt, incrs := 0, 0
	var opts []fence.Option
	for _, o := range strings.Fields(os.Getenv("FENCE_OPTS")) {
		k, v, _ := strings.Cut(o, "=")
		d, _ := time.ParseDuration(v)
		switch k {
		case "lock":
			opts = append(opts, fence.WithLockTimeout(d))
		case "idle":
			opts = append(opts, fence.WithIdleTimeout(d))
		case "stop":
			// stop=STAGE:N: the worker parks at its N-th increment, at
			// STAGE: "read" inside the transaction after the read, "after"
			// once the increment returned, before it reports the outcome.
			stage, n, _ := strings.Cut(v, ":")
			stopStage = stage
			stopAt, _ = strconv.Atoi(n)
		case "tries":
			n, _ := strconv.Atoi(v)
			opts = append(opts, fence.WithRetries(n))
		}
	}
	opts = append(opts, fence.WithRetryable(func(err error) bool {
		ok := fence.DefaultRetryable(err)
		if ok {
			retried++
		}
		return ok
	}))
	b, err := open(specFromEnv(), opts...)
	if err != nil {
		io.Fatal("%v", err)
	}
	stopSelf := func(stage string) {
		if incrs == stopAt && stage == stopStage {
			// Parked for good: the test kills the worker on this report.
			// (A SIGSTOP the worker sent itself did not hold: in some runs
			// the worker went on at once.)
			io.Emit(faulttest.Report{Kind: "parked", Note: stage})
			time.Sleep(time.Minute)
			io.Fatal("parked at %s:%d and not killed within a minute", stage, stopAt)
		}
	}
	b.pause = stopSelf
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		if errors.Is(err, fence.ErrStale) {
			return "stale: " + err.Error()
		}
		return err.Error()
	}
	lock := func(name string, ttl time.Duration) (*locks.Lease, error) {
		m, err := lc.Mutex(name, locks.WithTTL(ttl))
		if err != nil {
			return nil, err
		}
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return m.Lock(lctx)
	}
	var l *locks.Lease
	for line := range io.Lines {
		f := strings.Fields(line)
		switch f[0] {
		case "lock":
			ms, _ := strconv.Atoi(f[2])
			if l, err = lock(f[1], time.Duration(ms)*time.Millisecond); err != nil {
				io.Fatal("lock %s: %v", f[1], err)
			}
			io.Emit(faulttest.Report{Kind: "locked", Token: l.Token(), Owner: l.Owner()})
		case "write":
			retried = 0
			var h fence.Holder = l
			if len(f) > 3 && f[3] == "bare" {
				h = bare{l}
			}
			err := b.set(ctx, h, f[1], f[2])
			io.Emit(faulttest.Report{Kind: "wrote", Token: l.Token(), Err: errText(err), N: int64(retried)})
		case "connect":
			lc.Close()
			rc.Close()
			rc, lc = connect(f[1])
		case "trylock":
			ms, _ := strconv.Atoi(f[2])
			m, err := lc.Mutex(f[1], locks.WithTTL(time.Duration(ms)*time.Millisecond))
			if err != nil {
				io.Fatal("mutex %s: %v", f[1], err)
			}
			got, err := m.TryLock(ctx)
			switch {
			case err == nil:
				l = got
				io.Emit(faulttest.Report{Kind: "trylocked", Token: l.Token(), Owner: l.Owner()})
			case errors.Is(err, locks.ErrNotAcquired):
				io.Emit(faulttest.Report{Kind: "trylocked", Err: "not acquired"})
			default:
				io.Fatal("trylock %s: %v", f[1], err)
			}
		case "advance":
			retried = 0
			err := b.advance(ctx, l)
			io.Emit(faulttest.Report{Kind: "advanced", Token: l.Token(), Err: errText(err), N: int64(retried)})
		case "rawwrite":
			err := b.rawSet(ctx, f[1], f[2])
			io.Emit(faulttest.Report{Kind: "wrote", Token: l.Token(), Err: errText(err)})
		case "intx":
			var h fence.Holder = l
			if f[3] == "1" {
				h = bare{l}
			}
			err := b.setIn(ctx, h, f[1], f[2], func() {
				io.Emit(faulttest.Report{Kind: "intx", Token: l.Token()})
				for line := range io.Lines {
					if line == "commit" {
						return
					}
				}
			})
			io.Emit(faulttest.Report{Kind: "committed", Token: l.Token(), Err: errText(err)})
		case "incr":
			n, _ := strconv.Atoi(f[2])
			ms, _ := strconv.Atoi(f[3])
			for range n {
				l, err := lock(f[1], time.Duration(ms)*time.Millisecond)
				if err != nil {
					io.Fatal("lock %s: %v", f[1], err)
				}
				// The call's start goes out before the increment begins, so
				// the test knows of an increment in flight when it kills
				// this worker.
				start := time.Now()
				io.Emit(faulttest.Report{Kind: "call", Token: l.Token(), Start: start})
				incrs++
				v, err := b.incr(ctx, bare{l}, marker(l.Token()))
				stopSelf("after")
				io.Emit(faulttest.Report{Kind: "op", Token: l.Token(), Start: start, End: time.Now(), N: v, Err: errText(err)})
				_ = l.Unlock(ctx)
			}
			io.Emit(faulttest.Report{Kind: "incrdone"})
		}
	}
}

// marker is the key an increment under token writes with the counter.
func marker(token int64) string { return "op:" + strconv.FormatInt(token, 10) }
