package simulate

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lib builds a library's code: the shebang line, then the body lines.
func lib(name string, body ...string) string {
	code := "#!lua name=" + name
	for _, l := range body {
		code += "\n" + l
	}
	return code
}

const fnRW = `redis.register_function('set_get', function(keys, args) redis.call('SET', keys[1], args[1]) return redis.call('GET', keys[1]) end)`
const fnRO = `redis.register_function{function_name='reader', callback=function(keys, args) return {keys[1], args[1], #keys, #args, redis.call('EXISTS', keys[1])} end, flags={'no-writes'}, description='reads one key'}`
const fnROWrites = `redis.register_function{function_name='sneaky', callback=function(keys) return redis.call('SET', keys[1], 'x') end, flags={'no-writes'}}`

// functionCases run in order on a redis-server whose functions and keys
// were flushed and on a fresh simulator; every reply must agree.
var functionCases = [][][]any{
	// FUNCTION LOAD's errors, in the order Redis checks them.
	{
		{"FUNCTION", "LOAD", "return 1"},
		{"FUNCTION", "LOAD", "#!lua"},
		{"FUNCTION", "LOAD", "#!lua name=a"},
		{"FUNCTION", "LOAD", "#!lua\nx"},
		{"FUNCTION", "LOAD", "#!lua name=a foo=bar\nx"},
		{"FUNCTION", "LOAD", "#!lua name=a name=b\nx"},
		{"FUNCTION", "LOAD", "#!js name=a\nx"},
		{"FUNCTION", "LOAD", "#! lua name=a\nx"},
		{"FUNCTION", "LOAD", "#!LUA name=a NAME=b\nx"},
		{"FUNCTION", "LOAD", "#!lua name=a-b\nx"},
		{"FUNCTION", "LOAD", "#!lua name=\"a b\"\nx"},
		{"FUNCTION", "LOAD", "  #!lua name=a\nx"},
		{"FUNCTION", "LOAD", lib("a", "x = 1")},
		{"FUNCTION", "LOAD", lib("a", "local x = string.len('a')")},
		{"FUNCTION", "LOAD", lib("a", "redis.call('GET', 'x')")},
		{"FUNCTION", "LOAD", lib("a", "local t = redis.setresp")},
		{"FUNCTION", "LOAD", lib("a", "return 1")},
		{"FUNCTION", "LOAD", lib("a", "error('boom')")},
		{"FUNCTION", "LOAD", lib("a", "local x = nil + 1")},
		{"FUNCTION", "LOAD", lib("a", "local x = {} .. 'a'")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('bad-name', function() end)")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('', function() end)")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('g', function() end, 3)")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function()")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('x')")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('g', 'x')")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function({}, function() end)")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g', callback='x'}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g', callback=function() end, flags='no-writes'}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g', callback=function() end, flags={'bogus'}}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g', callback=function() end, flags={true}}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g', callback=function() end, foo=1}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g', callback=function() end, description={}}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{callback=function() end}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{function_name='g'}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function{[1]='x'}")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('g', function() end)", "redis.register_function('G', function() end)")},
		{"FUNCTION", "LOAD", lib("a", "redis.log(redis.LOG_NOTICE, 'loading', redis.REDIS_VERSION) redis.register_function(1, function() return redis.REDIS_VERSION_NUM end)")},
		{"FUNCTION", "LOAD", lib("a", "redis.register_function('g', function() end)")},
		{"FUNCTION", "LOAD", lib("b", "redis.register_function('G', function() end)")},
		{"FUNCTION", "LOAD", "REPLACE"},
		{"FUNCTION", "LOAD", "FOO", "x"},
		{"FCALL", "1", "0"},
		{"FCALL", "nope", "0"},
	},
	// FCALL and FCALL_RO replies and flags.
	{
		{"FUNCTION", "LOAD", lib("rw", fnRW, fnRO, fnROWrites)},
		{"FCALL", "set_get", "1", "k", "v"},
		{"FCALL", "SET_GET", "1", "k", "v2"},
		{"FCALL", "reader", "2", "k", "other", "a1"},
		{"FCALL_RO", "reader", "1", "k", "a1"},
		{"FCALL_RO", "set_get", "1", "k", "v3"},
		{"FCALL", "sneaky", "1", "k"},
		{"FCALL_RO", "sneaky", "1", "k"},
		{"FCALL", "reader", "x"},
		{"FCALL", "reader", "5", "a"},
		{"FCALL", "reader", "-1"},
		{"FCALL", "nope", "x"},
		{"GET", "k"},
		{"EVAL", "return redis.call('FCALL', 'reader', 0)", "0"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "rw"},
		{"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "R*"},
		{"FUNCTION", "LIST", "LIBRARYNAME"},
		{"FUNCTION", "LIST", "FOO"},
		{"FUNCTION", "LIST", "WITHCODE", "WITHCODE"},
	},
	// The runtime environment: keys and args are parameters, no KEYS or
	// ARGV, no register_function, globals protected, errors name the function.
	{
		{"FUNCTION", "LOAD", lib("env",
			"redis.register_function('globals', function(keys, args) return {KEYS, ARGV} end)",
			"redis.register_function('again', function() redis.register_function('x', function() end) end)",
			"redis.register_function('boom', function() error('boom') end)",
			"redis.register_function('assign', function() x = 1 end)",
			"redis.register_function('libs', function() return {string.len('abc'), math.floor(2.5), cjson.encode({1}), redis.sha1hex('')} end)",
			"local helper = function(n) return n * 2 end",
			"redis.register_function('closure', function(keys, args) return helper(tonumber(args[1])) end)",
			"redis.register_function('resp3', function(keys) redis.setresp(3) return redis.call('HGETALL', keys[1]) end)",
			"redis.register_function('status', function() return redis.status_reply('FINE') end)",
			"redis.register_function('err', function() return redis.error_reply('MY failure') end)",
			"redis.register_function('pcall', function() return redis.pcall('INCR', 'notanumber_key') end)",
		)},
		{"SET", "notanumber_key", "x"},
		{"HSET", "h", "a", "1"},
		{"FCALL", "globals", "0"},
		{"FCALL", "again", "0"},
		{"FCALL", "boom", "0"},
		{"FCALL", "assign", "0"},
		{"FCALL", "libs", "0"},
		{"FCALL", "closure", "0", "21"},
		{"FCALL", "resp3", "1", "h"},
		{"FCALL", "status", "0"},
		{"FCALL", "err", "0"},
		{"FCALL", "pcall", "0"},
	},
	// REPLACE, DELETE, FLUSH, DUMP and RESTORE.
	{
		{"FUNCTION", "LOAD", lib("one", "redis.register_function('f1', function() return 1 end)")},
		{"FUNCTION", "LOAD", lib("one", "redis.register_function('f1', function() return 2 end)")},
		{"FCALL", "f1", "0"},
		{"FUNCTION", "LOAD", "REPLACE", lib("one", "redis.register_function('f1', function() return 3 end)")},
		{"FCALL", "f1", "0"},
		{"FUNCTION", "LOAD", "REPLACE", lib("one", "local x = = 1")},
		{"FCALL", "f1", "0"},
		{"FUNCTION", "LOAD", lib("two", "redis.register_function('F1', function() return 4 end)")},
		{"FUNCTION", "DUMP"},
		{"FUNCTION", "DELETE", "nope"},
		{"FUNCTION", "DELETE", "ONE"},
		{"FUNCTION", "DELETE", "one"},
		{"FCALL", "f1", "0"},
		{"FUNCTION", "FLUSH", "foo"},
		{"FUNCTION", "FLUSH", "sync", "x"},
		{"FUNCTION", "FLUSH", "ASYNC"},
		{"FUNCTION", "LIST"},
		{"FUNCTION", "RESTORE", "abc"},
		{"FUNCTION", "RESTORE", "abc", "foo"},
		{"FUNCTION", "FOO"},
		{"FLUSHALL"},
	},
}

func TestFunctionsMatchRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	for i, seq := range functionCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err := client.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			// Cross-slot keys and keys outside KEYS are the simulator's own checks.
			sim := diffNew(t, WithClock(NewVirtualClock(time.Now())), WithCrossSlotCheck(false), WithKeyDiscipline(false))
			for _, args := range seq {
				want := sortFunctionLists(outcomeOf(client.Do(ctx, args...)))
				got := sortFunctionLists(outcomeOf(sim.Do(ctx, args...)))
				if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); diff != "" {
					t.Errorf("%q: simulator differs from redis-server (-redis +simulator):\n%s", args, diff)
				}
			}
		})
	}
}

// TestFunctionDumpRestoreMatchesRedis: a dump restores in the simulator;
// a real server's dump (LZF-compressed when the code is long) restores in
// the simulator, and the simulator's dump restores on the real server.
func TestFunctionDumpRestoreMatchesRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	if err := client.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	long := lib("long", "-- "+fmt.Sprintf("%0200d", 0), "redis.register_function('lf', function() return 'long' end)")
	short := lib("short", "redis.register_function('sf', function() return 'short' end)")
	sim := diffNew(t)
	for _, code := range []string{long, short} {
		if err := client.FunctionLoad(ctx, code).Err(); err != nil {
			t.Fatal(err)
		}
		if err := sim.Do(ctx, "FUNCTION", "LOAD", code).Err(); err != nil {
			t.Fatal(err)
		}
	}
	realDump, err := client.FunctionDump(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	simDump, err := sim.Do(ctx, "FUNCTION", "DUMP").Text()
	if err != nil {
		t.Fatal(err)
	}
	step := func(args ...any) {
		t.Helper()
		compareDo(t, t.Errorf, client, sim, args...)
	}
	// With one library in the way the error names it (with two, which one
	// Redis names depends on its dictionary's order).
	step("FUNCTION", "DELETE", "short")
	step("FUNCTION", "RESTORE", realDump)
	step("FUNCTION", "RESTORE", simDump, "REPLACE")
	step("FUNCTION", "FLUSH")
	step("FUNCTION", "RESTORE", simDump)
	step("FCALL", "lf", 0)
	step("FCALL", "sf", 0)
	step("FUNCTION", "RESTORE", realDump, "FLUSH")
	step("FCALL", "lf", 0)
	step("FUNCTION", "DELETE", "short")
	step("FUNCTION", "LOAD", lib("other", "redis.register_function('sf', function() return 'other' end)"))
	step("FUNCTION", "RESTORE", simDump, "REPLACE")
	step("FUNCTION", "RESTORE", simDump[:len(simDump)-1]+"x")
	step("FUNCTION", "LIST", "LIBRARYNAME", "long")

	// A library LZF cannot shrink is stored uncompressed by Redis too: the
	// payloads are byte for byte the same.
	step("FUNCTION", "FLUSH")
	step("FUNCTION", "LOAD", lib("a1", "redis.register_function('fa', function() return 1 end)"))
	step("FUNCTION", "DUMP")
}

// sortFunctionLists orders FUNCTION LIST's libraries and their functions
// by name: Redis lists both in its dictionaries' (undefined) order.
func sortFunctionLists(o outcome) outcome {
	libs, ok := o.Val.([]any)
	if !ok {
		return o
	}
	name := func(v any, key string) string {
		m, _ := v.(map[any]any)
		s, _ := m[key].(string)
		return s
	}
	for _, l := range libs {
		m, ok := l.(map[any]any)
		if !ok {
			return o
		}
		if fns, ok := m["functions"].([]any); ok {
			sort.Slice(fns, func(i, j int) bool { return name(fns[i], "name") < name(fns[j], "name") })
		}
	}
	sort.Slice(libs, func(i, j int) bool { return name(libs[i], "library_name") < name(libs[j], "library_name") })
	return o
}

// TestFunctionCompileErrorsMatchRedis: a library that does not compile is
// refused with Redis's prefix and position; the parser's own wording
// after the position is a documented difference of the simulator.
func TestFunctionCompileErrorsMatchRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	sim := diffNew(t)
	for _, code := range []string{lib("c", "redis.register_function('g' function() end)"), lib("c", "", "syntax error here")} {
		want := client.Do(ctx, "FUNCTION", "LOAD", code).Err()
		got := sim.Do(ctx, "FUNCTION", "LOAD", code).Err()
		if want == nil || got == nil {
			t.Fatalf("%q: redis-server said %v, the simulator %v; both should refuse it", code, want, got)
		}
		prefix := func(s string) string { return s[:strings.LastIndex(s, ": ")+2] }
		if prefix(want.Error()) != prefix(got.Error()) {
			t.Errorf("%q: redis-server said %q, the simulator %q", code, want, got)
		}
	}
}
