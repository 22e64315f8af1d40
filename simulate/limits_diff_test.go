package simulate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recurse is a script whose Lua calls nest n+1 deep (the main chunk's
// "return f(n)" is a tail call, so f's frames are all there is).
func recurse(n int) string {
	return fmt.Sprintf("local function f(n) if n == 0 then return 0 end return 1 + f(n-1) end return f(%d)", n)
}

// nested wraps "1" in n pairs of parentheses.
func nested(n int) string {
	return "return " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n)
}

// limitCases exercise Lua 5.1's and Redis's limits, in an order that
// matters: Lua's CallInfo array is 16,384 calls deep on a fresh
// interpreter and 20,000 after its first "stack overflow", and SCRIPT
// FLUSH starts a fresh interpreter. Every case runs on one real server and
// one simulator, in this order.
var limitCases = []struct {
	name  string
	src   string // a script for EVAL; "" runs cmd instead
	cmd   []any
	keys  []string
	flush bool // FLUSHALL before the case
}{
	// unpack and the values a Go (C) function may put on its stack
	{name: "RPUSH 7,999 values via unpack", src: "local t = {} for i = 1, 7999 do t[i] = i end return redis.call('RPUSH', KEYS[1], unpack(t))", keys: []string{"{l}list"}, flush: true},
	{name: "RPUSH 8,000 values via unpack", src: "local t = {} for i = 1, 8000 do t[i] = i end return redis.call('RPUSH', KEYS[1], unpack(t))", keys: []string{"{l}list"}, flush: true},
	{name: "RPUSH 5,114 values via unpack", src: "local t = {} for i = 1, 5114 do t[i] = i end return redis.call('RPUSH', KEYS[1], unpack(t))", keys: []string{"{l}list"}, flush: true},
	{name: "redis.call with 8,002 arguments", src: "local t = {} for i = 1, 7999 do t[i] = i end return redis.call('RPUSH', KEYS[1], 'a', 'b', 'c', unpack(t))", keys: []string{"{l}list"}, flush: true},
	{name: "redis.call with 20,001 arguments built by varargs", src: "local function g(n, ...) if n == 0 then return redis.call('RPUSH', KEYS[1], ...) end return g(n - 1, n, ...) end return g(20000)", keys: []string{"{l}list"}, flush: true},
	{name: "unpack with bounds counts its arguments", src: "local t = {} for i = 1, 8000 do t[i] = i end return #{unpack(t, 1, 7997)}"},
	{name: "unpack with bounds, one too many", src: "local t = {} for i = 1, 8000 do t[i] = i end return #{unpack(t, 1, 7998)}"},
	{name: "unpack of an empty range past 2^31", src: "return select('#', unpack({}, 1, 2^31))"},
	{name: "unpack wrapping C ints", src: "return select('#', unpack({}, -2^31, 2^31))"},
	{name: "unpack of 2^31 nils", src: "return select('#', unpack({}, 1, 2^31 - 1))"},
	{name: "unpack of numeric strings", src: "return {unpack({1, 2, 3}, '2', '3')}"},
	{name: "string.byte of 7,997 bytes", src: "return #{string.byte(string.rep('x', 7997), 1, -1)}"},
	{name: "string.byte of 7,998 bytes", src: "return #{string.byte(string.rep('x', 7998), 1, -1)}"},
	{name: "string.byte defaults", src: "return {string.byte('abc'), string.byte('abc', -1), string.byte('abc', 2, 10), string.byte('abc', 0)}"},
	{name: "struct.unpack of 7,997 values", src: "return select('#', struct.unpack(string.rep('b', 7997), string.rep('a', 8000)))"},
	{name: "struct.unpack of 7,998 values", src: "return select('#', struct.unpack(string.rep('b', 7998), string.rep('a', 8000)))"},
	{name: "cmsgpack.unpack of 7,999 values", src: "return select('#', cmsgpack.unpack(string.rep(string.char(1), 7999)))"},
	{name: "cmsgpack.unpack of 8,000 values", src: "return select('#', cmsgpack.unpack(string.rep(string.char(1), 8000)))"},
	{name: "cmsgpack.unpack_limit of 7,990 values", src: "return select('#', cmsgpack.unpack_limit(string.rep(string.char(1), 9000), 7990))"},

	// Lua call depth: 16,384 on a fresh interpreter...
	{name: "recursion 16,383 deep on a fresh interpreter", src: recurse(16382)},
	{name: "recursion 16,384 deep on a fresh interpreter", src: recurse(16383)},
	// ... and 20,000 after the first overflow.
	{name: "recursion 16,384 deep after an overflow", src: recurse(16383)},
	{name: "recursion 19,999 deep", src: recurse(19998)},
	{name: "recursion 20,000 deep", src: recurse(19999)},
	{name: "recursion under pcall", src: "local function f(n) if n == 0 then return 0 end return 1 + f(n-1) end return {pcall(f, 19996)}"},
	{name: "recursion under pcall, one too deep", src: "local function f(n) if n == 0 then return 0 end return 1 + f(n-1) end return {pcall(f, 19997)}"},
	{name: "unbounded recursion", src: "local function f(n) return 1 + f(n + 1) end return f(1)"},
	{name: "unbounded recursion caught by pcall", src: "local function f(n) return 1 + f(n + 1) end return {pcall(f, 1)}"},
	{name: "SCRIPT FLUSH", cmd: []any{"SCRIPT", "FLUSH"}},
	{name: "recursion 16,384 deep after SCRIPT FLUSH", src: recurse(16383)},

	// C stack: 200 nested calls through Go (C) functions and metamethods
	{name: "__index recursion 198 deep", src: "local t = setmetatable({}, {__index = function(t, k) if k == 0 then return 'bottom' end return t[k - 1] end}) return t[197]"},
	{name: "__index recursion 199 deep", src: "local t = setmetatable({}, {__index = function(t, k) if k == 0 then return 'bottom' end return t[k - 1] end}) return t[198]"},
	{name: "unbounded __index recursion", src: "local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x"},
	{name: "pcall nested 198 deep", src: "local function f(n) if n == 0 then return 'bottom' end return select(2, pcall(f, n - 1)) end return f(198)"},
	{name: "pcall nested 199 deep", src: "local function f(n) if n == 0 then return 'bottom' end return select(2, pcall(f, n - 1)) end return f(199)"},
	{name: "unbounded pcall recursion", src: "local function f() return pcall(f) end return {f()}"},
	{name: "__concat recursion", src: "local mt = {} mt.__concat = function(a, b) return setmetatable({}, mt) .. b end return {pcall(function() return setmetatable({}, mt) .. 'x' end)}"},

	// big strings, within the simulator's memory budget
	{name: "string.rep of 8 MiB", src: "return #string.rep('abcdefgh', 1048576)"},
	{name: "string.rep of a negative count", src: "return string.rep('x', -1)"},
	{name: "string.rep past 2^31", src: "return #string.rep('x', 2^31)"},
	{name: "concatenation doubling to 16 MiB", src: "local s = string.rep('a', 64) for i = 1, 18 do s = s .. s end return #s"},
	{name: "table.concat of 2 MiB", src: "local t = {} for i = 1, 2048 do t[i] = string.rep('x', 1024) end return #table.concat(t, ',')"},
	{name: "string.gsub growing a string", src: "local s, n = string.gsub(string.rep('a', 100000), 'a', 'bb') return {#s, n}"},
	{name: "string.format width of two digits", src: "return string.format('%99d|%5.99f', 1, 1)"},
	{name: "string.format width of three digits", src: "return string.format('%100d', 1)"},
	{name: "string.format precision of three digits", src: "return string.format('%5.100f', 1)"},
	{name: "string.format with five flags", src: "return string.format('%-----5d|', 1)"},
	{name: "string.format with six flags", src: "return string.format('%------5d', 1)"},
	{name: "big string as a reply", src: "return string.rep('x', 1000000)"},
	{name: "big string stored", src: "redis.call('SET', KEYS[1], string.rep('x', 4194304)) return redis.call('STRLEN', KEYS[1])", keys: []string{"{l}big"}, flush: true},

	// big and deep tables
	{name: "table of 100,000 entries", src: "local t = {} for i = 1, 100000 do t[i] = i end return #t"},
	{name: "hash of 100,000 keys", src: "local t = {} for i = 1, 100000 do t['k' .. i] = i end local n = 0 for _ in pairs(t) do n = n + 1 end return n"},
	{name: "cjson.decode nesting 1,001 deep", src: "return cjson.decode('[' .. string.rep('[', 1100) .. string.rep(']', 1100) .. ']')"},
	{name: "cjson.encode nesting 1,001 deep", src: "local t = {} local c = t for i = 1, 1100 do c[1] = {} c = c[1] end return cjson.encode(t)"},
}

// TestLimitsMatchRedis runs limitCases on a real server and on the
// simulator, in order, and compares every reply and error text; after each
// case the simulator still answers.
func TestLimitsMatchRedis(t *testing.T) {
	client := diffStandalone(t).Client()
	sim := diffNew(t)
	ctx := context.Background()
	for _, tc := range limitCases {
		if tc.flush {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := sim.Do(ctx, "FLUSHALL").Err(); err != nil {
				t.Fatal(err)
			}
		}
		var want, got outcome
		if tc.src == "" {
			want = outcomeOf(client.Do(ctx, tc.cmd...))
			got = outcomeOf(sim.Do(ctx, tc.cmd...))
		} else {
			want = outcomeOf(client.Eval(ctx, tc.src, tc.keys))
			got = outcomeOf(sim.RunSource(ctx, tc.src, tc.keys))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: simulator differs from redis-server (-redis +simulator):\n%.2000s", tc.name, diff)
		}
		if pong, err := sim.Do(ctx, "PING").Text(); err != nil || pong != "PONG" {
			t.Fatalf("after %s the simulator answers PING with %q, %v", tc.name, pong, err)
		}
		if v, err := sim.RunSource(ctx, "return redis.call('INCR', KEYS[1])", []string{"{l}after"}).Int64(); err != nil || v < 1 {
			t.Fatalf("after %s a script gets %d, %v", tc.name, v, err)
		}
	}
}

// TestSyntaxLevelsMatchRedis compares the parser's nesting limit (200
// levels, "chunk has too many syntax levels") below it and well past it;
// within two levels of it the simulator may accept what Redis refuses (see
// tooDeep). Texts nested far past it are refused before gopher-lua's
// compiler recurses through them.
func TestSyntaxLevelsMatchRedis(t *testing.T) {
	client := diffStandalone(t).Client()
	sim := diffNew(t)
	ctx := context.Background()
	var cases []string
	for _, n := range []int{150, 198, 300, 100000} {
		cases = append(cases, nested(n))
	}
	for _, n := range []int{50, 300} {
		cases = append(cases, "return #("+strings.Repeat("'a' .. ", n)+"'a')")
	}
	for _, n := range []int{150, 300} {
		cases = append(cases, "return "+strings.Repeat("2 ^ ", n)+"1")
	}
	for _, n := range []int{199, 300} {
		cases = append(cases, strings.Repeat("do ", n)+strings.Repeat("end ", n)+"return 1")
	}
	for _, n := range []int{150, 198, 300, 100000} {
		cases = append(cases, "return "+strings.Repeat("- ", n)+"1")
	}
	for _, n := range []int{100, 198, 300, 100000} {
		cases = append(cases, "return #"+strings.Repeat("{", n)+strings.Repeat("}", n))
	}
	for _, n := range []int{100, 198, 300} {
		cases = append(cases, strings.Repeat("local function f() ", n)+strings.Repeat("end ", n)+"return 1")
	}
	for _, n := range []int{150, 300} {
		cases = append(cases, "local t = {} return "+strings.Repeat("t[", n)+"1"+strings.Repeat("]", n))
	}
	cases = append(cases,
		"return '"+strings.Repeat("(", 500)+"' .. [["+strings.Repeat("{", 500)+"]] -- "+strings.Repeat("(", 500),
		"--[==[ "+strings.Repeat("do ", 500)+" ]==] return 1",
	)
	for _, src := range cases {
		want := outcomeOf(client.Eval(ctx, src, nil))
		got := outcomeOf(sim.RunSource(ctx, src, nil))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%.60s... (%d bytes): simulator differs from redis-server (-redis +simulator):\n%.2000s", src, len(src), diff)
		}
		if pong, err := sim.Do(ctx, "PING").Text(); err != nil || pong != "PONG" {
			t.Fatalf("after %.60s... the simulator answers PING with %q, %v", src, pong, err)
		}
	}
}
