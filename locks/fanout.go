package locks

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// errNoAnswerYet stands for the answer of a server that fanOut did not
// wait for, because a majority had already settled the outcome.
var errNoAnswerYet = errors.New("no answer yet (a majority had already answered)")

// cutOff stands for the answer of a server that fanOut stopped waiting
// for because the caller's ctx ended: not a server failure.
type cutOff struct{ cause error }

func (c cutOff) Error() string { return "no answer before the call ended: " + c.cause.Error() }
func (c cutOff) Unwrap() error { return c.cause }

// fanOut runs f on every node at once (i is the node's index in c.nodes),
// each with its own timeout. When settled is set, it returns as soon as a
// majority of answers satisfies it (the slowest server no longer sets the
// pace of every Lock and Unlock); the other calls run on to their own
// timeout in the background, their answers dropped and shown as
// errNoAnswerYet (or cutOff, wrapping ctx's error, when ctx ended first),
// and Client.Close waits for them. That is safe where it is used: a
// release or renewal needs only a majority's confirmation, and an
// acquisition that lands late on a minority is ours, which the lease's
// release on that server waits for, or undoes when it got no answer (see
// landing).
func fanOut[T any](ctx context.Context, c *Client, timeout time.Duration, settled func(T, error) bool, f func(ctx context.Context, i int, n Backend) (T, error)) ([]T, []error) {
	nodes := c.nodes
	type answer struct {
		i   int
		v   T
		err error
	}
	answers := make(chan answer, len(nodes)) // buffered: late senders never block
	for i, n := range nodes {
		// Not cancelled with ctx: a call the caller stopped waiting for
		// still ends its release (or lands its acquisition, which the
		// caller undoes) within its own timeout; Close waits for it.
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		deadline, _ := nctx.Deadline()
		c.workers.run(deadline, func() {
			defer cancel()
			v, err := f(nctx, i, n)
			if err == nil {
				// Asked after the call: a restart it ran into made a new
				// connection, which the check sees.
				err = c.restarts.check(nctx, i)
			}
			answers <- answer{i, v, err}
		})
	}
	results, errs := make([]T, len(nodes)), make([]error, len(nodes))
	answered := make([]bool, len(nodes))
	unanswered := errNoAnswerYet
	need, good := len(nodes)/2+1, 0
collect:
	for range nodes {
		select {
		case a := <-answers:
			results[a.i], errs[a.i], answered[a.i] = a.v, a.err, true
			if settled != nil && settled(a.v, a.err) {
				if good++; good >= need {
					break collect
				}
			}
		case <-ctx.Done():
			unanswered = cutOff{ctx.Err()}
			break collect
		}
	}
	for i := range nodes {
		if !answered[i] {
			errs[i] = unanswered
		}
	}
	return results, errs
}

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
