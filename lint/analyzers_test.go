package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// found runs Check and renders the diagnostics whose code starts with one
// of the prefixes as "line:col CODE".
func found(t *testing.T, src string, cfg *Config, prefixes ...string) []string {
	t.Helper()
	var out []string
	for _, d := range Check("t.lua", []byte(src), cfg) {
		for _, p := range prefixes {
			if strings.HasPrefix(codeDigits(d.Code), p) {
				out = append(out, fmt.Sprintf("%d:%d %s", d.Line, d.Column, d.Code))
				break
			}
		}
	}
	return out
}

type lintCase struct {
	name string
	src  string
	want []string
}

func runCases(t *testing.T, codes []string, cases []lintCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := found(t, c.src, nil, codes...)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("source:\n%s\n(-want +got):\n%s", c.src, diff)
			}
		})
	}
}

func TestGlobals(t *testing.T) {
	runCases(t, []string{"1"}, []lintCase{
		{"std globals are fine", "local t = {KEYS[1], ARGV[1], redis.call('GET', KEYS[1]), cjson.encode({}), bit.band(1, 2), struct.pack('>I', 1), cmsgpack.pack(1), string.format('%d', 1), math.floor(1.5), table.concat({}), tostring(1), unpack({}), _VERSION}\nreturn t", nil},
		{"print is undefined in Redis", "print(1)", []string{"1:1 W113"}},
		{"require and dofile too", "local m = require('x')\ndofile('y')\nreturn m", []string{"1:11 W113", "2:1 W113"}},
		{"setting a global", "counter = 1", []string{"1:1 W111"}},
		{"function statement sets a global", "function helper() end", []string{"1:10 W111"}},
		{"mutating a global", "cache.x = 1", []string{"1:1 W112"}},
		{"setting a read-only global", "redis = nil\nKEYS = {}", []string{"1:1 W121", "2:1 W121"}},
		{"setting a field of a library", "string.format = nil", []string{"1:1 W122"}},
		{"new field of a library", "redis.helper = 1\nstring.format.x = 1", []string{"1:1 W142", "2:1 W142"}},
		{"typo in a library field", "return redis.cal('GET', KEYS[1])", []string{"1:8 W143"}},
		{"KEYS and ARGV elements may be set", "KEYS[1] = 'a'\nARGV.x = 1", nil},
		{"local shadows the global", "local print = function() end\nprint(1)", nil},
		{"undefined inside a function", "local function f() return missing end\nreturn f", []string{"1:27 W113"}},
	})
	t.Run("config globals", func(t *testing.T) {
		got := found(t, "helper = 1\nreturn helper, shared", &Config{Globals: []string{"helper"}, ReadGlobals: []string{"shared"}}, "1")
		if len(got) != 0 {
			t.Errorf("globals from Config still reported: %v", got)
		}
		got = found(t, "shared = 1", &Config{ReadGlobals: []string{"shared"}}, "1")
		if diff := cmp.Diff([]string{"1:1 W121"}, got); diff != "" {
			t.Errorf("setting a read global (-want +got):\n%s", diff)
		}
	})
}

func TestUnused(t *testing.T) {
	runCases(t, []string{"2", "3"}, []lintCase{
		{"unused local", "local x = 1", []string{"1:7 W211"}},
		{"used local", "local x = 1\nreturn x", nil},
		{"unused function", "local function f() end", []string{"1:16 W211"}},
		{"unused recursive function", "local function f(n) return f(n - 1) end", []string{"1:16 W211"}},
		{"unused mutually recursive functions, declared first", "local even, odd\nfunction even(n) return odd(n) end\nfunction odd(n) return even(n) end", []string{"2:10 W211", "3:10 W211"}},
		{"unused mutually recursive function values", "local a, b\na = function() return b() end\nb = function() return a() end", []string{"2:1 W211", "3:1 W211"}},
		{"mutually recursive functions in use", "local a, b\na = function() return b() end\nb = function() return a() end\nreturn a()", nil},
		{"unused argument", "local function f(a, b) return a end\nreturn f", []string{"1:21 W212"}},
		{"unused vararg", "local function f(...) end\nreturn f", []string{"1:18 W212"}},
		{"used vararg", "local function f(...) return select('#', ...) end\nlocal function g(...) local x = ... return x end\nreturn f, g", nil},
		{"name beyond the values is never set", "local a, b, c = 1, 2\nreturn a, b, c", []string{"1:13 W221"}},
		{"call fills every name", "local a, b, c = redis.call('TIME')\nreturn a, b, c", nil},
		{"closure in dead code never reads", "local b = KEYS[1]\ndo return end\nlocal g = function() return b end\nreturn g", []string{"1:7 W211"}},
		{"unused self", "local t = {}\nfunction t:m() return 1 end\nreturn t", []string{"2:11 W212"}},
		{"hinted argument", "local function f(_a, b) return b end\nreturn f", nil},
		{"underscore", "local _ = 1\nfor _, v in ipairs(KEYS) do redis.call('GET', v) end", nil},
		{"unused loop variable", "for i = 1, 3 do end\nfor k, v in pairs(KEYS) do redis.call('GET', v) end", []string{"1:5 W213", "2:5 W213"}},
		{"never set", "local x\nreturn x", []string{"1:7 W221"}},
		{"never accessed", "local x = 1\nx = 2", []string{"1:7 W231"}},
		{"mutated only", "local t = {}\nt.x = 1", []string{"1:7 W241"}},
		{"overwritten value", "local x = 1\nx = 2\nreturn x", []string{"1:7 W311"}},
		{"value unused after branch", "local q = 1\nif q then q = 2 end", []string{"2:11 W311"}},
		{"value used in loop", "local n = 0\nfor i = 1, 3 do n = n + i end\nreturn n", nil},
		{"value used on next iteration", "local last\nwhile true do\n  if last then break end\n  last = 1\nend", nil},
		{"value read by a closure", "local s = 1\nlocal function g() return s end\ns = 2\nreturn g", nil},
		{"value set in a closure, never read after", "local r = 1\nr = r + 1\nlocal function c() r = 5 end\nreturn c", []string{"2:1 W311", "3:20 W311"}},
		{"repeat condition reads body local", "repeat local done = true until done", nil},
		{"break keeps value live", "local x = 0\nwhile KEYS[1] do x = 1 break end\nreturn x", nil},
		{"while true always runs its body", "local x = 0\nwhile true do x = 1 break end\nreturn x", []string{"1:7 W311"}},
		{"reads in unreachable code do not count", "local x = KEYS[1]\ndo return end\nlocal c = x", []string{"1:7 W211", "3:7 W211"}},
	})
}

func TestRedefined(t *testing.T) {
	runCases(t, []string{"4"}, []lintCase{
		{"redefined local", "local w = 1\nlocal w = w + 1\nreturn w", []string{"2:7 W411"}},
		{"redefined argument", "local function f(a) local a = 1 return a end\nreturn f", []string{"1:27 W412"}},
		{"shadowed local", "local x = 1\ndo local x = 2 return x end\nreturn x", []string{"2:10 W421"}},
		{"shadowed argument", "local function f(a) if a then local a = 2 return a end end\nreturn f", []string{"1:37 W422"}},
		{"shadowed loop variable", "for i = 1, 2 do if i then local i = 3 return i end end", []string{"1:33 W423"}},
		{"shadowed upvalue", "local w = 1\nlocal function g() local w = 3 return w end\nreturn g, w", []string{"2:26 W431"}},
		{"distinct names", "local a = 1\nlocal b = 2\nreturn a, b", nil},
		{"sibling scopes", "do local a = 1 return a end", nil},
	})
}

func TestUnreachable(t *testing.T) {
	runCases(t, []string{"5"}, []lintCase{
		{"after return in do", "local function g()\n  do return end\n  return 2\nend\nreturn g", []string{"3:3 W511"}},
		{"after if with returns", "local function h(x)\n  if x then return 1 else return 2 end\n  return 3\nend\nreturn h", []string{"3:3 W511"}},
		{"after infinite loop", "while true do end\nreturn 1", []string{"2:1 W511"}},
		{"loop that breaks is fine", "while true do if KEYS[1] then break end end\nreturn 1", nil},
		{"loop executed once", "while true do break end\nfor i = 1, 2 do return i end", []string{"1:1 W512", "2:1 W512"}},
		{"while false", "while false do end\nwhile nil do redis.call('GET', KEYS[1]) end", []string{"1:1 W512", "2:14 W511"}},
		{"if without else", "local function h(x)\n  if x then return 1 end\n  return 2\nend\nreturn h", nil},
		{"unbalanced", "local a, b\na, b = 1\nreturn a, b", []string{"2:1 W532"}},
		{"too many values", "local a = 1, 2\nreturn a", []string{"1:1 W531"}},
		{"call fills the rest", "local a, b\na, b = redis.call('TIME')\nlocal c, d = 1\nreturn a, b, c, d", nil},
		{"empty do", "do end", []string{"1:1 W541"}},
		{"empty branches", "if KEYS[1] then end\nif KEYS[2] then return 1 else end", []string{"1:12 W542", "2:26 W542"}},
	})
}

func TestWhitespaceAndLength(t *testing.T) {
	runCases(t, []string{"6"}, []lintCase{
		{"trailing code whitespace", "local x = 1  \nreturn x", []string{"1:12 W612"}},
		{"whitespace-only line", "local x = 1\n  \nreturn x", []string{"2:1 W611"}},
		{"in a comment", "return 1 -- note  ", []string{"1:17 W614"}},
		{"whitespace-only line in a long comment", "--[[ a\n   \n]]\nreturn 1", []string{"2:1 W611"}},
		{"whitespace-only line in a long string", "return [[\n \n]]", []string{"2:1 W611"}},
		{"in a long string", "local s = [[a  \nb]]\nreturn s", []string{"1:14 W613"}},
		{"clean", "local x = 1\n\nreturn x\n", nil},
		{"long line", "return '" + strings.Repeat("x", 120) + "'", []string{"1:121 W631"}},
		{"CRLF endings are not whitespace", "local x = 1\r\nreturn x\r\n", nil},
	})
	t.Run("limit", func(t *testing.T) {
		src := "return '" + strings.Repeat("x", 30) + "'"
		if got := found(t, src, &Config{MaxLineLength: 20}, "631"); len(got) != 1 {
			t.Errorf("MaxLineLength 20: %v", got)
		}
		if got := found(t, src, &Config{MaxLineLength: -1}, "631"); len(got) != 0 {
			t.Errorf("MaxLineLength -1: %v", got)
		}
	})
	t.Run("header lines are exempt", func(t *testing.T) {
		src := "-- name: s\n-- version: 1\n-- description: " + strings.Repeat("long ", 30) + "\n-- keys: k\n-- args:\nreturn redis.call('GET', KEYS[1])\n"
		if got := found(t, src, nil, "631"); len(got) != 0 {
			t.Errorf("header description reported: %v", got)
		}
	})
}

func TestEmptyStatement(t *testing.T) {
	runCases(t, []string{"551", "931"}, []lintCase{
		{"separator is fine", "local x = 1;\nreturn x", nil},
		{"empty statement", "local x = 1;;\nreturn x", []string{"1:13 E931", "1:13 W551"}},
	})
}

func TestLua51Syntax(t *testing.T) {
	runCases(t, []string{"931", "011"}, []lintCase{
		{"goto and label", "for i = 1, 3 do\n  if i == 2 then goto continue end\n  redis.call('GET', KEYS[1])\n  ::continue::\nend", []string{"2:18 E931", "4:3 E931"}},
		{"goto as a name is Lua 5.1", "local goto = 1\nreturn goto", nil},
		{"integer division", "return 7 // 2", []string{"1:10 E931"}},
		{"bitwise operators", "return 1 & 2, 1 | 2, 1 ~ 2, ~1, 1 << 2, 1 >> 2", []string{"1:10 E931", "1:17 E931", "1:24 E931", "1:29 E931", "1:35 E931", "1:43 E931"}},
		{"statement after break", "while true do break; local x = 1 end", []string{"1:22 E931"}},
		{"hex float is malformed in 5.1", "return 0x1p4", []string{"1:8 E011"}},
		{"plain Lua 5.1", "local t = {1, 2; 3}\nreturn #t ~= 3 and t[1] .. 'x' or -t[2] ^ 2 % 3", nil},
	})
}

func TestRedisKeys(t *testing.T) {
	runCases(t, []string{"90"}, []lintCase{
		{"keys from KEYS", "local k = KEYS[1]\nredis.call('SET', k, ARGV[1])\nfor _, key in ipairs(KEYS) do redis.call('DEL', key) end\nreturn redis.call('MGET', KEYS[1], KEYS[2])", nil},
		{"literal key", "return redis.call('GET', 'config')", []string{"1:26 W901"}},
		{"key from ARGV", "return redis.call('GET', ARGV[1])", []string{"1:26 W901"}},
		{"concatenated key", "return redis.call('GET', KEYS[1] .. ':meta')", []string{"1:26 W902"}},
		{"built through a local", "local k = 'lock:' .. ARGV[1]\nreturn redis.pcall('DEL', k)", []string{"2:27 W902"}},
		{"string.format", "return redis.call('GET', string.format('k:%s', ARGV[1]))", []string{"1:26 W902"}},
		{"values are not keys", "return redis.call('SET', KEYS[1], 'literal value', 'PX', 100)", nil},
		{"keynum commands", "return redis.call('EVAL_RO', 'return 1', 1, 'k')", []string{"1:45 W901"}},
		{"unknown origin is not reported", "local function get(k) return redis.call('GET', k) end\nreturn get(KEYS[1])", nil},
		{"second key of ZUNIONSTORE", "return redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], 'other')", []string{"1:55 W901"}},
	})
}

func TestRedisCommands(t *testing.T) {
	runCases(t, []string{"92"}, []lintCase{
		{"known commands", "redis.call('SET', KEYS[1], 'v')\nreturn redis.pcall('get', KEYS[1])", nil},
		{"unknown command", "return redis.call('GETT', KEYS[1])", []string{"1:19 E922"}},
		{"wrong arity", "return redis.call('GET', KEYS[1], 'extra')", []string{"1:19 E923"}},
		{"too few", "return redis.call('SET', KEYS[1])", []string{"1:19 E923"}},
		{"open argument list is not judged", "return redis.call('DEL', unpack(KEYS))", nil},
		{"denied in scripts", "return redis.call('BLPOP', KEYS[1], 0)", []string{"1:19 E925"}},
		{"blocking command", "return redis.call('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')", []string{"1:19 W924"}},
		{"write in no-writes", "#!lua flags=no-writes\nredis.call('PUBLISH', 'c', 'm')\nreturn redis.call('SET', KEYS[1], 1)", []string{"2:12 E921", "3:19 E921"}},
		{"reads in no-writes", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", nil},
		{"subcommand arity", "return redis.call('OBJECT', 'ENCODING', KEYS[1])", nil},
		{"computed command name is not judged", "return redis.call(ARGV[1], KEYS[1])", nil},
	})
}

const header = "-- name: t\n-- version: 1\n-- description: Test.\n-- keys: lock queue\n-- args: owner\n"

func TestRedisHeader(t *testing.T) {
	runCases(t, []string{"91", "94"}, []lintCase{
		{"all used", header + "redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('DEL', KEYS[2])", nil},
		{"beyond keys", header + "redis.call('SET', KEYS[1], ARGV[1])\nredis.call('DEL', KEYS[2])\nreturn redis.call('GET', KEYS[3])", []string{"8:26 E911"}},
		{"beyond args", header + "redis.call('SET', KEYS[1], ARGV[2])\nreturn redis.call('DEL', KEYS[2], ARGV[1])", []string{"6:28 E912"}},
		{"KEYS[0]", header + "redis.call('SET', KEYS[0], ARGV[1])\nreturn redis.call('DEL', KEYS[1], KEYS[2])", []string{"6:19 E911"}},
		{"declared key unused", header + "return redis.call('SET', KEYS[1], ARGV[1])", []string{"4:15 W913"}},
		{"declared arg unused", header + "return redis.call('DEL', KEYS[1], KEYS[2])", []string{"5:10 W914"}},
		{"whole table use counts", header + "for _, k in ipairs(KEYS) do redis.call('DEL', k) end\nreturn ARGV", nil},
		{"variadic keys", "-- name: t\n-- version: 1\n-- description: Test.\n-- keys: first rest...\n-- args:\nreturn redis.call('DEL', KEYS[1], KEYS[2], KEYS[7])", nil},
		{"invalid shebang flag", "#!lua flags=no-writes,bogus\nreturn 1", []string{"1:1 E941"}},
		{"unknown engine", "#!python\nreturn 1", []string{"1:1 E941"}},
		{"valid shebang", "#!lua flags=no-writes,allow-stale\nreturn 1", nil},
		{"header missing fields", "-- name: t\n-- version: x\nreturn 1", []string{"1:1 E942", "1:1 E942", "1:1 E942", "2:1 E942"}},
		{"no header, no header checks", "return redis.call('GET', KEYS[5])", nil},
	})
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"local = 1", "1:7 E011 expected identifier near '='"},
		{"local x = \nif then end", "2:1 E011 expected expression near 'if'"},
		{"return 1\nreturn 2", "2:1 E011 expected <eof> near 'return'"},
		{"f(", "1:3 E011 expected expression near <eof>"},
		{"local s = 'abc", "1:11 E011 unfinished string"},
		{"local s = [[abc", "1:11 E011 unfinished long string"},
		{"--[[ never closed", "1:1 E011 unfinished long comment"},
		{"if x then\nreturn 1\n", "3:1 E011 expected 'end' (to close 'if' on line 1) near <eof>"},
		{"x = 3..4", "1:5 E011 malformed number near '3..4'"},
		{"return '\\300'", "1:8 E011 escape sequence too large"},
		{"local x = 1 @", "1:13 E011 unexpected symbol near '@'"},
	}
	for _, c := range cases {
		ds := Check("t.lua", []byte(c.src), nil)
		if len(ds) != 1 {
			t.Errorf("%q: want one syntax error, got %v", c.src, ds)
			continue
		}
		d := ds[0]
		if got := fmt.Sprintf("%d:%d %s %s", d.Line, d.Column, d.Code, d.Message); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, c.want)
		}
		if d.Severity != Error {
			t.Errorf("%q: syntax error has severity %v", c.src, d.Severity)
		}
	}
}

// Nested loops once made the liveness fixpoint exponential in depth; this
// finishes only if the per-loop cache keeps it polynomial.
func TestDeepNestingTerminates(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "local v%d = 1 while v%d do v%d = v%d\n", i, i, i, i)
	}
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "v%d = 2 end\n", 59-i)
	}
	// Each "vi = vi" is overwritten by "vi = 2" before the loop test reads
	// it: 60 values unused, nothing else.
	ds := Check("deep.lua", []byte(b.String()), nil)
	if len(ds) != 60 {
		t.Fatalf("want 60 diagnostics, got %d", len(ds))
	}
	for i, d := range ds {
		if d.Code != "W311" || d.Line != i+1 {
			t.Errorf("diagnostic %d: %v, want W311 on line %d", i, d, i+1)
		}
	}
	deep := "return " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300)
	ds = Check("parens.lua", []byte(deep), nil)
	if len(ds) != 1 || ds[0].Message != "chunk has too many syntax levels" {
		t.Errorf("300 nested parentheses: %v, want Lua 5.1's too many syntax levels", ds)
	}
}

func TestOverwrittenMessage(t *testing.T) {
	cases := map[string]string{
		"local x = 1\nx = 2\nreturn x":                                                 "value assigned to variable 'x' is overwritten on line 2 before use",
		"local x = 1\nif KEYS[1] then x = 2 else x = 3 end\nreturn x":                  "value assigned to variable 'x' is unused",
		"local x = KEYS[1]\nif x then x = 2 end":                                       "value assigned to variable 'x' is unused",
		"local x = 1\nwhile KEYS[1] do x = 2 end\nx = 3\nreturn x":                     "value assigned to variable 'x' is unused",
		"local x = 1\nif KEYS[1] then redis.call('GET', KEYS[1]) end\nx = 4\nreturn x": "value assigned to variable 'x' is overwritten on line 3 before use",
	}
	for src, want := range cases {
		ds := Check("t.lua", []byte(src), &Config{Only: []string{"311"}})
		if len(ds) == 0 || ds[0].Message != want {
			t.Errorf("%q:\n got %v\nwant %s", src, ds, want)
		}
	}
}
