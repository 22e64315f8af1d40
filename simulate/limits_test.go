package simulate

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// answers fails the test unless the server still serves a command and a
// script (its lock was released and its interpreter works).
func answers(t *testing.T, s *Server, after string) {
	t.Helper()
	ctx := context.Background()
	if pong, err := s.Do(ctx, "PING").Text(); err != nil || pong != "PONG" {
		t.Fatalf("after %s the server answers PING with %q, %v", after, pong, err)
	}
	if v, err := s.RunSource(ctx, "return #KEYS + tonumber(ARGV[1])", []string{"{a}k"}, 41).Int64(); err != nil || v != 42 {
		t.Fatalf("after %s a script gets %d, %v", after, v, err)
	}
}

// The memory budget: a string past lua.MaxStringSize fails with Lua's
// memory error before anything is allocated, as Redis reports a script
// whose allocation failed ("Error running script <sha>, <message>", the
// error handler not called), and pcall catches it as Lua's pcall does.
func TestMemoryBudgetIsLuasMemoryError(t *testing.T) {
	s := New()
	ctx := context.Background()
	for _, src := range []string{
		"return string.rep('x', 2^29 + 1)",
		"return string.rep('abcd', 2^28)",
		// the same 2 KiB string for each of half a million matches: 1 GiB
		"local r = string.rep('y', 2048) return string.gsub(string.rep('x', 2^19), 'x', {x = r})",
		"local r = string.rep('y', 2048) return string.gsub(string.rep('x', 2^19), 'x', function() return r end)",
		"local r = string.rep('y', 2048) return string.gsub(string.rep('x', 2^19), 'x', r)",
	} {
		sha := sha1Hex(src)
		_, err := s.RunSource(ctx, src, nil).Result()
		if want := "ERR Error running script " + sha + ", not enough memory"; err == nil || err.Error() != want {
			t.Errorf("%s = %v, want %q", src, err, want)
		}
		answers(t, s, src)
	}
	got, err := s.RunSource(ctx, "return {pcall(string.rep, 'x', 2^30)}", nil).Slice()
	if err != nil || len(got) != 2 || got[0] != nil || got[1] != "not enough memory" {
		t.Errorf("pcall(string.rep, 'x', 2^30) = %v, %v; want false, \"not enough memory\"", got, err)
	}
	answers(t, s, "pcall")
}

// A Go panic inside a script's run (a bug of the simulator, simulated here
// by a Go function that panics) is an error reply naming the script, and
// the server stays usable with a fresh interpreter.
func TestGoPanicInScriptIsAnErrorReply(t *testing.T) {
	s := New()
	ctx := context.Background()
	if err := s.RunSource(ctx, "return 1", nil).Err(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.sandbox().globals.RawSetString("boom", s.sandbox().L.NewFunction(func(*lua.LState) int {
		panic("simulator bug")
	}))
	s.mu.Unlock()
	src := "redis.call('SET', KEYS[1], 'before') return boom()"
	_, err := s.RunSource(ctx, src, []string{"{a}k"}).Result()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Error running script "+sha1Hex(src)+", ") || !strings.Contains(err.Error(), "simulator bug") {
		t.Fatalf("a panicking script = %v, want an error reply naming the script and the panic", err)
	}
	answers(t, s, "a Go panic in a script")
	if v, err := s.Do(ctx, "GET", "{a}k").Text(); err != nil || v != "before" {
		t.Errorf("the write before the panic = %q, %v; want it kept, as Redis keeps a failed script's writes", v, err)
	}
	if err := s.RunSource(ctx, "return boom()", nil).Err(); err == nil || !strings.Contains(err.Error(), "nonexistent global variable 'boom'") {
		t.Errorf("the interpreter after the panic still has the injected global: %v", err)
	}

	// No Lua pcall catches it.
	s.mu.Lock()
	s.sandbox().globals.RawSetString("boom", s.sandbox().L.NewFunction(func(*lua.LState) int {
		panic("simulator bug")
	}))
	s.mu.Unlock()
	src = "local ok = pcall(boom) return 'caught'"
	if err := s.RunSource(ctx, src, nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR Error running script "+sha1Hex(src)+", simulator bug") {
		t.Errorf("pcall of a panicking Go function = %v, want the script to fail naming the panic", err)
	}
	answers(t, s, "a Go panic under pcall")
}

// panickingClock panics on its first Now calls, as a hostile or broken
// Clock might.
type panickingClock struct{ left atomic.Int32 }

func (c *panickingClock) Now() time.Time {
	if c.left.Add(-1) >= 0 {
		panic("clock broken")
	}
	return time.Unix(1700000000, 0)
}

// A panic outside Lua (here in the server's clock, read while the server
// lock is held) comes back as an error, and the lock is released.
func TestPanicOutsideLuaReleasesTheServer(t *testing.T) {
	clock := &panickingClock{}
	s := New(WithClock(clock))
	ctx := context.Background()
	clock.left.Store(1)
	if err := s.RunSource(ctx, "return 1", nil).Err(); err == nil || !strings.Contains(err.Error(), "clock broken") {
		t.Errorf("a script on a panicking clock = %v, want an error naming the panic", err)
	}
	answers(t, s, "a panic in a script's clock")
	clock.left.Store(1)
	if err := s.Do(ctx, "SET", "{a}k", "v").Err(); err == nil || !strings.Contains(err.Error(), "clock broken") {
		t.Errorf("a command on a panicking clock = %v, want an error naming the panic", err)
	}
	answers(t, s, "a panic in a command's clock")
}

// Deep recursion and unbounded C-call nesting inside the functions engine
// (FCALL) fail as under EVAL, and the engine keeps serving.
func TestFunctionLimits(t *testing.T) {
	s := New()
	ctx := context.Background()
	lib := "#!lua name=deep\n" +
		"local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end\n" +
		"redis.register_function('deep', function(keys, args) return f(tonumber(args[1])) end)\n" +
		"redis.register_function('unpackn', function(keys, args) local t = {} for i = 1, tonumber(args[1]) do t[i] = i end return select('#', unpack(t)) end)\n"
	if err := s.Do(ctx, "FUNCTION", "LOAD", lib).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Do(ctx, "FCALL", "deep", 0, 1000).Int64(); err != nil || v != 1000 {
		t.Errorf("FCALL deep 1000 = %d, %v", v, err)
	}
	if err := s.Do(ctx, "FCALL", "deep", 0, 30000).Err(); err == nil || !strings.Contains(err.Error(), "stack overflow") {
		t.Errorf("FCALL deep 30000 = %v, want a stack overflow", err)
	}
	if v, err := s.Do(ctx, "FCALL", "unpackn", 0, 7999).Int64(); err != nil || v != 7999 {
		t.Errorf("FCALL unpackn 7999 = %d, %v", v, err)
	}
	if err := s.Do(ctx, "FCALL", "unpackn", 0, 8000).Err(); err == nil || !strings.Contains(err.Error(), "too many results to unpack") {
		t.Errorf("FCALL unpackn 8000 = %v, want too many results to unpack", err)
	}
	if v, err := s.Do(ctx, "FCALL", "deep", 0, 10).Int64(); err != nil || v != 10 {
		t.Errorf("FCALL deep 10 after the limits = %d, %v", v, err)
	}
}

// A context that ends while a script loops stops it, and the server
// answers afterwards.
func TestEndlessScriptStopsAtDeadline(t *testing.T) {
	s := New()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.RunSource(ctx, "local function f(n) return f(n + 1) end return f(1)", nil).Err()
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("an endless tail call with a 50ms deadline = %v, want the deadline's error", err)
	}
	answers(t, s, "an endless script")
}
