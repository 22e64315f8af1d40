package evalsha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

// EventFunctionReload: the node answered "Function not found"; the
// registry's library was loaded on every primary (FUNCTION LOAD REPLACE)
// and the call sent again. Only FunctionRunner reports it.
const EventFunctionReload EventKind = 100

// FunctionRunner runs registry scripts as Redis 7 functions: the registry
// is published as one library (registry.NewFunctionLibrary) and each
// script is called with FCALL, or FCALL_RO when it is flagged no-writes.
// Functions are persisted and replicated with the data, so a replica
// promoted after a failover has them: unlike EVALSHA's script cache, no
// reload and no NOSCRIPT round trip follows. The library is loaded lazily,
// on every primary, the first time a node answers "Function not found"
// (or at once with Load). It is safe for concurrent use.
type FunctionRunner struct {
	runner *Runner // the client, hook and shared subscriptions
	lib    *registry.FunctionLibrary

	calls, reloads, readOnly, failures atomic.Uint64
}

// FunctionStats are a FunctionRunner's counters since it was created.
type FunctionStats struct {
	Calls    uint64 // script calls made
	Reloads  uint64 // times the library was loaded (Load, or after "Function not found")
	ReadOnly uint64 // calls sent as FCALL_RO
	Failures uint64 // calls that ended in an error other than redis.Nil
}

// NewFunctionRunner returns a FunctionRunner for client that runs the
// scripts of reg. Options are those of New (WithHook); WithLegacyScripts
// makes no sense here, as servers before Redis 7 have no functions.
func NewFunctionRunner(client redis.UniversalClient, reg *registry.Registry, opts ...Option) (*FunctionRunner, error) {
	if reg == nil {
		return nil, errors.New("evalsha: NewFunctionRunner needs the registry whose scripts it runs (registry.New(lua.FS)), got nil")
	}
	r, err := New(client, opts...)
	if err != nil {
		return nil, err
	}
	if r.legacy.Load() {
		return nil, errors.New("evalsha: WithLegacyScripts is for servers before Redis 7, which have no functions; use New for them")
	}
	lib, err := registry.NewFunctionLibrary(reg)
	if err != nil {
		return nil, fmt.Errorf("evalsha: %w", err)
	}
	return &FunctionRunner{runner: r, lib: lib}, nil
}

// Library returns the library the FunctionRunner loads and calls (nil for
// a nil FunctionRunner).
func (f *FunctionRunner) Library() *registry.FunctionLibrary {
	if f == nil {
		return nil
	}
	return f.lib
}

// Client returns the client the FunctionRunner sends commands through (nil
// for a nil FunctionRunner).
func (f *FunctionRunner) Client() redis.UniversalClient {
	if !f.usable() {
		return nil
	}
	return f.runner.client
}

// errNoFunctionRunner is what the methods of a nil FunctionRunner, or of
// one not made by NewFunctionRunner, return.
var errNoFunctionRunner = errors.New("evalsha: the FunctionRunner is nil or was not made by evalsha.NewFunctionRunner; create one with NewFunctionRunner(client, reg)")

// usable reports whether f was made by NewFunctionRunner.
func (f *FunctionRunner) usable() bool { return f != nil && f.runner.usable() && f.lib != nil }

// Stats returns the FunctionRunner's counters (zero for a nil one).
func (f *FunctionRunner) Stats() FunctionStats {
	if f == nil {
		return FunctionStats{}
	}
	return FunctionStats{Calls: f.calls.Load(), Reloads: f.reloads.Load(), ReadOnly: f.readOnly.Load(), Failures: f.failures.Load()}
}

// Run runs script as a function with keys and args, as Runner.Run does
// with EVALSHA: same reply, redis.Nil for a nil reply, *ScriptError for
// other errors. A node without the library gets it (FUNCTION LOAD REPLACE
// on every primary) and the call is sent once more.
func (f *FunctionRunner) Run(ctx context.Context, script *registry.Script, keys []string, args ...any) *redis.Cmd {
	if !f.usable() {
		return failedCmd(ctx, errNoFunctionRunner)
	}
	f.calls.Add(1)
	if err := checkCall(script, keys, args); err != nil {
		return f.failed(ctx, script, err)
	}
	if ctx == nil || ctx.Err() != nil {
		return f.failed(ctx, script, &ScriptError{Script: script.ID(), Err: checkContext(ctx, "run")})
	}
	name, err := f.lib.Function(script)
	if err != nil {
		return f.failed(ctx, script, fmt.Errorf("evalsha: %w", err))
	}
	cmd := f.send(ctx, f.runner.client, script, name, keys, args)
	if isFunctionNotFound(cmd.Err()) {
		f.runner.emit(Event{Kind: EventFunctionReload, Script: script, Err: cmd.Err()})
		if err := f.Load(ctx); err != nil {
			return f.failed(ctx, script, err)
		}
		cmd = f.send(ctx, f.runner.client, script, name, keys, args)
	}
	return f.finish(script, cmd)
}

// RunMany sends calls in one pipeline and returns one *redis.Cmd per call,
// in the order of calls, as Runner.RunMany does. When any call came back
// "Function not found", the library is loaded once and those calls are
// re-sent in a second pipeline (so they run after the others). The error
// is the first call's error other than redis.Nil, or the context's error.
func (f *FunctionRunner) RunMany(ctx context.Context, calls []Call) ([]*redis.Cmd, error) {
	if !f.usable() {
		return failedAll(ctx, len(calls), errNoFunctionRunner)
	}
	if err := checkContext(ctx, "RunMany"); err != nil {
		return failedAll(ctx, len(calls), err)
	}
	cmds := make([]*redis.Cmd, len(calls))
	names := make([]string, len(calls))
	var pending []int
	for i, c := range calls {
		f.calls.Add(1)
		err := checkCall(c.Script, c.Keys, c.Args)
		if err == nil {
			names[i], err = f.lib.Function(c.Script)
		}
		if err != nil {
			cmds[i] = f.failed(ctx, c.Script, fmt.Errorf("evalsha: %w", err))
			continue
		}
		pending = append(pending, i)
	}
	sent := append([]int(nil), pending...)
	for round := 0; round < 2 && len(pending) > 0; round++ {
		if round > 0 {
			f.runner.emit(Event{Kind: EventFunctionReload, Script: calls[pending[0]].Script, Err: cmds[pending[0]].Err()})
			if err := f.Load(ctx); err != nil {
				for _, i := range pending {
					cmds[i].SetErr(err)
				}
				break
			}
		}
		pipe := f.runner.client.Pipeline()
		for _, i := range pending {
			cmds[i] = f.send(ctx, pipe, calls[i].Script, names[i], calls[i].Keys, calls[i].Args)
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		retry := pending[:0]
		for _, i := range pending {
			if isFunctionNotFound(cmds[i].Err()) {
				retry = append(retry, i)
			}
		}
		pending = retry
	}
	for _, i := range sent {
		f.finish(calls[i].Script, cmds[i])
	}
	var first error
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil && first == nil {
			first = err
		}
	}
	return cmds, first
}

func (f *FunctionRunner) send(ctx context.Context, via redis.Cmdable, script *registry.Script, name string, keys []string, args []any) *redis.Cmd {
	if script.ReadOnly() {
		f.readOnly.Add(1)
		return via.FCallRO(ctx, name, keys, args...)
	}
	return via.FCall(ctx, name, keys, args...)
}

// finish wraps a final error with the script's name and counts it.
func (f *FunctionRunner) finish(script *registry.Script, cmd *redis.Cmd) *redis.Cmd {
	if err := cmd.Err(); err != nil && err != redis.Nil {
		var se *ScriptError
		if !errors.As(err, &se) {
			err = &ScriptError{Script: script.ID(), Err: err}
			cmd.SetErr(err)
		}
		f.failures.Add(1)
		f.runner.emit(Event{Kind: EventError, Script: script, Err: err})
	}
	return cmd
}

// Load loads the library (FUNCTION LOAD REPLACE) on every primary of a
// cluster or ring, or on the one server of any other client.
func (f *FunctionRunner) Load(ctx context.Context) error {
	if !f.usable() {
		return errNoFunctionRunner
	}
	if err := checkContext(ctx, "FunctionRunner.Load"); err != nil {
		return err
	}
	f.reloads.Add(1)
	load := func(ctx context.Context, c *redis.Client) error {
		if err := c.FunctionLoadReplace(ctx, f.lib.Code).Err(); err != nil {
			return fmt.Errorf("evalsha: load function library %s on %s: %w", f.lib.Name, c.Options().Addr, err)
		}
		return nil
	}
	switch c := f.runner.client.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, load)
	case *redis.Ring:
		return c.ForEachShard(ctx, load)
	}
	if err := f.runner.client.FunctionLoadReplace(ctx, f.lib.Code).Err(); err != nil {
		return fmt.Errorf("evalsha: load function library %s: %w", f.lib.Name, err)
	}
	return nil
}

// Subscribe is Runner.Subscribe: one shared subscription connection per
// FunctionRunner, multiplexing every channel.
func (f *FunctionRunner) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	if !f.usable() {
		return nil, errNoFunctionRunner
	}
	return f.runner.Subscribe(ctx, channel, deliver)
}

// SubscribeClassic is Runner.SubscribeClassic.
func (f *FunctionRunner) SubscribeClassic(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	if !f.usable() {
		return nil, errNoFunctionRunner
	}
	return f.runner.SubscribeClassic(ctx, channel, deliver)
}

// Close closes the shared subscription connection (not the client).
func (f *FunctionRunner) Close() error {
	if !f.usable() {
		return errNoFunctionRunner
	}
	return f.runner.Close()
}

func (f *FunctionRunner) failed(ctx context.Context, s *registry.Script, err error) *redis.Cmd {
	f.failures.Add(1)
	return f.runner.failed(ctx, s, err)
}

// isFunctionNotFound reports whether err is the reply to FCALL of a
// function the node does not have.
func isFunctionNotFound(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "ERR Function not found")
}
