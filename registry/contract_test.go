package registry_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/redlua/redlua/lint"
	"github.com/redlua/redlua/registry"
)

const okHeader = "-- name: x\n-- version: 1\n-- description: d\n-- keys: a\n-- args:\n"

// Redis's Lua 5.1 refuses goto at SCRIPT LOAD; the registry refuses it at
// registration with Redis's words and line, and names the construct,
// which lint reports as E931 at the same place.
func TestGotoRejectedAsRedisDoes(t *testing.T) {
	src := okHeader + "for i = 1, 3 do\n  if i == 2 then goto done end\nend\n::done::\nreturn redis.call('GET', KEYS[1])\n"
	_, err := registry.New(fstest.MapFS{"x.v1.lua": {Data: []byte(src)}})
	probs := registry.Problems(err)
	if len(probs) != 1 {
		t.Fatalf("problems %v, want the one syntax error", err)
	}
	p := probs[0]
	// What Redis 7.0 answers SCRIPT LOAD for this file.
	want := "user_script:7: '=' expected near 'done' ('goto' is Lua 5.2+ syntax; Redis runs Lua 5.1, which rejects the script)"
	if p.Part != registry.PartSyntax || p.Line != 7 || p.Msg != want {
		t.Errorf("registry says %+v\nwant line 7: %s", p, want)
	}
	var lintMsgs []string
	for _, d := range lint.Check("x.v1.lua", []byte(src), nil) {
		if d.Code == "E931" {
			lintMsgs = append(lintMsgs, d.String())
		}
	}
	if len(lintMsgs) != 2 || !strings.HasPrefix(lintMsgs[0], "x.v1.lua:7:18: (E931) 'goto' is Lua 5.2+ syntax") {
		t.Errorf("lint reported %v, want two E931 (goto on line 7, and the label)", lintMsgs)
	}
}

// Every upstream Redis and Valkey build refuses a "[[" inside a "[[...]]"
// string or comment (Lua 5.1's LUA_COMPAT_LSTR 1); the registry refuses it
// with Lua's words and line, as SCRIPT LOAD on Redis 7.2.6 answers, and
// lint reports E932 at the inner "[[".
func TestNestedLongBracketRejectedAsRedisDoes(t *testing.T) {
	src := okHeader + "local s = [[a\n [[b]]\nreturn redis.call('SET', KEYS[1], s)\n"
	_, err := registry.New(fstest.MapFS{"x.v1.lua": {Data: []byte(src)}})
	probs := registry.Problems(err)
	if len(probs) != 1 {
		t.Fatalf("problems %v, want the one syntax error", err)
	}
	p := probs[0]
	want := "user_script:7: nesting of [[...]] is deprecated near '['"
	if p.Part != registry.PartSyntax || p.Line != 7 || !strings.HasPrefix(p.Msg, want+" (") || !strings.Contains(p.Msg, "[=[") {
		t.Errorf("registry says %+v\nwant line 7: %s (why, and the fix: [=[)", p, want)
	}
	var lintMsgs []string
	for _, d := range lint.Check("x.v1.lua", []byte(src), nil) {
		if d.Code == "E932" {
			lintMsgs = append(lintMsgs, d.String())
		}
	}
	if len(lintMsgs) != 1 || !strings.HasPrefix(lintMsgs[0], "x.v1.lua:7:2: (E932) nesting of [[...]] is deprecated near '['") {
		t.Errorf("lint reported %v, want one E932 at 7:2", lintMsgs)
	}
	// A level-1 long bracket takes a "[[" inside.
	fixed := strings.Replace(strings.Replace(src, "[[a", "[=[a", 1), "b]]", "b]=]", 1)
	if _, err := registry.New(fstest.MapFS{"x.v1.lua": {Data: []byte(fixed)}}); err != nil {
		t.Errorf("with [=[ ... ]=]: %v", err)
	}
}

func TestNewNamesAMissingDirectory(t *testing.T) {
	_, err := registry.New(os.DirFS("/nonexistent/scripts"))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/scripts") {
		t.Fatalf("err = %v, want it to name the directory", err)
	}
}

func TestNewRejectsAnEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/README.md", []byte("no scripts here"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := registry.New(os.DirFS(dir))
	if err == nil || !strings.Contains(err.Error(), "no scripts found in directory "+dir) {
		t.Fatalf("err = %v, want \"no scripts found\" naming %s", err, dir)
	}
	if _, err := registry.New(); err == nil {
		t.Error("New() with no file system at all succeeded")
	}
}

// A header that is there but malformed gets one error saying so, not one
// "missing field" error per field.
func TestMalformedHeaderIsOneProblem(t *testing.T) {
	cases := map[string]struct {
		src      string
		want     string
		wantLine int
	}{
		"blank line first":   {"\n" + okHeader + "return KEYS[1]\n", "a header was found on line 2 but it is malformed", 2},
		"code first":         {"local x = 1\n" + okHeader + "return x\n", "a header was found on line 2", 2},
		"capitalised":        {strings.Replace(okHeader, "-- name:", "-- Name:", 1) + "return KEYS[1]\n", `the header field "name" is written "-- Name:"`, 1},
		"space before colon": {strings.Replace(okHeader, "-- version:", "-- version :", 1) + "return KEYS[1]\n", `the header field "version" is written`, 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := registry.ParseScript("x.v1.lua", []byte(c.src))
			probs := registry.Problems(err)
			if len(probs) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(probs), err)
			}
			if !strings.Contains(probs[0].Msg, c.want) || probs[0].Line != c.wantLine {
				t.Errorf("problem %v\nwant line %d and %q", probs[0], c.wantLine, c.want)
			}
		})
	}
}

func TestFileNameMatchesHeader(t *testing.T) {
	_, err := registry.New(fstest.MapFS{"scripts/acquire.lua": {Data: []byte(acquire)}})
	if err == nil || !strings.Contains(err.Error(), "scripts/acquire.lua:1: the file name acquire.lua does not match the header's mutex.acquire@2; rename the file mutex.acquire.v2.lua") {
		t.Fatalf("err = %v", err)
	}
	if _, err := registry.New(fstest.MapFS{"scripts/mutex.acquire.v2.lua": {Data: []byte(acquire)}}); err != nil {
		t.Fatalf("a well-named file: %v", err)
	}
	// ParseScript and FromScripts take any name: the convention is for directories.
	if _, err := registry.ParseScript("anything.lua", []byte(acquire)); err != nil {
		t.Fatal(err)
	}
}

// The header's fields come with their lines, for tools that point at them.
func TestHeaderFieldsWithLines(t *testing.T) {
	s, err := registry.ParseScript("mutex.inspect.v1.lua", []byte(inspect))
	if err != nil {
		t.Fatal(err)
	}
	keys, ok := s.Field("keys")
	if !ok || keys.Line != 6 || keys.Value != "locks..." || keys.Text != "-- keys: locks..." {
		t.Errorf("keys field = %+v, %v", keys, ok)
	}
	if _, ok := s.Field("returns"); ok {
		t.Error("found a returns field the header does not have")
	}
}

func TestParseShebang(t *testing.T) {
	flags, probs := registry.ParseShebang("#!lua flags=no-writes,allow-stale")
	if len(probs) != 0 || len(flags) != 2 || flags[0] != registry.FlagNoWrites {
		t.Fatalf("flags %v, problems %v", flags, probs)
	}
	for line, want := range map[string]registry.ShebangProblem{
		"#!python":                     registry.ShebangBadEngine,
		"#! lua":                       registry.ShebangBadEngine,
		"#!lua name=lib":               registry.ShebangUnknownOption,
		"#!lua flags=fast":             registry.ShebangUnknownFlag,
		"#!lua flags= flags=no-writes": registry.ShebangRepeatedFlags,
	} {
		_, probs := registry.ParseShebang(line)
		if len(probs) != 1 || probs[0].Problem != want {
			t.Errorf("ParseShebang(%q) = %v, want one problem of kind %d", line, probs, want)
		}
	}
}

func TestIndexProblem(t *testing.T) {
	s, err := registry.ParseScript("x.v1.lua", []byte(okHeader+"return KEYS[1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]string{"1": "", "2": "KEYS[2] is beyond the keys", "0": "never set", "1.5": "never set"} {
		if got := s.IndexProblem("KEYS", raw); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("IndexProblem(KEYS, %s) = %q, want %q", raw, got, want)
		}
	}
	if got := s.IndexProblem("ARGV", "1"); !strings.Contains(got, "declares: none") {
		t.Errorf("ARGV[1] with no args declared: %q", got)
	}
}

func TestNilInputsDoNotPanic(t *testing.T) {
	if err := registry.VerifySum(nil, registry.Sum{}); err == nil {
		t.Error("VerifySum(nil) succeeded")
	}
	if _, _, err := registry.Record(nil, registry.Sum{}); err == nil {
		t.Error("Record(nil) succeeded")
	}
	if _, err := registry.FromScripts(nil); !errors.Is(err, err) || err == nil {
		t.Error("FromScripts(nil) succeeded")
	}
}
