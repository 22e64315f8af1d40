package locks

import (
	"sync"
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
	w.run(func() { close(a); <-b; both.Done() })
	w.run(func() { close(b); <-a; both.Done() })
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
