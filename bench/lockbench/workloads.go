package lockbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// stuckGrace bounds how long a workload waits past its end for a call that
// should have returned: a contender that loses a wake-up then reports an
// error instead of hanging the whole run.
const stuckGrace = 30 * time.Second

// ErrStalled reports a Lock or Unlock call that had not returned stuckGrace
// after its workload's end.
var ErrStalled = errors.New("lockbench: a call stalled")

// boundedCtx is ctx ending stuckGrace after d from now, and the error to
// report when that happened.
func boundedCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d+stuckGrace,
		fmt.Errorf("%w: it still had not returned %v after the workload's end (lost wake-up?)", ErrStalled, stuckGrace))
}

// stuck replaces a deadline error of a boundedCtx with its cause.
func stuck(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", cause, err)
	}
	return err
}

// Uncontended is workload (i): lock+unlock pairs per second from one goroutine.
func Uncontended(ctx context.Context, l Locker, name string, d time.Duration) (float64, error) {
	ctx, cancel := boundedCtx(ctx, d)
	defer cancel()
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		unlock, err := l.Lock(ctx, name)
		if err != nil {
			return 0, stuck(ctx, err)
		}
		if err := unlock(ctx); err != nil {
			return 0, stuck(ctx, err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// Parallel is workload (iii): goroutines each on its own lock; total pairs per second.
func Parallel(ctx context.Context, l Locker, prefix string, goroutines int, d time.Duration) (float64, error) {
	ctx, cancel := boundedCtx(ctx, d)
	defer cancel()
	var total int64
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			name := fmt.Sprintf("%s:%d", prefix, g)
			n := int64(0)
			for time.Since(start) < d {
				unlock, err := l.Lock(ctx, name)
				if err == nil {
					err = unlock(ctx)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = stuck(ctx, err)
					}
					mu.Unlock()
					break
				}
				n++
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	return float64(total) / time.Since(start).Seconds(), firstErr
}
