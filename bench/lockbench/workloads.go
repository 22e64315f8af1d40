package lockbench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Uncontended is workload (i): lock+unlock pairs per second from one goroutine.
func Uncontended(ctx context.Context, l Locker, name string, d time.Duration) (float64, error) {
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		unlock, err := l.Lock(ctx, name)
		if err != nil {
			return 0, err
		}
		if err := unlock(ctx); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// Parallel is workload (iii): goroutines each on its own lock; total pairs per second.
func Parallel(ctx context.Context, l Locker, prefix string, goroutines int, d time.Duration) (float64, error) {
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
						firstErr = err
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
