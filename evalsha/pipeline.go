package evalsha

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

// Call is one script call in a pipeline.
type Call struct {
	Script *registry.Script
	Keys   []string
	Args   []any
}

// maxRounds bounds the fallback round trips of RunMany: EVALSHA, EVAL, and
// one more for what the server turned out not to support (no *_RO, no "#!lua").
const maxRounds = 4

// RunMany sends calls in one pipeline and returns one *redis.Cmd per call,
// in the order of calls. Calls that came back NOSCRIPT (or that tripped over
// a missing EVALSHA_RO or "#!lua" support) are re-sent in a second pipeline
// of EVALs; other errors are left as they are, wrapped in *ScriptError. The
// error is the first call's error other than redis.Nil, as go-redis's
// Pipeline.Exec reports it, or the context's error.
//
// A call that needed a fallback runs after the calls that did not, in a
// later round trip. When calls depend on each other's writes and the scripts
// may not be cached yet, run evalsha.Load first.
func (r *Runner) RunMany(ctx context.Context, calls []Call) ([]*redis.Cmd, error) {
	if !r.usable() {
		return failedAll(ctx, len(calls), errNoRunner)
	}
	if err := checkContext(ctx, "RunMany"); err != nil {
		return failedAll(ctx, len(calls), err)
	}
	cmds := make([]*redis.Cmd, len(calls))
	pending := make([]int, 0, len(calls))
	for i := range calls {
		r.calls.Add(1)
		if err := checkCall(calls[i].Script, calls[i].Keys, calls[i].Args); err != nil {
			cmds[i] = r.failed(ctx, calls[i].Script, err)
			continue
		}
		pending = append(pending, i)
	}
	r.pipelined(ctx, calls, cmds, pending)
	var first error
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil && first == nil {
			first = err
		}
	}
	return cmds, first
}

// pipelined sends calls[i] for every i in pending (already counted and
// checked) in one pipeline, re-sends those that need a fallback in later
// ones, and stores each final reply in cmds[i].
func (r *Runner) pipelined(ctx context.Context, calls []Call, cmds []*redis.Cmd, pending []int) {
	sent := append([]int(nil), pending...)
	steps := make([]attempt, len(calls))
	for round := 0; round < maxRounds && len(pending) > 0; round++ {
		if err := ctx.Err(); err != nil {
			for _, i := range pending {
				if cmds[i] == nil {
					cmds[i] = redis.NewCmd(ctx)
				}
				cmds[i].SetErr(err)
			}
			break
		}
		pipe := r.client.Pipeline()
		for _, i := range pending {
			cmds[i] = r.send(ctx, pipe, &calls[i], steps[i])
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		retry := pending[:0]
		for _, i := range pending {
			next, ok := r.nextAttempt(calls[i].Script, steps[i], cmds[i].Err())
			if ok {
				steps[i] = next
				retry = append(retry, i)
			}
		}
		pending = retry
	}
	for _, i := range sent {
		r.finish(calls[i].Script, cmds[i])
	}
}

// failedAll answers a RunMany refused as a whole: every call fails with err.
func failedAll(ctx context.Context, n int, err error) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, n)
	for i := range cmds {
		cmds[i] = failedCmd(ctx, err)
	}
	return cmds, err
}
