package simulate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/registry"
)

// FunctionRunner runs registry scripts on a Server as Redis 7 functions,
// as evalsha.FunctionRunner does on a real server: the registry becomes
// one library (registry.NewFunctionLibrary), loaded on first use, and each
// script is called with FCALL, or FCALL_RO when its script declares no writes (registry.Script.ReadOnly).
// It satisfies the same Run and Subscribe methods as the Server, so code
// written against a backend interface runs in either mode.
type FunctionRunner struct {
	srv *Server
	lib *registry.FunctionLibrary
}

// NewFunctionRunner returns a FunctionRunner for srv that runs reg's scripts.
func NewFunctionRunner(srv *Server, reg *registry.Registry) (*FunctionRunner, error) {
	if srv == nil {
		return nil, errors.New("simulate: NewFunctionRunner needs a server (simulate.New()); got nil")
	}
	lib, err := registry.NewFunctionLibrary(reg)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	return &FunctionRunner{srv: srv, lib: lib}, nil
}

// Library returns the library the FunctionRunner loads and calls.
func (f *FunctionRunner) Library() *registry.FunctionLibrary {
	if f == nil {
		return nil
	}
	return f.lib
}

// Run runs script through its function with keys and args, converted as
// Server.Run converts them; the reply has the same Go shape. A call with
// fewer or more keys or args than the header declares is refused before
// it runs. Errors name the function instead of the script's SHA1.
func (f *FunctionRunner) Run(ctx context.Context, script *registry.Script, keys []string, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, "fcall")
	if f == nil || f.srv == nil || f.lib == nil {
		cmd.SetErr(errors.New("simulate: FunctionRunner is nil or was not made by simulate.NewFunctionRunner; create one with NewFunctionRunner(srv, reg)"))
		return cmd
	}
	if script == nil {
		cmd.SetErr(errNilScript)
		return cmd
	}
	if err := evalsha.CheckCall(script, len(keys), len(args)); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	name, err := f.lib.Function(script)
	if err != nil {
		cmd.SetErr(fmt.Errorf("simulate: %w", err))
		return cmd
	}
	if err := f.srv.checkCall(ctx, "run function ", name); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	argv, err := argStrings(make([]string, 0, len(args)), args, true)
	if err != nil {
		cmd.SetErr(err)
		return cmd
	}
	s := f.srv
	var pubs []publication
	reply, err := s.locked(scriptPanic, name, func() (Reply, error) {
		fn := s.functions.funcs[strings.ToLower(name)]
		if fn == nil {
			if _, errText := s.loadLibrary(ctx, f.lib.Code, true); errText != "" {
				return Reply{}, fmt.Errorf("simulate: load function library %s: %s", f.lib.Name, errText)
			}
			fn = s.functions.funcs[strings.ToLower(name)]
		}
		var (
			reply Reply
			err   error
		)
		reply, pubs, err = s.invokeLocked(ctx, invocation{
			sb: s.functions.eng.sb, fn: fn.fn, id: script.ID(), sha: name, errName: name, params: true,
			readOnly: fn.noWrites, allowCrossSlot: fn.crossSlot,
		}, keys, argv)
		return reply, err
	})
	s.deliver(pubs)
	return s.complete(cmd, reply, err)
}

// Subscribe is Server.Subscribe.
func (f *FunctionRunner) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	if f == nil || f.srv == nil {
		return nil, errors.New("simulate: Subscribe: the FunctionRunner is nil or was not made by simulate.NewFunctionRunner; create one with NewFunctionRunner(srv, reg)")
	}
	return f.srv.Subscribe(ctx, channel, deliver)
}
