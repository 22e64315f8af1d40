package registry_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/luasyntax"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/lint"
	"github.com/redlua/redlua/registry"
)

// syntaxCase is a script Redis refuses to compile. luacheck is luacheck
// 1.1's E011 for it as "LINE:COL MSG" ("" for none), checked against the
// real luacheck where one is installed; lint's E011 must be the same
// unless lcNote says why it is not.
type syntaxCase struct {
	name, src string
	luacheck  string
	lcNote    string
}

// names is prefix1 sep prefix2 ... prefixN.
func names(prefix string, n int, sep string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(sep)
		}
		fmt.Fprintf(&b, "%s%d", prefix, i)
	}
	return b.String()
}

func nested(open, body, close string, n int) string {
	return strings.Repeat(open, n) + body + strings.Repeat(close, n)
}

// syntaxCorpus covers every error Lua 5.1's lexer and parser raise for
// Redis scripts: missing closers with and without "(to close ...)",
// unexpected symbols, expected tokens, statements after return and break,
// strings, long brackets, numerals, escapes, nesting limits, the Lua 5.2+
// syntax Redis refuses, and misuse of ':' calls.
var syntaxCorpus = []syntaxCase{
	{name: "statement after return in if", src: "if x then\nreturn 1\nprint(2)\nend", luacheck: "2:1 expected 'end' (to close 'if' on line 1) near 'return' (indentation-based guess)"},
	{name: "statement after return on one line", src: "if x then return 1 print(2) end", luacheck: "1:20 expected 'end' near 'print'"},
	{name: "statement after return in main chunk", src: "return 1\nprint(2)", luacheck: "2:1 expected <eof> near 'print'"},
	{name: "statement after break", src: "while x do\n  break\n  print(1)\nend", luacheck: ""},
	{name: "break outside a loop", src: "local x = 1\nbreak\n", luacheck: "2:1 'break' is not inside a loop"},
	{name: "break in a function in a loop", src: "while x do\n  local f = function() break end\nend", luacheck: "2:24 'break' is not inside a loop"},
	{name: "missing end of function", src: "local function f()\n  return 1\n", luacheck: "3:1 expected 'end' (to close 'function' on line 1) near <eof>"},
	{name: "missing end of anonymous function", src: "local f = function\n(a)\n  return a\n", luacheck: "4:1 expected 'end' (to close 'function' on line 1) near <eof>"},
	{name: "missing end of do", src: "do\n  local x = 1\n", luacheck: "3:1 expected 'end' (to close 'do' on line 1) near <eof>"},
	{name: "missing until", src: "repeat\n  x = 1\n", luacheck: "3:1 expected 'until' (to close 'repeat' on line 1) near <eof>"},
	{name: "missing end of for", src: "for i = 1, 3 do\n  print(i)\n", luacheck: "3:1 expected 'end' (to close 'for' on line 1) near <eof>"},
	{name: "missing end after else", src: "if a then\n  b()\nelse\n  c()\n", luacheck: "5:1 expected 'end' (to close 'else' on line 3) near <eof>"},
	{name: "missing end after elseif", src: "if a then\n  b()\nelseif c then\n  d()\n", luacheck: "5:1 expected 'end' (to close 'elseif' on line 3) near <eof>"},
	{name: "missing end guessed by indentation", src: "local function f()\n  if x then\n    y()\n  z()\nend\n", luacheck: "4:3 expected 'end' (to close 'if' on line 2) near 'z' (indentation-based guess)"},
	{name: "missing end guessed at less indented end", src: "local function f()\n  while x do\n    y()\nend\n", luacheck: "4:1 expected 'end' (to close 'while' on line 2) near less indented 'end' (indentation-based guess)"},
	{name: "end closes nothing", src: "x = 1\nend", luacheck: "2:1 expected <eof> near 'end'"},
	{name: "else without if", src: "x = 1\nelse\n", luacheck: "2:1 expected <eof> near 'else'"},
	{name: "until without repeat", src: "until x", luacheck: "1:1 expected <eof> near 'until'"},
	{name: "missing ) of call", src: "print(1,\n2\n", luacheck: "3:1 expected ')' (to close '(' on line 1) near <eof>"},
	{name: "missing ) of call on one line", src: "print(1 2)", luacheck: "1:9 expected ')' near '2'"},
	{name: "missing ) of parenthesis", src: "local x = (1 + 2\nreturn x", luacheck: "2:1 expected ')' (to close '(' on line 1) near 'return'"},
	{name: "missing ) of parameters", src: "local function f(a b) end", luacheck: "1:20 expected ')' near 'b'"},
	{name: "missing ] of index", src: "local t = {}\nreturn t[1\n", luacheck: "3:1 expected ']' (to close '[' on line 2) near <eof>"},
	{name: "missing ] of table key", src: "local t = {[1 = 2}", luacheck: "1:15 expected ']' near '='"},
	{name: "missing } over lines", src: "local t = {\n  a = 1,\n  b = 2\n", luacheck: "4:1 expected '}' (to close '{' on line 1) near <eof>"},
	{name: "missing } on one line", src: "local t = {1 2}", luacheck: "1:14 expected '}' near '2'"},
	{name: "unexpected symbol as statement", src: "local x = 1 @", luacheck: "1:13 expected statement near '@'"},
	{name: "unexpected keyword as expression", src: "local x = \nif", luacheck: "2:1 expected expression near 'if'"},
	{name: "unexpected operator in expression", src: "return 1 + * 2", luacheck: "1:12 expected expression near '*'"},
	{name: "missing condition", src: "if then x() end", luacheck: "1:4 expected condition near 'then'"},
	{name: "return return", src: "return return", luacheck: "1:8 expected expression near 'return'"},
	{name: "missing table value", src: "local t = {x = }", luacheck: "1:16 expected expression near '}'"},
	{name: "control byte", src: "x = 1\x01", luacheck: "1:6 expected statement near '\\x01'"},
	{name: "NUL byte", src: "x = 1 \x00", luacheck: "1:7 expected statement near '\\x00'"},
	{name: "NUL byte as a condition's end", src: "if x\x00 then end", luacheck: "1:5 expected 'then' near '\\x00'"},
	{name: "non-ASCII character", src: "x = 1 é", luacheck: "1:7 expected statement near 'é'"},
	{name: "= expected after name", src: "x", luacheck: "1:1 expected '=' near <eof>"},
	{name: "= expected after field", src: "a.b.c\n", luacheck: "2:1 expected '=' near <eof>"},
	{name: "= expected between names", src: "local a\na b = 1", luacheck: "2:3 expected '=' near 'b'"},
	{name: "= expected in table key", src: "t = {[1] 2}", luacheck: "1:10 expected '=' near '2'"},
	{name: "name expected after local", src: "local = 1", luacheck: "1:7 expected identifier near '='"},
	{name: "name expected after local function", src: "local function (x) end", luacheck: "1:16 expected identifier near '('"},
	{name: "name expected after function", src: "function (x) end", luacheck: "1:10 expected identifier near '('"},
	{name: "name expected after dot", src: "local t = a.end", luacheck: "1:13 expected identifier near 'end'"},
	{name: "then expected", src: "if x y() end", luacheck: "1:6 expected 'then' near 'y'"},
	{name: "do expected after while", src: "while x y() end", luacheck: "1:9 expected 'do' near 'y'"},
	{name: "do expected after for", src: "for i = 1, 2 print(i) end", luacheck: "1:14 expected 'do' near 'print'"},
	{name: "comma expected in numeric for", src: "for i = 1 do end", luacheck: "1:11 expected ',' near 'do'"},
	{name: "= or in expected", src: "for k of t do end", luacheck: "1:7 expected '=', ',' or 'in' near 'of'"},
	{name: "in expected", src: "for k, v of t do end", luacheck: "1:10 expected 'in' near 'of'"},
	{name: "parameter expected", src: "function f(a,) end", luacheck: "1:14 expected argument near ')'"},
	{name: "parameter after vararg", src: "x = function(a, ..., b) end", luacheck: "1:20 expected ')' near ','"},
	{name: "vararg outside a vararg function", src: "function f()\n  return ...\nend", luacheck: "2:10 cannot use '...' outside a vararg function"},
	{name: "method call without arguments", src: "a.b:c", luacheck: "1:5 expected method arguments near <eof>"},
	{name: "method as assignment target", src: "a:b = 1", luacheck: "1:5 expected method arguments near '='"},
	{name: "method followed by field", src: "obj:method.x()", luacheck: "1:11 expected method arguments near '.'"},
	{name: "method name in function statement", src: "function a:b.c() end", luacheck: "1:13 expected '(' near '.'"},
	{name: "compound assignment", src: "local x = 1\nx += 1\nreturn x", luacheck: ""},
	{name: "compound assignment on two targets", src: "a, b += 1", luacheck: "1:6 compound assignment not allowed on tuples near add= near '+'"},
	{name: "expression as statement", src: "x * 1000", luacheck: "1:5 expected '=' near '1000'"},
	{name: "parenthesis as target", src: "(x) = 1", luacheck: "1:1 expected statement near '('"},
	{name: "call as second target", src: "x, f() = 1", luacheck: "1:8 expected call or indexing near '='"},
	{name: "call as target", src: "f() = 1", luacheck: "1:5 expected statement near '='"},
	{name: "string argument then name", src: "print(\"a\" \"b\" x)", luacheck: "1:11 expected ')' near '\"b\"'"},
	{name: "ambiguous call", src: "local f = g\n(h)()", luacheck: "", lcNote: "luacheck 1.1 accepts a call whose '(' starts a line; lint keeps Lua 5.1's error, as Redis rejects the script"},
	{name: "goto", src: "goto done\n::done::", luacheck: ""},
	{name: "label", src: "::top::\nreturn 1", luacheck: ""},
	{name: "floor division", src: "return 7 // 2", luacheck: ""},
	{name: "bitwise and", src: "return 1 & 2", luacheck: ""},
	{name: "shift", src: "return 1 << 2", luacheck: ""},
	{name: "bitwise not", src: "return ~1", luacheck: ""},
	{name: "variable attribute", src: "local x <const> = 1", luacheck: ""},
	{name: "empty statement", src: ";", luacheck: ""},
	{name: "double semicolon", src: "local x = 1;;", luacheck: ""},
	{name: "unfinished string at eof", src: "return 'abc", luacheck: "1:8 unfinished string"},
	{name: "unfinished string at newline", src: "local s = \"abc\nreturn s", luacheck: "1:11 unfinished string"},
	{name: "unfinished string with NUL", src: "return 'a\\0b\n", luacheck: "1:8 unfinished string"},
	{name: "backslash at eof", src: "return 'abc\\", luacheck: "1:12 invalid escape sequence '\\'"},
	{name: "unfinished long string", src: "local s = [[abc\n\ndef", luacheck: "1:11 unfinished long string"},
	{name: "unfinished long string of level 2", src: "return [==[ x ]=]", luacheck: "1:8 unfinished long string"},
	{name: "unfinished long comment", src: "--[[ never\nclosed\n", luacheck: "1:1 unfinished long comment"},
	{name: "invalid long string delimiter", src: "return [==x", luacheck: "1:8 invalid long string delimiter"},
	{name: "escape sequence too large", src: "return '\\300'", luacheck: "1:9 invalid decimal escape sequence '\\300'"},
	{name: "escape sequence too large mid-string", src: "return 'ab\\n\\256c'", luacheck: "1:13 invalid decimal escape sequence '\\256'"},
	{name: "malformed number with two dots", src: "x = 3..4", luacheck: "1:7 expected statement near '.4'"},
	{name: "malformed hexadecimal", src: "return 0x", luacheck: "1:8 malformed number"},
	{name: "malformed exponent", src: "return 1e", luacheck: "1:8 malformed number"},
	{name: "malformed number with letters", src: "return 12abc", luacheck: "1:10 expected <eof> near 'abc'"},
	{name: "numeral ends at a dot after exponent", src: "return 1e+5.5", luacheck: "1:12 expected <eof> near '.5'"},
	{name: "too many syntax levels in parentheses", src: "return " + nested("(", "1", ")", 199), luacheck: "", lcNote: "luacheck 1.1 has no nesting limit; lint keeps Lua 5.1's, as Redis rejects the script"},
	{name: "too many syntax levels in blocks", src: nested("do ", "", " end", 200), luacheck: "", lcNote: "luacheck 1.1 has no nesting limit; lint keeps Lua 5.1's, as Redis rejects the script"},
	{name: "too many syntax levels in tables", src: "return " + nested("{", "", "}", 200), luacheck: "", lcNote: "luacheck 1.1 has no nesting limit; lint keeps Lua 5.1's, as Redis rejects the script"},
	{name: "too many locals in one statement", src: "local " + names("a", 201, ", ") + " = 1", luacheck: ""},
	{name: "too many locals in a function", src: "local function f()\n" + names("local b", 201, " = 1\n") + " = 1\nend\nreturn f", luacheck: ""},
	{name: "too many locals with a loop's hidden ones", src: names("local c", 198, " = 1\n") + " = 1\nfor i = 1, 2 do end", luacheck: ""},
	{name: "too many upvalues", src: names("local u", 61, " = 1\n") + " = 1\nreturn function() return " + names("u", 61, " + ") + " end", luacheck: ""},
	{name: "too many locals counting vararg's arg", src: "local function f(" + names("p", 200, ", ") + ", ...) end", luacheck: ""},
	{name: "too many locals counting self", src: "local t = {}\nfunction t:m(" + names("p", 200, ", ") + ") end", luacheck: ""},
	{name: "too many upvalues through a function", src: names("local w", 61, " = 1\n") + " = 1\nreturn function()\n  return function() return " + names("w", 61, " + ") + " end\nend", luacheck: ""},
	{name: "too many variables in assignment", src: names("v", 201, ", ") + " = 1", luacheck: ""},
	{name: "shebang line kept", src: "#!lua\nif x then\n", luacheck: "3:1 expected 'end' (to close 'if' on line 2) near <eof>"},
}

// syntaxAccepted are scripts at Lua 5.1's limits, or using what Redis's
// Lua accepts and another Lua would not, which Redis compiles.
var syntaxAccepted = []struct{ name, src string }{
	{"198 parentheses", "return " + nested("(", "1", ")", 198)},
	{"199 nested blocks", nested("do ", "", " end", 199)},
	{"199 nested tables", "return " + nested("{", "", "}", 199)},
	{"200 locals", "local " + names("a", 200, ", ") + " = 1"},
	{"196 locals and a loop", names("local c", 196, " = 1\n") + " = 1\nfor i = 1, 2 do end"},
	{"60 upvalues", names("local u", 60, " = 1\n") + " = 1\nreturn function() return " + names("u", 60, " + ") + " end"},
	{"200 assignment targets", names("v", 200, ", ") + " = 1"},
	{"hexadecimal float", "return 0x1p4"},
	{"[[ inside a level-1 long string", "return [=[a [[b]=]"},
	{"[=[ inside a level-1 long string", "return [=[a [=[b]=]"},
	{"a third bracket opening a long string", "return [[[a]]"},
	{"unknown escape", "return '\\q'"},
	{"call on one line in a table", "return {f\n(1)}"},
	{"NUL after a numeral", "x = 1\x00\ny = 2"},
	{"NUL after a dot", "return 'a' .\x00 'b'"},
	{"goto as a name", "local goto = 1\nreturn goto"},
	{"break then semicolon", "while true do break; end"},
}

// TestSyntaxAcceptedAsRedisDoes checks that what Redis compiles, the
// strict parse and registration accept.
func TestSyntaxAcceptedAsRedisDoes(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	for _, sc := range syntaxAccepted {
		t.Run(sc.name, func(t *testing.T) {
			if err := c.ScriptLoad(context.Background(), sc.src).Err(); err != nil {
				t.Fatalf("Redis refused it: %v", err)
			}
			if e := luasyntax.CheckLua51("x.lua", []byte(sc.src)); e != nil {
				t.Errorf("CheckLua51: %s", e.LuaText("user_script"))
			}
			for _, p := range registry.Problems(registryParse(sc.src)) {
				if p.Part == registry.PartSyntax {
					t.Errorf("registry: %v", p)
				}
			}
		})
	}
}

// nestedLong are scripts with a "[[" inside a "[[...]]" string or
// comment: every upstream Redis and Valkey build (Lua 5.1 with
// LUA_COMPAT_LSTR 1) refuses them, Debian's build of Redis 7.0 accepts
// them.
var nestedLong = []struct{ name, src string }{
	{"in a string", "return [[a [[b]]"},
	{"in a comment", "return 1\n--[[ x\n [[ y ]]"},
	{"on a later line of a string", "local x = 1\nreturn [[a\n\n [[b]]"},
	{"after [=", "return [[a [=[[b]]"},
}

// TestNestedLongBracketAsTheServerSays: CheckLua51 and the registry refuse
// a nested "[[" with Lua's words and line, as every upstream server does.
// They judge for every supported server at once, so a server that accepts
// it (Debian's 7.0.15, the one such build we know) is the exception: the
// test logs it and still requires the refusal, since the script would not
// load on upstream builds of the same version.
func TestNestedLongBracketAsTheServerSays(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	for _, sc := range nestedLong {
		t.Run(sc.name, func(t *testing.T) {
			e := luasyntax.CheckLua51("x.lua", []byte(sc.src))
			if e == nil {
				t.Fatal("CheckLua51 accepted it")
			}
			got := e.LuaText("user_script")
			if err := c.ScriptLoad(context.Background(), sc.src).Err(); err == nil {
				t.Logf("this server (%s) accepts it, as Debian's build of Redis 7.0 does; upstream builds refuse it, and so does CheckLua51: %s", serverVersion(t, c), got)
			} else if line, msg := redisSyntaxError(t, c, sc.src); e.LuaLine != line || e.LuaMsg != msg {
				t.Errorf("CheckLua51: %s\nserver:     user_script:%d: %s", got, line, msg)
			}
			_, err := registry.ParseScript("x.v1.lua", []byte(withHeader(sc.src)))
			refused := false
			for _, p := range registry.Problems(err) {
				if p.Part == registry.PartSyntax && strings.Contains(p.Msg, ": nesting of [[...]] is deprecated near '['") {
					refused = true
				}
			}
			if !refused {
				t.Errorf("registry: %v, want Lua's nesting error", err)
			}
		})
	}
}

// serverVersion is "redis 7.0.15" or "valkey 8.0.1" for the server c
// talks to.
func serverVersion(t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	name, version := "redis", ""
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch k {
		case "redis_version":
			version = v
		case "valkey_version":
			name, version = "valkey", v
		case "server_name":
			name = v
		}
	}
	return name + " " + version
}

// acceptsNestedLong reports whether the server compiles a nested "[[" (a
// build without LUA_COMPAT_LSTR 1, such as Debian's 7.0.15).
func acceptsNestedLong(c *redis.Client) bool {
	return c.ScriptLoad(context.Background(), "return [[a [[b]]").Err() == nil
}

func registryParse(src string) error {
	_, err := registry.ParseScript("x.v1.lua", []byte(withHeader(src)))
	return err
}

var redisCompileErr = regexp.MustCompile(`^ERR Error compiling script \(new function\): user_script:(\d+): (.*)$`)

// redisSyntaxError loads src on the server and returns the line and
// message of the compile error it answers.
func redisSyntaxError(t *testing.T, c *redis.Client, src string) (int, string) {
	t.Helper()
	err := c.ScriptLoad(context.Background(), src).Err()
	if err == nil {
		t.Fatalf("Redis compiled %q", src)
	}
	m := redisCompileErr.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("Redis answered %q, not a compile error", err)
	}
	line, _ := strconv.Atoi(m[1])
	return line, m[2]
}

const syntaxHeader = "-- name: x\n-- version: 1\n-- description: d\n-- keys:\n-- args:\n"

// withHeader makes src a script file, keeping a shebang first.
func withHeader(src string) string {
	if strings.HasPrefix(src, "#!") {
		i := strings.IndexByte(src, '\n')
		return src[:i+1] + syntaxHeader + src[i+1:]
	}
	return syntaxHeader + src
}

// lintE011 is lint's E011 for src as "LINE:COL MSG", or "".
func lintE011(src string) string {
	for _, d := range lint.Check("x.lua", []byte(src), nil) {
		if d.Code == "E011" {
			return fmt.Sprintf("%d:%d %s", d.Line, d.Column, d.Message)
		}
	}
	return ""
}

// realLuacheckE011 runs the real luacheck, if installed, over every case
// and returns each case's E011 as "LINE:COL MSG" ("" for none); ok is
// false when no real luacheck is found.
func realLuacheckE011(t *testing.T, cases []syntaxCase) (map[string]string, bool) {
	path, err := exec.LookPath("luacheck")
	if err == nil {
		out, _ := exec.Command(path, "--version").Output()
		if !bytes.HasPrefix(out, []byte("Luacheck: ")) {
			// Our own luacheck comes first on PATH; the real one is the
			// system's.
			path, err = "/usr/bin/luacheck", nil
			if _, statErr := os.Stat(path); statErr != nil {
				err = statErr
			}
		}
	}
	if err != nil {
		if os.Getenv("REDLUA_REQUIRE_LUACHECK") == "1" {
			t.Fatalf("REDLUA_REQUIRE_LUACHECK=1 and no real luacheck: %v", err)
		}
		return nil, false
	}
	dir := t.TempDir()
	var files []string
	for i, c := range cases {
		f := filepath.Join(dir, fmt.Sprintf("case%03d.lua", i))
		if err := os.WriteFile(f, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	cmd := exec.Command(path, append([]string{"--no-config", "--codes", "--formatter", "plain"}, files...)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("luacheck: %v", err)
	}
	got := map[string]string{}
	line := regexp.MustCompile(`^(.*case\d+\.lua):(\d+):(\d+): \(E011\) (.*)$`)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := line.FindStringSubmatch(sc.Text()); m != nil {
			if _, seen := got[m[1]]; !seen {
				got[m[1]] = m[2] + ":" + m[3] + " " + m[4]
			}
		}
	}
	res := map[string]string{}
	for i, c := range cases {
		res[c.name] = got[files[i]]
	}
	return res, true
}

// TestSyntaxErrorsAsRedisSays compiles each malformed script with a real
// Redis 7 and checks that luasyntax words and places the error as Redis
// does, that registration reports Redis's text at Redis's line, and that
// lint's E011 is luacheck's.
func TestSyntaxErrorsAsRedisSays(t *testing.T) {
	if len(syntaxCorpus) < 40 {
		t.Fatalf("corpus has %d cases, want at least 40", len(syntaxCorpus))
	}
	srv := redistest.Standalone(t)
	c := srv.Client()
	lc, haveLC := realLuacheckE011(t, syntaxCorpus)
	for _, sc := range syntaxCorpus {
		t.Run(sc.name, func(t *testing.T) {
			line, msg := redisSyntaxError(t, c, sc.src)
			e := luasyntax.CheckLua51("x.lua", []byte(sc.src))
			if e == nil {
				t.Errorf("CheckLua51 accepted it; Redis: %d: %s", line, msg)
			} else if e.LuaLine != line || strings.NewReplacer("\r", " ", "\n", " ").Replace(e.LuaMsg) != msg {
				t.Errorf("CheckLua51: %d: %s\nRedis:      %d: %s", e.LuaLine, e.LuaMsg, line, msg)
			}

			file := withHeader(sc.src)
			fline, fmsg := redisSyntaxError(t, c, file)
			want := fmt.Sprintf("user_script:%d: %s", fline, fmsg)
			_, err := registry.ParseScript("x.v1.lua", []byte(file))
			var got *registry.Error
			for _, p := range registry.Problems(err) {
				if p.Part == registry.PartSyntax {
					got = p
					break
				}
			}
			switch {
			case got == nil:
				t.Errorf("registry reported no syntax problem (%v); Redis: %s", err, want)
			case got.Line != fline || got.Msg != want && !strings.HasPrefix(got.Msg, want+" ("):
				t.Errorf("registry: line %d: %s\nRedis:    line %d: %s", got.Line, got.Msg, fline, want)
			}

			ours := lintE011(sc.src)
			if sc.lcNote == "" && ours != sc.luacheck {
				t.Errorf("lint E011 %q\nluacheck   %q", ours, sc.luacheck)
			}
			if haveLC && lc[sc.name] != sc.luacheck {
				t.Errorf("real luacheck %q\ncorpus says   %q", lc[sc.name], sc.luacheck)
			}
		})
	}
}

// mutants are the repository's own scripts (lua/) with one line deleted,
// or one line cut before its last word or '(': mostly scripts with a
// missing 'end', ')', 'then' or operand, as an edit leaves them. Every
// step-th one is kept, so the test stays quick.
func mutants(t *testing.T, step int) []syntaxCase {
	files, err := filepath.Glob("../lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in ../lua: %v", err)
	}
	var all []syntaxCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		join := func(i int, repl ...string) string {
			parts := append(append(append([]string{}, lines[:i]...), repl...), lines[i+1:]...)
			return strings.Join(parts, "\n")
		}
		for i, l := range lines {
			if s := strings.TrimSpace(l); s == "" || strings.HasPrefix(s, "--") {
				continue
			}
			all = append(all, syntaxCase{name: fmt.Sprintf("%s without line %d", filepath.Base(f), i+1), src: join(i)})
			l = strings.TrimRight(l, " ")
			if j := strings.LastIndexAny(l, " ("); j > 0 {
				all = append(all, syntaxCase{name: fmt.Sprintf("%s with line %d cut", filepath.Base(f), i+1), src: join(i, l[:j])})
			}
		}
	}
	var kept []syntaxCase
	for i := 0; i < len(all); i += step {
		kept = append(kept, all[i])
	}
	return kept
}

// TestSyntaxMutantsAsRedisSays compares, on mutants of real scripts, what
// Redis says (an error's line and text, or nothing) with CheckLua51, and
// what the real luacheck says with lint's E011. (With step 1, all 4,826
// mutants agree: 3,051 Redis errors and every luacheck E011.)
func TestSyntaxMutantsAsRedisSays(t *testing.T) {
	cases := mutants(t, 20)
	srv := redistest.Standalone(t)
	c := srv.Client()
	lc, haveLC := realLuacheckE011(t, cases)
	flat := strings.NewReplacer("\r", " ", "\n", " ")
	lenient := acceptsNestedLong(c)
	for _, sc := range cases {
		want := ""
		if err := c.ScriptLoad(context.Background(), sc.src).Err(); err != nil {
			m := redisCompileErr.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("%s: Redis answered %q, not a compile error", sc.name, err)
			}
			want = m[1] + ": " + m[2]
		}
		got := ""
		if e := luasyntax.CheckLua51("x.lua", []byte(sc.src)); e != nil {
			got = fmt.Sprintf("%d: %s", e.LuaLine, flat.Replace(e.LuaMsg))
		}
		if got != want && !(lenient && strings.Contains(got, "nesting of [[...]] is deprecated")) {
			t.Errorf("%s:\nCheckLua51 %q\nRedis      %q", sc.name, got, want)
		}
		if haveLC {
			if ours := lintE011(sc.src); ours != lc[sc.name] {
				t.Errorf("%s:\nlint E011 %q\nluacheck  %q", sc.name, ours, lc[sc.name])
			}
		}
	}
}
