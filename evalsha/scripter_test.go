package evalsha_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/simulate"
)

var (
	_ evalsha.Scripter = (*evalsha.Runner)(nil)
	_ evalsha.Scripter = (*simulate.Server)(nil)
)

// The same code, written against Scripter, sees the same errors offline
// and on a real server: *ScriptError with the same text.
func scripterContract(t *testing.T, s evalsha.Scripter) {
	ctx := context.Background()
	reg := testRegistry(t)
	fail, incr := script(t, reg, "echo.fail"), script(t, reg, "counter.incr")

	err := s.Run(ctx, fail, []string{"k"}, "quota exceeded").Err()
	var se *evalsha.ScriptError
	var rerr redis.Error
	if !errors.As(err, &se) || se.Script != "echo.fail@1" || err.Error() != "echo.fail@1: quota exceeded" || !errors.As(err, &rerr) {
		t.Errorf("script error = %v (%T); want *ScriptError \"echo.fail@1: quota exceeded\" wrapping a redis.Error", err, err)
	}
	err = s.Run(ctx, incr, nil, 1).Err()
	want := "counter.incr@1: takes exactly 1 KEYS (counter), got 0; pass what the header's keys: and args: lines declare"
	if !errors.As(err, &se) || err.Error() != want {
		t.Errorf("bad call = %v; want %s", err, want)
	}
	if n, err := s.Run(ctx, incr, []string{"n"}, 2).Int64(); err != nil || n != 2 {
		t.Errorf("incr = %d, %v", n, err)
	}
	if err := s.Run(ctx, fail, []string{"k"}, "").Err(); err != nil {
		t.Errorf("echo = %v", err)
	}
}

func TestScripterSimulator(t *testing.T) { scripterContract(t, simulate.New()) }

func TestScripterMiniredis(t *testing.T) {
	_, c := miniClient(t)
	scripterContract(t, newRunner(t, c))
}

func TestScripterRealServer(t *testing.T) {
	scripterContract(t, newRunner(t, redistest.Standalone(t).Client()))
}

func TestEventKindString(t *testing.T) {
	for k, want := range map[evalsha.EventKind]string{
		evalsha.EventNoScript: "NoScript", evalsha.EventLegacyServer: "LegacyServer",
		evalsha.EventNoReadOnlyCommands: "NoReadOnlyCommands", evalsha.EventError: "Error",
		evalsha.EventKind(0): "EventKind(0)",
	} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}
