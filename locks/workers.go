package locks

import (
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
}

func newWorkers() *workers { return &workers{tasks: make(chan func())} }

// run runs f on an idle worker, or on a new one when none is idle; it
// never waits for a worker to become free.
func (w *workers) run(f func()) {
	select {
	case w.tasks <- f:
	default:
		w.started.Add(1)
		go w.work(f)
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
