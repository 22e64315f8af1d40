package main

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Budgets for evaluating a config: it is code from the repository, run in
// CI, so it gets no I/O and a bounded amount of work.
const (
	rcMaxInstructions = 2_000_000
	rcMaxDuration     = 10 * time.Second // a backstop: the instruction budget stops loops first
	rcMaxAlloc        = 64 << 20         // bytes allocated while it runs
	rcMaxString       = 1 << 20          // longest string rep/concat/gsub/format may build
	rcMaxCallDepth    = 200
)

// budgetCtx is the context gopher-lua consults before every instruction:
// Done() counts instructions and samples the heap, and closes once the
// config has used its instructions, time or allocation budget.
type budgetCtx struct {
	context.Context
	done     chan struct{}
	closed   atomic.Bool
	n        int64
	deadline time.Time
	alloc0   uint64
	sample   []metrics.Sample
	err      error
}

func newBudgetCtx() *budgetCtx {
	c := &budgetCtx{Context: context.Background(), done: make(chan struct{}), deadline: time.Now().Add(rcMaxDuration)}
	c.sample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	c.alloc0 = c.allocated()
	return c
}

func (c *budgetCtx) allocated() uint64 {
	metrics.Read(c.sample)
	if c.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return c.sample[0].Value.Uint64()
}

func (c *budgetCtx) stop(err error) {
	if c.closed.CompareAndSwap(false, true) {
		c.err = err
		close(c.done)
	}
}

func (c *budgetCtx) Done() <-chan struct{} {
	if c.closed.Load() {
		return c.done
	}
	c.n++
	switch {
	case c.n > rcMaxInstructions:
		c.stop(fmt.Errorf("the config ran more than %d Lua instructions (an endless loop?); a .luacheckrc should only assign options", rcMaxInstructions))
	case c.n%4 == 0 && c.allocated()-c.alloc0 > rcMaxAlloc:
		c.stop(fmt.Errorf("the config allocated more than %d MB; a .luacheckrc should only assign options", rcMaxAlloc>>20))
	case c.n%1024 == 0 && time.Now().After(c.deadline):
		c.stop(fmt.Errorf("the config ran longer than %v; a .luacheckrc should only assign options", rcMaxDuration))
	}
	return c.done
}

func (c *budgetCtx) Err() error {
	if c.closed.Load() {
		return c.err
	}
	return nil
}
