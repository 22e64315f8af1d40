package locks

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// run never waits for a busy worker (a quorum's calls to the servers run
// at once, whatever the others do), and a worker that finished takes the
// next task, so no new goroutine has to start for it.
func TestWorkersRunAtOnceAndAreReused(t *testing.T) {
	w := newWorkers()
	// Two tasks that each wait for the other: they finish only if both run
	// at the same time.
	a, b := make(chan struct{}), make(chan struct{})
	var both sync.WaitGroup
	both.Add(2)
	far := time.Now().Add(time.Minute)
	w.run(far, func() { close(a); <-b; both.Done() })
	w.run(far, func() { close(b); <-a; both.Done() })
	done := make(chan struct{})
	go func() { both.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second task waited for the first one's worker")
	}
	if n := w.started.Load(); n != 2 {
		t.Fatalf("%d goroutines started for two concurrent tasks, want 2", n)
	}
	// The two workers take further tasks once idle: sent straight to the
	// idle workers (as run does first), 100 tasks all run, and no goroutine
	// starts for them.
	for i := range 100 {
		ran := make(chan struct{})
		select {
		case w.tasks <- func() { close(ran) }:
		case <-time.After(10 * time.Second):
			t.Fatalf("task %d: no idle worker took it: workers exit after one task", i)
		}
		<-ran
	}
	if n := w.started.Load(); n != 2 {
		t.Fatalf("%d goroutines started, want the 2 of the concurrent tasks", n)
	}
}

// drain waits for the tasks running when it is called, and no longer than
// the latest of their deadlines (plus drainGrace) when one overstays it.
func TestWorkersDrain(t *testing.T) {
	w := newWorkers()
	w.drain() // nothing running: returns at once

	release := make(chan struct{})
	var taskEnded atomic.Bool
	w.run(time.Now().Add(time.Minute), func() { <-release; taskEnded.Store(true) })
	drained := make(chan bool, 1)
	go func() { w.drain(); drained <- taskEnded.Load() }()
	// Let the task return only once drain is waiting for it.
	for waiting := false; !waiting; {
		select {
		case <-drained:
			t.Fatal("drain returned while the task was still running")
		case <-time.After(time.Millisecond):
		}
		w.mu.Lock()
		waiting = len(w.drained) == 1
		w.mu.Unlock()
	}
	close(release)
	select {
	case ended := <-drained:
		if !ended {
			t.Fatal("drain returned before the task did")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("drain still waiting 30s after the only task returned")
	}

	// A task that overstays its deadline holds drain up to the deadline
	// plus drainGrace, not for ever.
	stuck := make(chan struct{})
	defer close(stuck)
	deadline := time.Now().Add(50 * time.Millisecond)
	w.run(deadline, func() { <-stuck })
	w.drain()
	if late := time.Since(deadline); late < drainGrace {
		t.Fatalf("drain returned %v after the deadline of a task still running, want at least drainGrace (%v)", late, drainGrace)
	}
}
