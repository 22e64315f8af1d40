package locks

import (
	"sync"
	"sync/atomic"
	"time"
)

// workerIdle is how long a worker waits for its next task before it exits.
const workerIdle = 10 * time.Second

// workers runs a quorum Client's per-server calls (fanOut) on goroutines
// that outlive one call. A new goroutine starts with a small stack, and a
// call through go-redis grows it by copying, several times: with a fresh
// goroutine per server per Lock and Unlock, stack growth was 12% of a
// quorum Client's CPU (one goroutine, Lock+Unlock over three servers). A
// worker that stays keeps its grown stack. Idle workers exit after
// workerIdle, so a burst leaves no goroutines behind for long.
type workers struct {
	tasks   chan func()   // unbuffered: a send succeeds only into an idle worker
	started atomic.Uint64 // goroutines started, for tests

	mu      sync.Mutex
	busy    int             // tasks run and not yet returned
	latest  time.Time       // the latest deadline of a task run since busy was last 0
	drained []chan struct{} // closed when busy drops to 0
}

func newWorkers() *workers { return &workers{tasks: make(chan func())} }

// run runs f on an idle worker, or on a new one when none is idle; it
// never waits for a worker to become free. f must return by deadline (its
// calls carry it in their context): drain relies on that.
func (w *workers) run(deadline time.Time, f func()) {
	w.mu.Lock()
	w.busy++
	if deadline.After(w.latest) {
		w.latest = deadline
	}
	w.mu.Unlock()
	task := func() {
		defer w.done()
		f()
	}
	select {
	case w.tasks <- task:
	default:
		w.started.Add(1)
		go w.work(task)
	}
}

func (w *workers) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy--; w.busy == 0 {
		w.latest = time.Time{}
		for _, ch := range w.drained {
			close(ch)
		}
		w.drained = nil
	}
}

// drainGrace is how long drain waits past the latest deadline for a task
// whose call did not return at its deadline.
const drainGrace = time.Second

// drain waits until every task run before it has returned: until no task
// is running, or until the latest deadline of the tasks run since none was
// (plus drainGrace) has passed, so that tasks started while drain waits
// cannot keep it waiting for ever.
func (w *workers) drain() {
	w.mu.Lock()
	if w.busy == 0 {
		w.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	w.drained = append(w.drained, idle)
	until := w.latest.Add(drainGrace)
	w.mu.Unlock()
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	}
}

func (w *workers) work(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-w.tasks:
		case <-idle.C:
			return
		}
	}
}
