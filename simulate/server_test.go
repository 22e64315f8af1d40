package simulate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

func mustScript(t testing.TB, file, src string) *registry.Script {
	t.Helper()
	s, err := registry.ParseScript(file, []byte(src))
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return s
}

func TestKeyDiscipline(t *testing.T) {
	ctx := context.Background()
	src := "local v = redis.call('GET', KEYS[1])\nreturn redis.call('GET', 'other')"
	script := mustScript(t, "peek.v1.lua", "-- name: peek\n-- version: 1\n-- description: d\n-- keys: k\n-- args:\n"+src)

	err := New().Run(ctx, script, []string{"k"}).Err()
	var de *DisciplineError
	if !errors.As(err, &de) || !errors.Is(err, ErrUndeclaredKey) {
		t.Fatalf("err = %v; want a *DisciplineError wrapping ErrUndeclaredKey", err)
	}
	if de.Script != "peek@1" || de.Line != 7 || de.Key != "other" {
		t.Errorf("error names script %q line %d key %q; want peek@1, line 7, key other", de.Script, de.Line, de.Key)
	}
	if !strings.Contains(err.Error(), "'other'") || !strings.Contains(err.Error(), "peek@1") {
		t.Errorf("message %q does not name the key and the script", err)
	}

	// pcall cannot hide the violation.
	caught := "local ok = pcall(redis.call, 'GET', 'other') return 1"
	if err := New().RunSource(ctx, caught, []string{"k"}).Err(); !errors.Is(err, ErrUndeclaredKey) {
		t.Errorf("violation inside pcall: err = %v; want ErrUndeclaredKey", err)
	}
	// Multi-key commands check every key.
	mget := "return redis.call('MGET', KEYS[1], 'x')"
	if err := New().RunSource(ctx, mget, []string{"k"}).Err(); !errors.Is(err, ErrUndeclaredKey) {
		t.Errorf("MGET with an undeclared key: err = %v; want ErrUndeclaredKey", err)
	}
	// Switched off, the script runs as Redis would run it.
	if _, err := New(WithKeyDiscipline(false)).Run(ctx, script, []string{"k"}).Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("with discipline off: err = %v; want redis.Nil", err)
	}
}

func TestCrossSlot(t *testing.T) {
	ctx := context.Background()
	src := "return #KEYS"
	if err := New().RunSource(ctx, src, []string{"a", "b"}).Err(); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("keys in different slots: err = %v; want ErrCrossSlot", err)
	}
	if n, err := New().RunSource(ctx, src, []string{"{x}a", "{x}b"}).Int64(); err != nil || n != 2 {
		t.Errorf("keys with one hash tag: %d, %v; want 2", n, err)
	}
	flagged := "#!lua flags=allow-cross-slot-keys\n" + src
	if n, err := New().RunSource(ctx, flagged, []string{"a", "b"}).Int64(); err != nil || n != 2 {
		t.Errorf("allow-cross-slot-keys: %d, %v; want 2", n, err)
	}
	if n, err := New(WithCrossSlotCheck(false)).RunSource(ctx, src, []string{"a", "b"}).Int64(); err != nil || n != 2 {
		t.Errorf("check off: %d, %v; want 2", n, err)
	}
}

// TestSlot uses the slots the Redis Cluster specification lists.
func TestSlot(t *testing.T) {
	for key, want := range map[string]int{
		"foo": 12182, "bar": 5061, "123456789": 12739,
		"{foo}.x": 12182, "x{foo}y": 12182, "{bar}foo": 5061,
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d; want %d", key, got, want)
		}
	}
	if Slot("{}foo") == Slot("foo") {
		t.Errorf("an empty hash tag must hash the whole key")
	}
}

func TestTraceAndLogs(t *testing.T) {
	ctx := context.Background()
	s := New()
	src := "redis.call('SET', KEYS[1], ARGV[1])\nredis.pcall('NOSUCH')\nredis.log(redis.LOG_NOTICE, 'set', KEYS[1], 5)\nreturn redis.call('GET', KEYS[1])"
	if v, err := s.RunSource(ctx, src, []string{"k"}, 42).Text(); err != nil || v != "42" {
		t.Fatalf("run = %q, %v", v, err)
	}
	id := sha1Hex(src)
	want := []TraceEntry{
		{Script: id, Args: []string{"SET", "k", "42"}, Reply: Reply{Kind: KindStatus, Str: "OK"}},
		{Script: id, Args: []string{"NOSUCH"}, Reply: Reply{Kind: KindError, Str: errUnknownCmd}},
		{Script: id, Args: []string{"GET", "k"}, Reply: Reply{Kind: KindBulk, Str: "42"}},
	}
	if diff := cmp.Diff(want, s.Trace()); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	wantLogs := []LogLine{{Script: id, Level: LogNotice, Message: "set k 5"}}
	if diff := cmp.Diff(wantLogs, s.Logs()); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	s.ResetTrace()
	if len(s.Trace()) != 0 || len(s.Logs()) != 0 {
		t.Errorf("ResetTrace left %d entries and %d log lines", len(s.Trace()), len(s.Logs()))
	}

	limited := New(WithTraceLimit(2))
	for i := 0; i < 3; i++ {
		limited.RunSource(ctx, "return redis.call('GET', KEYS[1])", []string{fmt.Sprint("k", i)})
	}
	var got []string
	for _, e := range limited.Trace() {
		got = append(got, e.Args[1])
	}
	if diff := cmp.Diff([]string{"k1", "k2"}, got); diff != "" {
		t.Errorf("trace limit keeps the newest (-want +got):\n%s", diff)
	}
}

func TestSubscribe(t *testing.T) {
	ctx := context.Background()
	s := New()
	var got []string
	unsubscribe, err := s.Subscribe(ctx, "events", func(payload string) {
		// Delivery happens after the script released the server.
		v, _ := s.Do(ctx, "GET", "k").Text()
		got = append(got, payload+"/"+v)
	})
	if err != nil {
		t.Fatal(err)
	}
	src := "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('PUBLISH', 'events', ARGV[1])"
	if n, err := s.RunSource(ctx, src, []string{"k"}, "one").Int64(); err != nil || n != 1 {
		t.Fatalf("PUBLISH from a script = %d, %v; want 1 receiver", n, err)
	}
	if n, err := s.Do(ctx, "PUBLISH", "events", "two").Int64(); err != nil || n != 1 {
		t.Fatalf("PUBLISH from Do = %d, %v; want 1 receiver", n, err)
	}
	if diff := cmp.Diff([]string{"one/one", "two/one"}, got); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	unsubscribe()
	unsubscribe() // a second call is harmless
	if n, _ := s.Do(ctx, "PUBLISH", "events", "three").Int64(); n != 0 || len(got) != 2 {
		t.Errorf("after unsubscribe: %d receivers, %d deliveries; want 0 and 2", n, len(got))
	}
	if _, err := s.Subscribe(ctx, "", func(string) {}); err == nil {
		t.Errorf("Subscribe with an empty channel succeeded")
	}
}

// TestConcurrentUse runs scripts, commands and subscriptions from many
// goroutines; each script's read-modify-write must be atomic. Run with -race.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := New()
	const workers, runs = 8, 200
	incr := "local v = tonumber(redis.call('GET', KEYS[1]) or '0') redis.call('SET', KEYS[1], v + 1) redis.call('PUBLISH', 'c', v) return v + 1"
	var delivered sync.Map
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			unsub, err := s.Subscribe(ctx, "c", func(p string) { delivered.Store(p, true) })
			if err != nil {
				t.Error(err)
				return
			}
			defer unsub()
			for i := 0; i < runs; i++ {
				if err := s.RunSource(ctx, incr, []string{"n"}).Err(); err != nil {
					t.Error(err)
					return
				}
				s.Do(ctx, "GET", "n")
				_ = s.Trace()
			}
		}(w)
	}
	wg.Wait()
	if v, err := s.Do(ctx, "GET", "n").Int(); err != nil || v != workers*runs {
		t.Errorf("counter = %d, %v; want %d (a lost update means scripts were not atomic)", v, err, workers*runs)
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := New()
	for name, cmd := range map[string]*redis.Cmd{
		"RunSource": s.RunSource(ctx, "return redis.call('SET', KEYS[1], 'v')", []string{"k"}),
		"Do":        s.Do(ctx, "SET", "k", "v"),
	} {
		if err := cmd.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v; want one wrapping context.Canceled", name, err)
		}
	}
	if _, err := s.Subscribe(ctx, "c", func(string) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe: err = %v; want one wrapping context.Canceled", err)
	}
	if err := s.Do(context.Background(), "GET", "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("a canceled call wrote anyway: GET err = %v", err)
	}
}

func TestArguments(t *testing.T) {
	ctx := context.Background()
	s := New()
	args := []any{"s", []byte("b"), 7, int64(-3), uint8(9), 1.5, float32(0.25), 1e21, true, false, nil, 2 * time.Millisecond}
	got, err := s.RunSource(ctx, "return ARGV", nil, args...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"s", "b", "7", "-3", "9", "1.5", "0.25", "1000000000000000000000", "1", "0", "", "2000000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ARGV (-want +got):\n%s", diff)
	}
	err = s.RunSource(ctx, "return 1", nil, struct{}{}).Err()
	if err == nil || !strings.Contains(err.Error(), "struct {}") {
		t.Errorf("unsupported argument: err = %v; want one naming the type", err)
	}
	if err := s.Run(ctx, nil, nil).Err(); err == nil {
		t.Errorf("Run(nil script) succeeded")
	}
	acquire := mustScript(t, "set.v1.lua", "-- name: set\n-- version: 1\n-- description: d\n-- keys: lock\n-- args: owner ttl_ms\n"+
		"return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])")
	if err := s.Run(ctx, acquire, []string{"{l}"}, "owner-only").Err(); err == nil || !strings.Contains(err.Error(), "ARGV") {
		t.Errorf("Run with too few args: err = %v; want one naming ARGV", err)
	}
	if err := s.Do(ctx, "GET", "{l}").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("a refused call ran anyway: GET err = %v", err)
	}
}

func TestProtocol2(t *testing.T) {
	ctx := context.Background()
	v, err := New(WithProtocol(2)).RunSource(ctx, "return {double = 1.5}", nil).Result()
	if err != nil || v != "1.5" {
		t.Errorf("RESP2 double = %#v, %v; want \"1.5\"", v, err)
	}
	v, err = New().RunSource(ctx, "return {double = 1.5}", nil).Result()
	if err != nil || v != 1.5 {
		t.Errorf("RESP3 double = %#v, %v; want 1.5", v, err)
	}
}

// TestTableKeyedMap: a map reply keyed by a table cannot become a Go map;
// it is an error, not a panic.
func TestTableKeyedMap(t *testing.T) {
	err := New().RunSource(context.Background(), "return {map = {[{1}] = 1}}", nil).Err()
	if err == nil || !strings.Contains(err.Error(), "table as a key") {
		t.Errorf("err = %v; want one explaining the table key", err)
	}
	v, err := New(WithProtocol(2)).RunSource(context.Background(), "return {map = {[{1}] = 1}}", nil).Result()
	if err != nil || !cmp.Equal(v, []any{[]any{int64(1)}, int64(1)}) {
		t.Errorf("RESP2: %#v, %v; want the flat array", v, err)
	}
}

func TestScriptCommands(t *testing.T) {
	ctx := context.Background()
	s := New()
	src := "return redis.call('SET', KEYS[1], ARGV[1])"
	sha, err := s.Do(ctx, "SCRIPT", "LOAD", src).Text()
	if err != nil || sha != sha1Hex(src) {
		t.Fatalf("SCRIPT LOAD = %q, %v", sha, err)
	}
	if v, err := s.Do(ctx, "EVALSHA", strings.ToUpper(sha), 1, "k", "v").Text(); err != nil || v != "OK" {
		t.Errorf("EVALSHA = %q, %v", v, err)
	}
	if err := s.Do(ctx, "EVALSHA_RO", sha, 1, "k", "v").Err(); err == nil || !strings.HasPrefix(err.Error(), errReadOnlyWrite) {
		t.Errorf("EVALSHA_RO of a writing script: err = %v", err)
	}
	if err := s.Do(ctx, "EVAL_RO", "#!lua\nreturn 1", 0).Err(); err == nil || err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
		t.Errorf("EVAL_RO of a shebang script without no-writes: %v", err)
	}
	if v, err := s.Do(ctx, "EVAL", "return #KEYS + #ARGV", 2, "{a}1", "{a}2", "x").Int64(); err != nil || v != 3 {
		t.Errorf("EVAL = %d, %v", v, err)
	}
	if err := s.Do(ctx, "EVAL", "return 1", 3, "a").Err(); err == nil || err.Error() != "ERR Number of keys can't be greater than number of args" {
		t.Errorf("EVAL with too many keys: %v", err)
	}
	if err := s.Do(ctx, "SCRIPT", "FLUSH").Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(ctx, "EVALSHA", sha, 0).Err(); err == nil || err.Error() != "NOSCRIPT No matching script. Please use EVAL." {
		t.Errorf("EVALSHA after flush: %v", err)
	}
}

// TestNoStateLeaks checks that a script cannot leave anything behind for
// the next one in the reused interpreter.
func TestNoStateLeaks(t *testing.T) {
	ctx := context.Background()
	s := New()
	for _, src := range []string{
		"x = 1", "string.len = nil", "rawset(string, 'len', nil)", "setmetatable(_G, {})",
		"getmetatable('').__index = nil", "redis.call = nil", "getmetatable(_G).__newindex = nil",
	} {
		if err := s.RunSource(ctx, src, nil).Err(); err == nil {
			t.Errorf("%q succeeded; want a readonly-table error", src)
		}
	}
	if v, err := s.RunSource(ctx, "return {string.len('abc'), ('ab'):len(), type(redis.call)}", nil).Result(); err != nil ||
		!cmp.Equal(v, []any{int64(3), int64(2), "function"}) {
		t.Errorf("sandbox after attempted changes: %#v, %v", v, err)
	}
	if err := s.RunSource(ctx, "return x", nil).Err(); err == nil {
		t.Errorf("a global survived from an earlier script")
	}
}

func TestRegistryScriptIDInErrors(t *testing.T) {
	ctx := context.Background()
	script := mustScript(t, "boom.v2.lua", "-- name: boom\n-- version: 2\n-- description: d\n-- keys:\n-- args:\nreturn redis.call('GET', 'x')")
	err := New().Run(ctx, script, nil).Err()
	if err == nil || !strings.Contains(err.Error(), "boom@2 line 6") {
		t.Errorf("err = %v; want it to name boom@2 line 6", err)
	}
	// Redis's own error replies name the script by SHA1, as the server does.
	bad := mustScript(t, "bad.v1.lua", "-- name: bad\n-- version: 1\n-- description: d\n-- keys:\n-- args:\nreturn nosuch")
	err = New().Run(ctx, bad, nil).Err()
	want := "bad@1: ERR user_script:6: Script attempted to access nonexistent global variable 'nosuch' script: " + bad.SHA1 + ", on @user_script:6."
	if err == nil || err.Error() != want {
		t.Errorf("err = %v; want %s", err, want)
	}
}
