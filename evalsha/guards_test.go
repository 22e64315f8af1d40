package evalsha_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/ctxcheck"
	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// TestContextsAreCheckedEverywhere runs every exported call of evalsha
// that takes a context with a nil context and with a cancelled one: each
// returns an error that says which (the nil one names the fix, the
// cancelled one wraps context.Canceled), before anything is sent (the
// client points at a port nobody listens on), and nothing panics. It also
// runs them on nil and zero receivers.
func TestContextsAreCheckedEverywhere(t *testing.T) {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		t.Fatal(err)
	}
	script, err := reg.Lookup("mutex.release@1")
	if err != nil {
		t.Fatal(err)
	}
	keys, args := []string{"{g}:lock"}, []any{"token", "{g}:released"}
	if err := script.CheckCall(len(keys), len(args)); err != nil {
		t.Fatalf("the test's call does not fit %s: %v", script.ID(), err)
	}
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer client.Close()
	runner, err := evalsha.New(client)
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	fn, err := evalsha.NewFunctionRunner(client, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer fn.Close()
	calls := []evalsha.Call{{Script: script, Keys: keys, Args: args}}
	deliver := func(string) {}

	// Each entry runs the call on the given receivers with ctx.
	table := map[string]func(ctx context.Context, r *evalsha.Runner, f *evalsha.FunctionRunner) error{
		"Load": func(ctx context.Context, _ *evalsha.Runner, _ *evalsha.FunctionRunner) error {
			return evalsha.Load(ctx, client, reg)
		},
		"Runner.Run": func(ctx context.Context, r *evalsha.Runner, _ *evalsha.FunctionRunner) error {
			return r.Run(ctx, script, keys, args...).Err()
		},
		"Runner.RunMany": func(ctx context.Context, r *evalsha.Runner, _ *evalsha.FunctionRunner) error {
			cmds, err := r.RunMany(ctx, calls)
			if len(cmds) != len(calls) || (err != nil && cmds[0].Err() == nil) {
				return fmt.Errorf("RunMany returned %d commands, the first with no error, for %d calls", len(cmds), len(calls))
			}
			return err
		},
		"Runner.RunReplicated": func(ctx context.Context, r *evalsha.Runner, _ *evalsha.FunctionRunner) error {
			cmd, _, err := r.RunReplicated(ctx, script, 1, 10, keys, args...)
			if cmd == nil || cmd.Err() == nil {
				return fmt.Errorf("RunReplicated returned command %v without the error %v", cmd, err)
			}
			return err
		},
		"Runner.Subscribe": func(ctx context.Context, r *evalsha.Runner, _ *evalsha.FunctionRunner) error {
			_, err := r.Subscribe(ctx, "{g}:released", deliver)
			return err
		},
		"FunctionRunner.Load": func(ctx context.Context, _ *evalsha.Runner, f *evalsha.FunctionRunner) error {
			return f.Load(ctx)
		},
		"FunctionRunner.Run": func(ctx context.Context, _ *evalsha.Runner, f *evalsha.FunctionRunner) error {
			return f.Run(ctx, script, keys, args...).Err()
		},
		"FunctionRunner.RunMany": func(ctx context.Context, _ *evalsha.Runner, f *evalsha.FunctionRunner) error {
			cmds, err := f.RunMany(ctx, calls)
			if len(cmds) != len(calls) || (err != nil && cmds[0].Err() == nil) {
				return fmt.Errorf("RunMany returned %d commands, the first with no error, for %d calls", len(cmds), len(calls))
			}
			return err
		},
		"Runner.SubscribeClassic": func(ctx context.Context, r *evalsha.Runner, _ *evalsha.FunctionRunner) error {
			_, err := r.SubscribeClassic(ctx, "redlua:revoke:g", deliver)
			return err
		},
		"FunctionRunner.SubscribeClassic": func(ctx context.Context, _ *evalsha.Runner, f *evalsha.FunctionRunner) error {
			_, err := f.SubscribeClassic(ctx, "redlua:revoke:g", deliver)
			return err
		},
		"FunctionRunner.Subscribe": func(ctx context.Context, _ *evalsha.Runner, f *evalsha.FunctionRunner) error {
			_, err := f.Subscribe(ctx, "{g}:released", deliver)
			return err
		},
	}

	bound := make(map[string]func(context.Context) error, len(table))
	for name, call := range table {
		bound[name] = func(ctx context.Context) error { return call(ctx, runner, fn) }
	}
	ctxcheck.Check(t, ".", bound)
	for _, name := range slices.Sorted(maps.Keys(table)) {
		call := table[name]
		if strings.HasPrefix(name, "Load") {
			continue // a function: no receiver
		}
		for _, recv := range []struct {
			what string
			r    *evalsha.Runner
			f    *evalsha.FunctionRunner
		}{
			{"a nil receiver", nil, nil},
			{"a zero receiver", &evalsha.Runner{}, &evalsha.FunctionRunner{}},
		} {
			err := ctxcheck.NoPanic(name, func() error { return call(context.Background(), recv.r, recv.f) })
			if err == nil || !strings.Contains(err.Error(), "was not made by") {
				t.Errorf("%s on %s = %v, want an error saying how to make one", name, recv.what, err)
			}
		}
	}
}

// TestNilArgumentsAreRefused covers the other nil arguments of the
// package's functions: nil scripts, clients and registries get errors.
func TestNilArgumentsAreRefused(t *testing.T) {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer client.Close()
	runner, err := evalsha.New(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"CheckCall(nil)":         func() error { return evalsha.CheckCall(nil, 0, 0) },
		"Load(nil client)":       func() error { return evalsha.Load(ctx, nil, reg) },
		"Load(nil registry)":     func() error { return evalsha.Load(ctx, client, nil) },
		"New(nil)":               func() error { _, err := evalsha.New(nil); return err },
		"New(nil option)":        func() error { _, err := evalsha.New(client, nil); return err },
		"NewFunctionRunner(nil)": func() error { _, err := evalsha.NewFunctionRunner(client, nil); return err },
		"Run(nil script)":        func() error { return runner.Run(ctx, nil, nil).Err() },
		"RunMany(nil script)": func() error {
			_, err := runner.RunMany(ctx, []evalsha.Call{{}})
			return err
		},
		"RunReplicated(nil script)": func() error {
			_, _, err := runner.RunReplicated(ctx, nil, 1, 10, nil)
			return err
		},
		"Subscribe(nil deliver)": func() error { _, err := runner.Subscribe(ctx, "c", nil); return err },
		"Close(nil Runner)":      func() error { return (*evalsha.Runner)(nil).Close() },
	} {
		if err := ctxcheck.NoPanic(name, call); err == nil {
			t.Errorf("%s = nil, want an error", name)
		}
	}
	var nilRunner *evalsha.Runner
	var nilFn *evalsha.FunctionRunner
	if nilRunner.Client() != nil || nilRunner.Stats() != (evalsha.Stats{}) || nilRunner.ShardedPubSub() ||
		nilFn.Client() != nil || nilFn.Library() != nil || nilFn.Stats() != (evalsha.FunctionStats{}) {
		t.Error("the accessors of nil runners report something")
	}
	if msg := (*evalsha.ScriptError)(nil).Error(); msg == "" {
		t.Error("a nil ScriptError has no text")
	}
}
