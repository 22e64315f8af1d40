package simulate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// TestFunctionLoadTimeout: a library whose top level never ends is
// stopped as Redis stops it, and the server stays usable.
func TestFunctionLoadTimeout(t *testing.T) {
	ctx := context.Background()
	s := New()
	err := s.Do(ctx, "FUNCTION", "LOAD", "#!lua name=spin\nwhile true do end").Err()
	if err == nil || err.Error() != "ERR Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Fatalf("loading an endless library: %v", err)
	}
	if err := s.Do(ctx, "FUNCTION", "LOAD", "#!lua name=ok\nredis.register_function('f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Do(ctx, "FCALL", "f", 0).Int64(); err != nil || v != 1 {
		t.Fatalf("FCALL f = %v, %v", v, err)
	}
}

// TestFunctionsSurviveFlushAllAndScriptFlush: FLUSHALL drops keys and
// SCRIPT FLUSH drops EVAL scripts; neither touches function libraries.
func TestFunctionsSurviveFlushAllAndScriptFlush(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.Do(ctx, "FUNCTION", "LOAD", "#!lua name=keep\nredis.register_function('k', function() return 'kept' end)").Err(); err != nil {
		t.Fatal(err)
	}
	s.Do(ctx, "FLUSHALL")
	s.Do(ctx, "SCRIPT", "FLUSH")
	if v, err := s.Do(ctx, "FCALL", "k", 0).Text(); err != nil || v != "kept" {
		t.Fatalf("FCALL k after FLUSHALL and SCRIPT FLUSH = %q, %v", v, err)
	}
}

// TestFunctionRunnerMatchesRun: a registry script through FunctionRunner
// (FCALL of its library function) answers as through Server.Run
// (EVALSHA), loads the library once, and refuses bad calls alike.
func TestFunctionRunnerMatchesRun(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		t.Fatal(err)
	}
	acquire, _ := reg.Lookup("mutex.acquire@1")
	inspect, _ := reg.Lookup("mutex.inspect@1")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	viaRun := New(WithClock(NewVirtualClock(start)))
	viaFcall := New(WithClock(NewVirtualClock(start)))
	f, err := NewFunctionRunner(viaFcall, reg)
	if err != nil {
		t.Fatal(err)
	}
	lock := []string{"{a}", "{a}:fence"}
	for _, owner := range []string{"alice", "bob", "alice"} {
		want, wantErr := viaRun.Run(ctx, acquire, lock, owner, 1000, "1", "").Result()
		got, gotErr := f.Run(ctx, acquire, lock, owner, 1000, "1", "").Result()
		if fmt.Sprint(want, wantErr) != fmt.Sprint(got, gotErr) {
			t.Fatalf("acquire by %s: Run gave %v, %v; FunctionRunner %v, %v", owner, want, wantErr, got, gotErr)
		}
	}
	want, _ := viaRun.Run(ctx, inspect, []string{"{a}", "{a}:queue"}).Result()
	got, _ := f.Run(ctx, inspect, []string{"{a}", "{a}:queue"}).Result()
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("inspect: Run gave %v; FunctionRunner %v", want, got)
	}
	libs, _ := viaFcall.Do(ctx, "FUNCTION", "LIST").Slice()
	if len(libs) != 1 {
		t.Errorf("FUNCTION LIST has %d libraries, want the one library", len(libs))
	}
	if err := f.Run(ctx, acquire, lock[:1], "x").Err(); err == nil {
		t.Error("FunctionRunner ran mutex.acquire with too few keys and args")
	}
	if err := f.Run(ctx, nil, nil).Err(); err == nil {
		t.Error("FunctionRunner ran a nil script")
	}
}

func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
		ok   bool
	}{
		{"lua name=x", []string{"lua", "name=x"}, true},
		{"  lua   name=x  ", []string{"lua", "name=x"}, true},
		{`lua name="a b"`, []string{"lua", "name=a b"}, true},
		{`lua "n\x41\tq"`, []string{"lua", "nA\tq"}, true},
		{`lua 'it\'s'`, []string{"lua", "it's"}, true},
		{`lua "open`, nil, false},
		{`lua "a"b`, nil, false},
		{"", nil, true},
	} {
		got, ok := splitArgs(c.line)
		if ok != c.ok || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
