package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script has one finding of each family the options below select:
// 211 (x), 211 (f), 212 (b), 111 (y), 113 (z), 631 (line 5).
const script = `local x = 1
local function f(a, b) return a end
y = 2
return z
-- ` + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + `
`

// codesOf runs the CLI in dir on script (as sub/a.lua) and returns the
// codes reported, in order, and the exit code.
func codesOf(t *testing.T, dir, rc string, args ...string) (string, string, int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.lua"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc != "" {
		if err := os.WriteFile(filepath.Join(dir, ".luacheckrc"), []byte(rc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	out, stderr, code := runCLI(t, "", append([]string{"--formatter", "plain", "--codes", "--no-default-config"}, append(args, "--", "sub/a.lua")...)...)
	var codes []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if sm := plainLine.FindStringSubmatch(l); sm != nil {
			codes = append(codes, sm[2]+":"+sm[4])
		}
	}
	return strings.Join(codes, " "), stderr, code
}

func TestFlagsAndConfig(t *testing.T) {
	all := "1:W211 2:W211 2:W212 3:W111 4:W113 5:W631"
	cases := []struct {
		name, rc string
		args     []string
		want     string
	}{
		{"nothing", "", nil, all},
		{"--no-config ignores .luacheckrc", "ignore = {'2'}", []string{"--no-config"}, all},
		{"-u", "", []string{"-u"}, "3:W111 4:W113 5:W631"},
		{"-a", "", []string{"-a"}, "1:W211 2:W211 3:W111 4:W113 5:W631"},
		{"-g", "", []string{"-g"}, "1:W211 2:W211 2:W212 5:W631"},
		{"-r changes nothing here", "", []string{"-r"}, all},
		{"combined short flags", "", []string{"-gu"}, "5:W631"},
		{"--only", "", []string{"--only", "1", "631"}, "3:W111 4:W113 5:W631"},
		{"-o attached", "", []string{"-o1"}, "3:W111 4:W113"},
		{"--ignore=", "", []string{"--ignore=21"}, "3:W111 4:W113 5:W631"},
		{"ignore by name", "", []string{"-i", "x", "f"}, "2:W212 3:W111 4:W113 5:W631"},
		{"code/name", "", []string{"-i", "211/f"}, "1:W211 2:W212 3:W111 4:W113 5:W631"},
		{"ignore then enable in one layer: ignore wins", "", []string{"-i", "21", "-e", "212"}, "3:W111 4:W113 5:W631"},
		{"enable beats config ignore", "ignore = {'21'}", []string{"-e", "212"}, "2:W212 3:W111 4:W113 5:W631"},
		{"--globals", "", []string{"--globals", "y", "z"}, "1:W211 2:W211 2:W212 5:W631"},
		{"--read-globals: setting is still reported", "", []string{"--read-globals", "y", "z"}, "1:W211 2:W211 2:W212 3:W121 5:W631"},
		{"--max-line-length", "", []string{"--max-line-length", "200"}, "1:W211 2:W211 2:W212 3:W111 4:W113"},
		{"--no-max-line-length", "", []string{"--no-max-line-length"}, "1:W211 2:W211 2:W212 3:W111 4:W113"},
		{"--std accepted", "", []string{"--std", "lua51+redis"}, all},
		{"config globals", "globals = {'y'}\nread_globals = {'z'}", nil, "1:W211 2:W211 2:W212 5:W631"},
		{"config returns a table", "return {ignore = {'2'}}", nil, "3:W111 4:W113 5:W631"},
		{"config macros", "unused = false\nglobal = false", nil, "5:W631"},
		{"config max_line_length false", "max_line_length = false", nil, "1:W211 2:W211 2:W212 3:W111 4:W113"},
		{"cli beats config line length", "max_line_length = false", []string{"--max-line-length", "50"}, all},
		{"files override", "files['sub'] = {ignore = {'1'}}\nfiles['other'] = {ignore = {'2'}}", nil, "1:W211 2:W211 2:W212 5:W631"},
		{"files autovivify", "files['sub/*.lua'].only = {'113'}", nil, "4:W113"},
		{"more specific override last", "ignore = {'21'}\nfiles['sub'] = {enable = {'212'}}\nfiles['sub/*.lua'] = {ignore = {'2'}}", nil, "3:W111 4:W113 5:W631"},
		{"custom std", "stds.app = {globals = {'y'}, read_globals = {z = {fields = {'k'}}}}\nstd = 'max+app'", nil, "1:W211 2:W211 2:W212 5:W631"},
		{"--std with a config std", "stds.app = {read_globals = {'z'}}", []string{"--std", "app"}, "1:W211 2:W211 2:W212 3:W111 5:W631"},
		{"std replaced drops custom globals", "stds.app = {read_globals = {'z'}}\nstd = 'app'", []string{"--std", "redis"}, all},
		{"new_globals replaces", "globals = {'y', 'z'}\nfiles['sub'] = {new_globals = {'y'}}", nil, "1:W211 2:W211 2:W212 4:W113 5:W631"},
		{"exclude_files", "exclude_files = {'sub/*.lua'}", nil, ""},
		{"include_files", "include_files = {'other/**'}", nil, ""},
		{"--exclude-files", "", []string{"--exclude-files", "sub"}, ""},
		{"unsupported options are accepted", "self = false\nallow_defined = true\nmax_cyclomatic_complexity = 10\ncache = true\njobs = 2\nunused_secondaries = false", nil, all},
		{"helper variables in the config", "local base = {'y'}\nmy_list = {'z'}\nglobals = base\nread_globals = my_list", nil, "1:W211 2:W211 2:W212 5:W631"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, stderr, code := codesOf(t, t.TempDir(), c.rc, c.args...)
			if got != c.want {
				t.Errorf("got %q, want %q (exit %d, stderr %s)", got, c.want, code, stderr)
			}
		})
	}
}

func TestConfigLookup(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".luacheckrc"), []byte("ignore = {'2'}\nfiles['deep/sub'] = {ignore = {'1'}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Found in a parent directory; its globs are relative to its own directory.
	got, stderr, _ := codesOf(t, filepath.Join(dir, "deep"), "")
	if got != "5:W631" {
		t.Errorf("config in a parent: got %q (stderr %s)", got, stderr)
	}
	// --config names another file, also searched upwards.
	if err := os.WriteFile(filepath.Join(dir, "other.rc"), []byte("only = {'631'}"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, _ = codesOf(t, filepath.Join(dir, "deep"), "", "--config", "other.rc")
	if got != "5:W631" {
		t.Errorf("--config other.rc: got %q", got)
	}
	_, stderr, code := codesOf(t, filepath.Join(dir, "deep"), "", "--config", "missing.rc")
	if code != exitCritical || !strings.Contains(stderr, "missing.rc") {
		t.Errorf("missing --config: exit %d, %s", code, stderr)
	}
	// --default-config applies only when no .luacheckrc is found.
	lone := t.TempDir()
	def := filepath.Join(lone, "default.rc")
	if err := os.WriteFile(def, []byte("only = {'113'}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(lone)
	if err := os.MkdirAll("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("sub/a.lua", []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ := runCLI(t, "", "--formatter", "plain", "--codes", "--default-config", def, "sub/a.lua")
	if !strings.Contains(out, "W113") || strings.Contains(out, "W211") {
		t.Errorf("--default-config not applied:\n%s", out)
	}
}

// TestConfigErrors: every bad config exits 4 with the file, the line when
// known, and what to write instead.
func TestConfigErrors(t *testing.T) {
	cases := []struct{ name, rc, want string }{
		{"syntax", "ignore = {\n'211'\n", ".luacheckrc:3: syntax error"},
		{"runtime", "local t = nil\nignore = t.x", ".luacheckrc:2: error while running the config"},
		{"error()", "\nerror('custom failure')", ".luacheckrc:2: error while running the config: custom failure"},
		{"ignore = 5", "\n\nignore = 5", ".luacheckrc:3: invalid value of option 'ignore': array of strings expected, got number 5; write ignore = {"},
		{"array with a number", "only = {'1', 2}", "item 2 is number 2"},
		{"bad pattern", "enable = {'21['}", ".luacheckrc:1: enable: invalid pattern 21["},
		{"bool option", "unused = 'no'", "invalid value of option 'unused': boolean expected, got \"no\""},
		{"line length", "max_line_length = true", "number or false expected, got true"},
		{"line length zero", "max_line_length = 0", "a positive whole number or false expected"},
		{"unknown std", "std = 'lua51+nope'", "unknown std 'nope'"},
		{"std type", "std = 5", "string or table expected"},
		{"stds type", "stds = 5", "invalid option 'stds': table expected"},
		{"custom std type", "stds.x = {globals = 5}", "invalid custom std 'x': table expected, got number 5"},
		{"files entry", "files['a'] = 5", "invalid options for path 'a': option table expected"},
		{"files option", "files['a'] = {\n  ignore = 'x'\n}", ".luacheckrc:1: invalid options for path 'a': invalid value of option 'ignore'"},
		{"field def", "read_globals = {foo = {fields = 3}}", "fields must be a table"},
		{"quiet", "quiet = 7", "integer in range 0..3"},
		{"formatter function", "formatter = function() end", "custom formatter functions are not supported"},
		{"os", "local home = os.getenv('HOME')", ".luacheckrc:1: error while running the config: os is not available"},
		{"require", "local m = require('x')", "require is not available"},
		{"io", "io.open('/etc/passwd')", "io is not available"},
		{"loadstring", "loadstring('x = 1')()", "loadstring is not available"},
		{"endless loop", "globals = {}\nwhile true do end", ".luacheckrc:2: the config ran more than"},
		{"endless recursion", "local function f() return f() + 1 end\nf()", "stack overflow"},
		{"string bomb", "local s = 'x'\nfor i = 1, 40 do s = s .. s end", "allocated more than"},
		{"rep bomb", "x = string.rep('x', 1e12)", "string.rep would build a string longer"},
		{"gsub bomb", "x = string.rep('x', 1e5):gsub('x', string.rep('y', 1e5))", "string.gsub would build"},
		{"format width", "x = string.format('%999999999d', 1)", "string.format would build"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := codesOf(t, t.TempDir(), c.rc)
			if code != exitCritical {
				t.Errorf("exit %d, want %d; stderr %s", code, exitCritical, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not contain %q", stderr, c.want)
			}
		})
	}
}

func TestBadUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--only", "(", "--", "x.lua"}, "--only: invalid pattern ("},
		{[]string{"-i", "211/[a", "--", "x.lua"}, "--ignore: invalid pattern 211/[a"},
		{[]string{"--max-line-length", "abc", "x.lua"}, "--max-line-length \"abc\""},
		{[]string{"--max-line-length", "0", "x.lua"}, "positive whole number"},
		{[]string{"--std", "nope", "x.lua"}, "unknown std 'nope'"},
		{[]string{"--ignore"}, "--ignore needs at least one value"},
		{[]string{"--codes=yes", "x.lua"}, "--codes takes no value"},
		{[]string{"-x", "x.lua"}, "unknown option -x"},
		{[]string{"--config", "a", "--no-config", "x.lua"}, "contradict"},
		{[]string{"--no-config", "--globals", "x", "y.lua"}, "no files given"}, // luacheck's caveat: values run to the next option
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, "", c.args...)
		if code != exitCritical || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 4 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	ca, err := parseArgs([]string{"a.lua", "-qq", "--globals", "x", "y", "--codes", "b.lua", "-o211", "--ignore=2", "3", "-", "--", "-c.lua"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ca.files, ","); got != "a.lua,b.lua,3,-,-c.lua" {
		t.Errorf("files %q", got)
	}
	if len(ca.vals["quiet"]) != 2 || strings.Join(ca.vals["globals"], ",") != "x,y" || ca.last("only") != "211" || strings.Join(ca.vals["ignore"], ",") != "2" || !ca.has("codes") {
		t.Errorf("vals %v", ca.vals)
	}
	// Go-flag style single-dash long options keep working.
	ca, err = parseArgs([]string{"-formatter", "plain", "-no-color", "x.lua"})
	if err != nil || ca.last("formatter") != "plain" || !ca.has("no-color") {
		t.Errorf("single-dash long options: %v %v", ca, err)
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"/r/src", "/r/src/a.lua", true},
		{"/r/src", "/r/srcx/a.lua", false},
		{"/r/src/*.lua", "/r/src/a.lua", true},
		{"/r/src/*.lua", "/r/src/d/a.lua", false},
		{"/r/**/*_spec.lua", "/r/a/b/x_spec.lua", true},
		{"/r/**/*.lua", "/r/a.lua", true},
		{"/r/[!a]*.lua", "/r/b.lua", true},
		{"/r/[!a]*.lua", "/r/a.lua", false},
		{"/r/*/b", "/r/x/b/c.lua", true},
	}
	for _, c := range cases {
		if got := globMatch(c.glob, c.path); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v", c.glob, c.path, got)
		}
	}
	if !globLess("/r/**/*.lua", "/r/src/*.lua") || !globLess("/r/src", "/r/src/*.lua") || globLess("/r/src/a.lua", "/r/src/*.lua") {
		t.Error("globLess order")
	}
}

// FuzzLuacheckrc: whatever a config holds, loading it neither panics nor
// runs unbounded.
func FuzzLuacheckrc(f *testing.F) {
	for _, s := range []string{
		"std = 'max'\nignore = {'212', '_.*'}\nfiles['spec'].std = '+busted'",
		"stds.x = {read_globals = {a = {fields = {b = {read_only = false, other_fields = true}}}}}\nstd = 'x'",
		"return {globals = {'a.b'}, max_line_length = false}",
		"while true do end",
		"local s = 'x' for i = 1, 50 do s = s .. s end",
		"x = ('x'):rep(1e6):gsub('.', function() return ('y'):rep(1e6) end)",
		"setmetatable(_G, {__index = function(t, k) return t[k] end}) x = y",
		"files = 5", "stds = {1}", "ignore = {'['}", "only = {}", "quiet = 0/0",
		"coroutine.wrap(function() while true do end end)()",
		"string.format('%s', setmetatable({}, {__tostring = function() while true do end end}))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		_, _ = loadConfig(".luacheckrc", []byte(src), "/anchor")
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("loading took %v:\n%s", d, src)
		}
	})
}
