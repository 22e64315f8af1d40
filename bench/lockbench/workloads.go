package lockbench

import (
	"context"
	"fmt"
	"sort"
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

// ContendedResult is what workload (ii) measures.
type ContendedResult struct {
	Busy     float64       // share of wall time some goroutine held the lock
	P50, P99 time.Duration // wait from calling Lock to holding the lock
	Jain     float64       // Jain's fairness index over per-goroutine acquisitions (1 = perfectly even)
	Acquired int
}

// Contended is workload (ii): workers goroutines share one lock, each holding
// it for hold per acquisition, for d.
func Contended(ctx context.Context, l Locker, name string, workers int, hold, d time.Duration) (ContendedResult, error) {
	type interval struct{ from, to time.Time }
	var (
		mu        sync.Mutex
		waits     []time.Duration
		intervals []interval
		counts    = make([]int, workers)
		firstErr  error
	)
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(end) {
				asked := time.Now()
				unlock, err := l.Lock(ctx, name)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				got := time.Now()
				time.Sleep(hold)
				err = unlock(ctx)
				released := time.Now()
				mu.Lock()
				waits = append(waits, got.Sub(asked))
				intervals = append(intervals, interval{got, released})
				counts[w]++
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return ContendedResult{}, firstErr
	}
	// Busy is the union of the hold intervals: a release's reply may arrive
	// after the next holder already has the lock, and that overlap counts once.
	sort.Slice(intervals, func(i, j int) bool { return intervals[i].from.Before(intervals[j].from) })
	var busy time.Duration
	var cur interval
	for i, iv := range intervals {
		if i == 0 || iv.from.After(cur.to) {
			busy += cur.to.Sub(cur.from)
			cur = iv
		} else if iv.to.After(cur.to) {
			cur.to = iv.to
		}
	}
	busy += cur.to.Sub(cur.from)
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	r := ContendedResult{Busy: float64(busy) / float64(wall), Acquired: len(waits)}
	if len(waits) > 0 {
		r.P50 = waits[len(waits)*50/100]
		r.P99 = waits[min(len(waits)-1, len(waits)*99/100)]
	}
	r.Jain = jain(counts)
	return r, nil
}

func jain(counts []int) float64 {
	var sum, sq float64
	for _, c := range counts {
		sum += float64(c)
		sq += float64(c) * float64(c)
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(counts)) * sq)
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
