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

// The table cases of the globals analyzer are testdata/globals.lua; the
// Config knobs stay here.
func TestGlobals(t *testing.T) {
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

// Lua 5.2+ syntax is testdata/lua51.lua; these two stay here because
// luacheck judges them differently (it accepts hex floats, and does not
// look past a break in the middle of a block), so they are not in the
// testdata the compat test compares with luacheck.
func TestLua51Syntax(t *testing.T) {
	runCases(t, []string{"931", "011"}, []lintCase{
		{"statement after break", "while true do break; local x = 1 end", []string{"1:22 E931"}},
		{"hexadecimal without digits is malformed", "return 0x", []string{"1:8 E011"}},
	})
}

// A "[[" inside a "[[...]]" string or comment is E932 (every upstream
// Redis and Valkey refuses it); other levels take anything.
func TestNestedLongBracket(t *testing.T) {
	runCases(t, []string{"932", "011"}, []lintCase{
		{"in a string", "return [[a [[b]]", []string{"1:12 E932"}},
		{"in a comment", "--[[ a\n  [[ b ]]\nreturn 1", []string{"2:3 E932"}},
		{"level 1", "return [=[a [[b]=]", nil},
		{"level 1 in level 1", "return [=[a [=[b]=]", nil},
		{"a third bracket", "return [[[a]]", nil},
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
		{"a header after a blank line is one problem", "\n" + header + "return redis.call('DEL', KEYS[1], KEYS[2], ARGV[1])", []string{"2:1 E942"}},
		{"a comment that happens to say keys: is no header", "-- keys: see the README\nreturn redis.call('GET', KEYS[1])", nil},
	})
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"local = 1", "1:7 E011 expected identifier near '='"},
		{"local x = \nif then end", "2:1 E011 expected expression near 'if'"},
		{"return 1\nreturn 2", "2:1 E011 expected <eof> near 'return'"},
		{"f(", "1:2 E011 expected expression near <eof>"},
		{"local s = 'abc", "1:11 E011 unfinished string"},
		{"local s = [[abc", "1:11 E011 unfinished long string"},
		{"--[[ never closed", "1:1 E011 unfinished long comment"},
		{"if x then\nreturn 1\n", "2:1 E011 expected 'end' (to close 'if' on line 1) near 'return' (indentation-based guess)"},
		{"x = 3..4", "1:7 E011 expected statement near '.4'"},
		{"return '\\300'", "1:9 E011 invalid decimal escape sequence '\\300'"},
		{"local x = 1 @", "1:13 E011 expected statement near '@'"},
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

// TestCommandsPerServerLine: the commands analyzer reads the configured
// line's command table (cmdtable.LookupLine).
func TestCommandsPerServerLine(t *testing.T) {
	src := "redis.call('hexpire', KEYS[1], 10, 'FIELDS', 1, 'f')\n" +
		"redis.call('blpop', KEYS[1], 0)\n" +
		"redis.call('wait', '0', '0')\n" +
		"return redis.call('zrank', KEYS[1], 'm', 'WITHSCORE')"
	for _, tc := range []struct {
		server string
		want   []string
	}{
		{"", []string{"1:12 E922", "2:12 E925", "3:12 E925", "4:19 E923"}},
		{Redis72, []string{"1:12 E922", "2:12 W924"}},
		{Redis74, []string{"2:12 W924", "3:12 W924"}},
		{Valkey80, []string{"1:12 E922", "2:12 W924", "3:12 W924"}},
	} {
		got := found(t, src, &Config{Server: tc.server}, "92")
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("server %q (-want +got):\n%s", tc.server, diff)
		}
	}
}
