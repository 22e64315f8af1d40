package evalsha

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Auto-pipelining: concurrent Run calls on one Runner share round trips.
//
// A call that finds fewer than max batches in flight is sent at once, on its
// own, so a lone caller pays nothing. Calls that arrive while max batches
// are in flight wait in a queue; whenever a batch (or lone call) comes back,
// everything queued goes out as the next pipeline, with RunMany's NOSCRIPT
// fallback. Under load the number of round trips in flight stays at max, so
// the server sees a few deep pipelines instead of one command per
// connection, and the pool is not drained by one connection per goroutine.

// defaultMaxInFlight is the number of batches in flight before calls queue.
// Measured with 64 goroutines on the 2-core machine (BenchmarkAutoPipelining,
// µs per call: off 12.3, max 1: 5.5, 2: 5.8, 4: 5.9, 8: 6.2) and with the
// locks benchmark's 64 goroutines × 64 locks (pairs/s relative to
// rueidislock: max 1: 0.82, 2: 0.85-0.91, 4: 0.82-0.84, off: 0.53-0.57),
// 2 keeps the server busy while the client reads a batch back.
const defaultMaxInFlight = 2

// maxBatch bounds one pipeline, so a burst does not become one huge write.
const maxBatch = 256

// WithoutAutoPipelining sends every Run call on its own, as go-redis would,
// instead of letting concurrent calls share a pipeline.
func WithoutAutoPipelining() Option { return func(r *Runner) { r.batch = nil } }

// WithAutoPipelining sets how many batches may be in flight at once before
// concurrent Run calls queue for the next pipeline (default 2). n must be at
// least 1.
func WithAutoPipelining(n int) Option {
	return func(r *Runner) {
		if n < 1 {
			r.setOptErr(fmt.Errorf("evalsha: WithAutoPipelining needs at least 1 batch in flight, got %d; use WithoutAutoPipelining to turn it off", n))
			return
		}
		r.batch = &batcher{max: n}
	}
}

func (r *Runner) setOptErr(err error) {
	if r.optErr == nil {
		r.optErr = err
	}
}

// batcher holds the calls waiting for a free slot.
type batcher struct {
	r   *Runner
	max int

	mu       sync.Mutex
	inFlight int       // lone calls and batches sent and not yet back
	queue    []*queued // non-empty only while inFlight == max
}

// queued is one caller waiting in the queue.
type queued struct {
	ctx  context.Context
	call *Call
	cmd  *redis.Cmd    // set before done is closed
	done chan struct{} // closed when cmd is final
	// Guarded by batcher.mu: taken once a batch holds the call; left when
	// its caller's context ended first, so no batch sends it.
	taken, left bool
}

func (b *batcher) run(ctx context.Context, c *Call) *redis.Cmd {
	b.mu.Lock()
	if b.inFlight < b.max {
		b.inFlight++
		b.mu.Unlock()
		cmd := b.r.runOne(ctx, c)
		b.release()
		return cmd
	}
	if ctx.Err() != nil {
		b.mu.Unlock()
		return b.abandoned(ctx, c)
	}
	q := &queued{ctx: ctx, call: c, done: make(chan struct{})}
	b.queue = append(b.queue, q)
	b.mu.Unlock()
	select {
	case <-q.done:
		return q.cmd
	case <-ctx.Done():
		b.mu.Lock()
		q.left = !q.taken
		b.mu.Unlock()
		// If a batch already holds the call, it still runs; this caller
		// just stops waiting for it.
		return b.abandoned(ctx, c)
	}
}

// abandoned is the reply of a caller whose context ended before its call
// came back.
func (b *batcher) abandoned(ctx context.Context, c *Call) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(ctx.Err())
	return b.r.finish(c.Script, cmd)
}

// release frees the slot of a lone call that came back, or hands it to the
// next batch when calls are queued.
func (b *batcher) release() {
	if batch := b.next(); len(batch) > 0 {
		// A goroutine of its own, so the caller whose call just came back
		// returns now instead of after the next round trip.
		go b.flush(batch)
	}
}

// next takes the next batch for a slot that came back, or frees the slot
// when no call is queued.
func (b *batcher) next() []*queued {
	b.mu.Lock()
	defer b.mu.Unlock()
	batch := b.take()
	if len(batch) == 0 {
		b.inFlight--
	}
	return batch
}

// take removes up to maxBatch waiting calls from the queue; b.mu is held.
func (b *batcher) take() []*queued {
	var batch []*queued
	n := 0
	for ; n < len(b.queue) && len(batch) < maxBatch; n++ {
		q := b.queue[n]
		if q.left {
			continue
		}
		q.taken = true
		batch = append(batch, q)
	}
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	return batch
}

// flush sends batch as one pipeline and hands each caller its reply, then
// sends the batches queued meanwhile, for as long as there are any. Under
// load a slot's goroutine thus lives from one idle moment to the next
// instead of one batch: a goroutine per batch grew its stack through
// go-redis's read path every time, 6% of the client's CPU with 64
// goroutines on 64 locks.
func (b *batcher) flush(batch []*queued) {
	for len(batch) > 0 {
		calls := make([]Call, len(batch))
		pending := make([]int, len(batch))
		for i, q := range batch {
			calls[i] = *q.call
			pending[i] = i
		}
		// One caller's cancellation must not fail the others: the pipeline
		// runs without cancellation (bounded by the client's timeouts),
		// keeping the first caller's values for hooks and tracing.
		ctx := context.WithoutCancel(batch[0].ctx)
		cmds := make([]*redis.Cmd, len(batch))
		b.r.pipelined(ctx, calls, cmds, pending)
		for i, q := range batch {
			q.cmd = cmds[i]
			close(q.done)
		}
		batch = b.next()
	}
}
