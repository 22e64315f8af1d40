package lockbench

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

// ReadWriteResult is what workload (iv) measures.
type ReadWriteResult struct {
	ReadsPerSecond float64
	Writes         int
	WriterP50      time.Duration
	WriterP99      time.Duration
}

// ReadWrite is workload (iv), redlua's RWMutex only (the peers have no
// read-write lock): readers goroutines take read holds of hold each, one
// writer takes the write hold every writeEvery, for d.
func ReadWrite(ctx context.Context, addr string, readers int, hold, writeEvery, d time.Duration) (ReadWriteResult, error) {
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
	defer rc.Close()
	c, err := locks.New(rc, locks.WithTTL(10*time.Second))
	if err != nil {
		return ReadWriteResult{}, err
	}
	defer c.Close()
	rw, err := c.RWMutex("bench:rw")
	if err != nil {
		return ReadWriteResult{}, err
	}
	var reads atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				l, err := rw.RLock(ctx)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				time.Sleep(hold)
				l.Unlock(ctx)
				reads.Add(1)
			}
		}()
	}
	var waits []time.Duration
	for time.Now().Before(end) {
		time.Sleep(writeEvery)
		asked := time.Now()
		l, err := rw.Lock(ctx)
		if err != nil {
			firstErr.CompareAndSwap(nil, err)
			break
		}
		waits = append(waits, time.Since(asked))
		time.Sleep(hold)
		l.Unlock(ctx)
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return ReadWriteResult{}, err
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	r := ReadWriteResult{ReadsPerSecond: float64(reads.Load()) / time.Since(start).Seconds(), Writes: len(waits)}
	if len(waits) > 0 {
		r.WriterP50 = waits[len(waits)/2]
		r.WriterP99 = waits[min(len(waits)-1, len(waits)*99/100)]
	}
	return r, nil
}
