package lockbench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Hold is one acquisition by one waiter (a goroutine): when it called Lock,
// when Lock returned, and when Unlock returned.
type Hold struct {
	Waiter               int
	Asked, Got, Released time.Time
	// Queued is how the call was queued (QueuedLocker), or zero.
	Queued Queueing
}

// Trace is what a set of waiters did during one contended run.
type Trace struct {
	Holds []Hold
	// Pending are the Lock calls still waiting when the run ended.
	Pending []time.Time
	// Counts is the number of acquisitions per waiter.
	Counts []int
	// Err is the first error other than the run ending, if any.
	Err error
}

// contend runs waiters goroutines on one lock from start to end: each calls
// Lock, holds the lock for hold, calls Unlock, and starts over until end. A
// Lock call still waiting at end is cancelled and recorded as pending, so a
// waiter that never got the lock counts as waiting the whole run.
func contend(ctx context.Context, l Locker, name string, waiters int, hold time.Duration, start, end time.Time) Trace {
	runCtx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	tr := Trace{Counts: make([]int, waiters)}
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		if tr.Err == nil {
			tr.Err = err
		}
		mu.Unlock()
	}
	// lock also says when the call learned it was queued, when l can tell.
	lock := func(ctx context.Context) (func(context.Context) error, Queueing, error) {
		unlock, err := l.Lock(ctx, name)
		return unlock, Queueing{}, err
	}
	if ql, ok := l.(QueuedLocker); ok {
		lock = func(ctx context.Context) (func(context.Context) error, Queueing, error) {
			return ql.LockQueued(ctx, name)
		}
	}
	time.Sleep(time.Until(start))
	var wg sync.WaitGroup
	for w := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				asked := time.Now()
				unlock, queued, err := lock(runCtx)
				if err != nil {
					if runCtx.Err() != nil && ctx.Err() == nil {
						mu.Lock()
						tr.Pending = append(tr.Pending, asked)
						mu.Unlock()
						return
					}
					fail(fmt.Errorf("waiter %d: Lock: %w", w, err))
					return
				}
				got := time.Now()
				time.Sleep(hold)
				// Unlock must run even after the run ended, so it gets its own
				// deadline rather than the run's.
				unlockCtx, cancelUnlock := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				err = unlock(unlockCtx)
				cancelUnlock()
				released := time.Now()
				mu.Lock()
				tr.Holds = append(tr.Holds, Hold{Waiter: w, Asked: asked, Got: got, Released: released, Queued: queued})
				tr.Counts[w]++
				mu.Unlock()
				if err != nil {
					fail(fmt.Errorf("waiter %d: Unlock: %w", w, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	return tr
}

// ContendedResult is what a contended run measures.
type ContendedResult struct {
	Busy     float64       // share of wall time some waiter held the lock
	P50, P99 time.Duration // wait from calling Lock to holding it; waits cut off by the end count until the end
	Jain     float64       // Jain's fairness index over per-waiter acquisitions (1 = perfectly even)
	Acquired int
	// Waiters is the number of goroutines contending, NeverAcquired those
	// that did not get the lock once.
	Waiters, NeverAcquired int
	// CutOff is the number of Lock calls still waiting when the run ended.
	CutOff int
	Queue  QueueStats
	// LongestIdle is the longest stretch in which nobody held the lock,
	// although waiters were waiting for all of the run.
	LongestIdle time.Duration
	Wall        time.Duration
}

// summarize turns a trace of the run [start, end] into its figures.
func summarize(tr Trace, start, end time.Time) ContendedResult {
	wall := end.Sub(start)
	intervals := make([]Interval, len(tr.Holds))
	waits := make([]Wait, 0, len(tr.Holds)+len(tr.Pending))
	for i, h := range tr.Holds {
		intervals[i] = Interval{From: h.Got, To: h.Released}
		waits = append(waits, Wait{Asked: h.Asked, Got: h.Got, Granted: true, Queued: h.Queued})
	}
	for _, asked := range tr.Pending {
		waits = append(waits, Wait{Asked: asked, Got: end})
	}
	durations := make([]time.Duration, len(waits))
	for i, w := range waits {
		durations[i] = max(0, w.Got.Sub(w.Asked))
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	busy, idle := busyAndIdle(intervals, start, end)
	r := ContendedResult{
		Busy:        float64(busy) / float64(wall),
		LongestIdle: idle,
		P50:         percentile(durations, 50),
		P99:         percentile(durations, 99),
		Jain:        jain(tr.Counts),
		Acquired:    len(tr.Holds),
		Waiters:     len(tr.Counts),
		CutOff:      len(tr.Pending),
		Wall:        wall,
	}
	for _, c := range tr.Counts {
		if c == 0 {
			r.NeverAcquired++
		}
	}
	var meanTurn time.Duration
	if len(tr.Holds) > 0 {
		meanTurn = wall / time.Duration(len(tr.Holds))
	}
	r.Queue = queueStats(waits, meanTurn)
	return r
}

// Contended is workload (ii) in one process: workers goroutines share one
// Locker (one client) on one lock, each holding it for hold per acquisition,
// for d.
func Contended(ctx context.Context, l Locker, name string, workers int, hold, d time.Duration) (ContendedResult, error) {
	if workers <= 0 || hold < 0 || d <= 0 {
		return ContendedResult{}, errors.New("lockbench: Contended needs workers > 0, hold >= 0 and d > 0")
	}
	start := time.Now()
	end := start.Add(d)
	tr := contend(ctx, l, name, workers, hold, start, end)
	if tr.Err != nil {
		return ContendedResult{}, tr.Err
	}
	return summarize(tr, start, end), nil
}
