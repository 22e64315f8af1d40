package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/redlua/redlua/lint"
)

var plainLine = regexp.MustCompile(`^(.+?):(\d+):(\d+): \((\w\d+)\) `)

// codesByFile parses plain --codes output into file → set of codes.
func codesByFile(out string) map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		sm := plainLine.FindStringSubmatch(l)
		if sm == nil {
			continue
		}
		if m[sm[1]] == nil {
			m[sm[1]] = map[string]bool{}
		}
		m[sm[1]][sm[4]] = true
	}
	return m
}

// findings parses plain --codes output into "file:line:col: CODE" keys,
// keeping only the given codes.
func findings(out string, codes map[string]bool) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		sm := plainLine.FindStringSubmatch(l)
		if sm == nil || !codes[sm[4][1:]] {
			continue
		}
		m[fmt.Sprintf("%s:%s:%s: %s", sm[1], sm[2], sm[3], sm[4])] = true
	}
	return m
}

// realLuacheck returns the path of the real luacheck, skipping the test
// without it unless REDLUA_REQUIRE_LUACHECK=1. redlua's own luacheck,
// installed with go install, is passed over: comparing it with itself
// would only report the known disagreements as fixed.
func realLuacheck(t *testing.T) string {
	t.Helper()
	bin, err := findRealLuacheck(os.Getenv("PATH"))
	if err != nil {
		if os.Getenv("REDLUA_REQUIRE_LUACHECK") == "1" {
			t.Fatalf("%v; install it with: apt-get install -y lua-check", err)
		}
		t.Skipf("%v (apt-get install -y lua-check); set REDLUA_REQUIRE_LUACHECK=1 to make this a failure", err)
	}
	return bin
}

// findRealLuacheck looks through a PATH list for a luacheck whose
// --version says it is the Lua one ("Luacheck: 1.1.0"), not redlua's
// ("redlua luacheck 0.1.0").
func findRealLuacheck(pathList string) (string, error) {
	var skipped []string
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		bin := filepath.Join(dir, "luacheck")
		if info, err := os.Stat(bin); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			continue
		}
		out, _ := exec.Command(bin, "--version").Output()
		if strings.Contains(string(out), "Luacheck:") {
			return bin, nil
		}
		skipped = append(skipped, bin)
	}
	if len(skipped) > 0 {
		return "", fmt.Errorf("no real luacheck on PATH (passed over %s, which is not luacheck 1.x: redlua's own, from go install?)", strings.Join(skipped, ", "))
	}
	return "", fmt.Errorf("luacheck not found on PATH")
}

// With redlua's luacheck first on PATH (go install ./cmd/luacheck), the
// compat tests must still find the real one, or skip: issue 13.
func TestFindRealLuacheckPassesOverOurs(t *testing.T) {
	ours := t.TempDir()
	fake := "#!/bin/sh\necho \"redlua luacheck " + version + "\"\n"
	if err := os.WriteFile(filepath.Join(ours, "luacheck"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := findRealLuacheck(ours)
	if err == nil || !strings.Contains(err.Error(), "passed over "+filepath.Join(ours, "luacheck")) {
		t.Fatalf("findRealLuacheck with only ours = %q, %v; want an error naming it", bin, err)
	}
	// The real one is looked up past ours as well: the PATH this test
	// runs with may have redlua's luacheck first (go install).
	real, err := findRealLuacheck(os.Getenv("PATH"))
	if err != nil {
		if os.Getenv("REDLUA_REQUIRE_LUACHECK") == "1" {
			t.Fatalf("%v; install it with: apt-get install -y lua-check", err)
		}
		t.Skipf("no real luacheck installed to find behind ours: %v", err)
	}
	bin, err = findRealLuacheck(ours + string(os.PathListSeparator) + filepath.Dir(real))
	if err != nil || bin == filepath.Join(ours, "luacheck") {
		t.Fatalf("findRealLuacheck = %q, %v; want the real one behind ours", bin, err)
	}
}

// compatCorpus is every script the compat tests compare: the shipped
// scripts, the golden sources, the hand-written tricky cases and lint's
// own testdata, whose want comments are thus checked against luacheck.
func compatCorpus() []string {
	corpus, _ := filepath.Glob("../../lua/*.lua")
	more, _ := filepath.Glob("testdata/src/*.lua")
	compat, _ := filepath.Glob("testdata/compat/*.lua")
	lintData, _ := filepath.Glob("../../lint/testdata/*.lua")
	return append(append(append(corpus, more...), compat...), lintData...)
}

// redisLuacheckrc describes Redis's sandbox to the real luacheck exactly,
// from lint.StdGlobals: libraries with their fields, KEYS and ARGV as
// tables whose fields may be read and set.
func redisLuacheckrc() string {
	var b strings.Builder
	b.WriteString("std = \"redis\"\nstds.redis = {read_globals = {\n")
	std := lint.StdGlobals()
	for _, n := range slices.Sorted(maps.Keys(std)) {
		fields := std[n]
		sort.Strings(fields)
		switch {
		case n == "KEYS" || n == "ARGV":
			fmt.Fprintf(&b, "  %s = {other_fields = true, read_only = false},\n", n)
		case len(fields) == 0:
			fmt.Fprintf(&b, "  [%q] = {},\n", n)
		default:
			fmt.Fprintf(&b, "  [%q] = {fields = {", n)
			for _, f := range fields {
				fmt.Fprintf(&b, "%q, ", f)
			}
			b.WriteString("}},\n")
		}
	}
	b.WriteString("}}\n")
	return b.String()
}

// overlapCodes are the checks both linters implement the same way.
var overlapCodes = map[string]bool{"611": true, "612": true, "613": true, "614": true, "111": true, "113": true, "211": true, "212": true, "213": true, "241": true, "421": true, "511": true, "542": true, "631": true}

// compatVarargArg is why ours differs on "arg" inside a vararg function.
const compatVarargArg = "luacheck only: Redis builds Lua 5.1 with LUA_COMPAT_VARARG (deps/lua/src/luaconf.h), so a vararg function has a hidden local arg holding its extra arguments (luac5.1 -l compiles it as a local): reading it reads no global and uses '...'"

// compatJustified lists every finding on which the two disagree, with why.
// A key is "file:line:col: CODE"; the value starts with "luacheck only" or
// "ours only" and says why that is right (or "lint bug, reported to lead").
var compatJustified = map[string]string{
	"testdata/compat/vararg_arg.lua:5:22: W212": compatVarargArg,
	"testdata/compat/vararg_arg.lua:6:10: W113": compatVarargArg,
	"testdata/compat/vararg_arg.lua:8:22: W212": compatVarargArg,
	"testdata/compat/vararg_arg.lua:9:28: W113": compatVarargArg,
}

// longHeaderLines justifies luacheck's W631 on every redlua header field
// line longer than 120 characters: a header field is one line and cannot
// be wrapped, so lint exempts it by design. Derived from the files, so a new
// script version needs no entry of its own.
func longHeaderLines(t *testing.T, corpus []string) map[string]string {
	t.Helper()
	field := regexp.MustCompile(`^-- (name|version|description|keys|args|returns|flags):`)
	out := map[string]string{}
	for _, path := range corpus {
		if !strings.HasPrefix(path, "../../lua/") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if len(line) > 120 && field.MatchString(line) {
				out[fmt.Sprintf("%s:%d:121: W631", path, i+1)] = "luacheck only: a redlua header field line (-- description:, -- returns:) is exempt from W631 by design: a header field is one line and cannot be wrapped"
			}
		}
	}
	return out
}

// TestCompatFindings runs the real luacheck, configured with Redis's std,
// and ours over the corpus, and compares the (file, line, column, code)
// sets of the overlapping codes.
func TestCompatFindings(t *testing.T) {
	bin := realLuacheck(t)
	corpus := compatCorpus()
	rc := filepath.Join(t.TempDir(), "redis.luacheckrc")
	if err := os.WriteFile(rc, []byte(redisLuacheckrc()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--config", rc, "--no-cache", "--codes", "--formatter", "plain", "--"}, corpus...)
	out, err := exec.Command(bin, args...).Output() // exit 1/2 when it finds problems
	if len(out) == 0 && err != nil {
		t.Fatalf("luacheck: %v", err)
	}
	ours, _, _ := runCLI(t, "", append([]string{"--no-config", "--no-default-config", "--formatter", "plain", "--codes", "--"}, corpus...)...)
	want, got := findings(string(out), overlapCodes), findings(ours, overlapCodes)
	justified := maps.Clone(compatJustified)
	maps.Copy(justified, longHeaderLines(t, corpus))
	compareFindings(t, want, got, justified, "compatJustified")
	if t.Failed() {
		t.Logf("luacheck:\n%s\nours:\n%s", out, ours)
	}
	t.Logf("%d findings compared over %d files, %d justified disagreements", len(want), len(corpus), len(justified))
}

// compareFindings fails the test for every disagreement between the real
// luacheck (want) and ours (got) that justified does not list with the
// right side ("luacheck only" or "ours only"), and for every listed one
// that no longer disagrees (listName names the list to edit).
func compareFindings(t *testing.T, want, got map[string]bool, justified map[string]string, listName string) {
	t.Helper()
	seen := map[string]bool{}
	var diffs []string
	for k := range want {
		if !got[k] {
			seen[k] = true
			if why, ok := justified[k]; !ok || !strings.HasPrefix(why, "luacheck only") {
				diffs = append(diffs, "luacheck only: "+k)
			}
		}
	}
	for k := range got {
		if !want[k] {
			seen[k] = true
			if why, ok := justified[k]; !ok || !strings.HasPrefix(why, "ours only") {
				diffs = append(diffs, "ours only:     "+k)
			}
		}
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		t.Errorf("unjustified disagreement: %s", d)
	}
	for k := range justified {
		if !seen[k] {
			t.Errorf("%s is listed as a disagreement but both now agree; remove it from %s", k, listName)
		}
	}
}

// TestCompatSyntaxErrors compares which files of the corpus have syntax
// errors (E011). Lines are not compared: the two parsers blame different
// tokens for some errors.
func TestCompatSyntaxErrors(t *testing.T) {
	bin := realLuacheck(t)
	corpus := compatCorpus()
	args := append([]string{"--no-config", "--no-cache", "--std", "lua51", "--globals", "KEYS", "ARGV", "redis", "cjson", "bit", "struct", "cmsgpack", "--codes", "--formatter", "plain", "--"}, corpus...)
	theirs, _ := exec.Command(bin, args...).Output() // non-zero exit is expected when it finds problems
	ours, _, _ := runCLI(t, "", append([]string{"--no-config", "--no-default-config", "--formatter", "plain", "--codes", "--"}, corpus...)...)
	want, got := codesByFile(string(theirs)), codesByFile(ours)
	// luacheck's parser accepts Lua 5.2/5.3 syntax whatever --std says;
	// Redis runs Lua 5.1, which rejects these, so our error is the right one.
	justified := map[string]string{
		"testdata/compat/floor_div.lua": "// is Lua 5.3 integer division; Redis's Lua 5.1 rejects it (our E931)",
	}
	// The other way round: valid Lua 5.1 that luacheck's 5.2 parser rejects.
	luacheckOnly := map[string]string{
		"../../lint/testdata/lua51_goto_name.lua": "goto is an ordinary name in Lua 5.1, a keyword from 5.2 on",
	}
	for _, f := range corpus {
		if why, ok := justified[f]; ok {
			if !(got[f]["E011"] || got[f]["E931"]) || want[f]["E011"] {
				t.Errorf("%s: listed as a justified disagreement (%s) but the results changed; update the list", f, why)
			}
			continue
		}
		if why, ok := luacheckOnly[f]; ok {
			if !want[f]["E011"] || got[f]["E011"] {
				t.Errorf("%s: listed as valid Lua 5.1 luacheck rejects (%s) but the results changed; update the list", f, why)
			}
			continue
		}
		if want[f]["E011"] != got[f]["E011"] {
			t.Errorf("%s: luacheck syntax error %v, ours %v\nluacheck:\n%s\nours:\n%s", f, want[f]["E011"], got[f]["E011"], theirs, ours)
		}
	}
}
