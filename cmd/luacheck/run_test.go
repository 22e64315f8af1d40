package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden")

// TestMain hides the developer's own global luacheck config
// (~/.config/luacheck/.luacheckrc) from every test.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "luacheck-xdg")
	if err == nil {
		os.Setenv("XDG_CONFIG_HOME", dir)
	}
	code := m.Run()
	if err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestGolden pins each formatter's exact output on the same inputs.
func TestGolden(t *testing.T) {
	for _, f := range []string{"default", "plain", "JSON", "sarif", "github", "JUnit"} {
		t.Run(f, func(t *testing.T) {
			out, _, code := runCLI(t, "", "--no-config", "--formatter", f, "--codes", "--no-color", "testdata/src")
			if code != exitErrors {
				t.Errorf("exit code %d, want %d (syntax error present)", code, exitErrors)
			}
			path := filepath.Join("testdata", "golden", strings.ToLower(f)+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s:\n got:\n%s\nwant:\n%s", path, out, want)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"clean file", "", []string{"testdata/src/ok.v1.lua"}, exitOK},
		{"shebang skipped", "#!lua flags=no-writes\nreturn 1\n", []string{"-"}, exitOK},
		{"syntax error", "local = 1\n", []string{"-"}, exitErrors},
		{"missing file", "", []string{"testdata/src/does-not-exist.lua"}, exitIO},
		{"io error beats syntax error", "", []string{"testdata/src", "testdata/nope.lua"}, exitIO},
		{"no files", "", nil, exitCritical},
		{"unknown flag", "", []string{"--bogus", "x.lua"}, exitCritical},
		{"unknown formatter", "", []string{"--formatter", "xml", "testdata/src/ok.v1.lua"}, exitCritical},
		{"help", "", []string{"--help"}, exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, stderr, got := runCLI(t, c.stdin, c.args...); got != c.want {
				t.Errorf("exit %d, want %d; stderr: %s", got, c.want, stderr)
			}
		})
	}
}

func TestStdinFilename(t *testing.T) {
	out, _, _ := runCLI(t, "local = 1\n", "--formatter", "plain", "--codes", "-", "--filename", "src/x.lua")
	if !strings.HasPrefix(out, "src/x.lua:1:") || !strings.Contains(out, "(E011)") {
		t.Errorf("stdin diagnostic should carry --filename and the code: %q", out)
	}
}

func TestGlobStar(t *testing.T) {
	out, _, code := runCLI(t, "", "--formatter", "plain", "testdata/**/ok.v1.lua")
	if code != exitOK || out != "" {
		t.Errorf("glob should select only ok.v1.lua: exit %d, out %q", code, out)
	}
	out, _, _ = runCLI(t, "", "--formatter", "plain", "testdata/**/*.lua")
	if !strings.Contains(out, "syntax.lua") {
		t.Errorf("** glob missed testdata/src/syntax.lua: %q", out)
	}
}

// TestSARIFRequiredFields checks every property the SARIF 2.1.0 schema
// requires, plus what GitHub code scanning needs to place a result.
func TestSARIFRequiredFields(t *testing.T) {
	out, _, _ := runCLI(t, "", "--formatter", "sarif", "testdata/src")
	var log map[string]any
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if log["version"] != "2.1.0" || log["$schema"] == nil {
		t.Fatalf("version/$schema: %v %v", log["version"], log["$schema"])
	}
	runs := log["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("runs: %d", len(runs))
	}
	r := runs[0].(map[string]any)
	driver := r["tool"].(map[string]any)["driver"].(map[string]any)
	if driver["name"] == "" || driver["name"] == nil {
		t.Error("tool.driver.name is required")
	}
	rules := map[string]bool{}
	for _, x := range driver["rules"].([]any) {
		rule := x.(map[string]any)
		rules[rule["id"].(string)] = true
		full, _ := rule["fullDescription"].(map[string]any)
		if full == nil || full["text"] == "" {
			t.Errorf("rule %v has no fullDescription (the analyzer's doc)", rule["id"])
		}
		if help, _ := rule["helpUri"].(string); !strings.Contains(help, "CODES.md#"+strings.ToLower(rule["id"].(string))) {
			t.Errorf("rule %v helpUri = %q, want a link to its CODES.md anchor", rule["id"], help)
		}
	}
	results := r["results"].([]any)
	if len(results) == 0 {
		t.Fatal("expected a result for testdata/src/syntax.lua")
	}
	for _, x := range results {
		res := x.(map[string]any)
		if text := res["message"].(map[string]any)["text"]; text == "" || text == nil {
			t.Error("result.message.text is required")
		}
		if !rules[res["ruleId"].(string)] {
			t.Errorf("ruleId %v has no rule in driver.rules", res["ruleId"])
		}
		if lv := res["level"]; lv != "error" && lv != "warning" {
			t.Errorf("level %v", lv)
		}
		loc := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
		if loc["artifactLocation"].(map[string]any)["uri"] != "testdata/src/syntax.lua" {
			t.Errorf("uri %v", loc["artifactLocation"])
		}
		reg := loc["region"].(map[string]any)
		if reg["startLine"].(float64) < 1 || reg["startColumn"].(float64) < 1 || reg["endColumn"].(float64) <= reg["startColumn"].(float64) {
			t.Errorf("region must be 1-based with endColumn exclusive: %v", reg)
		}
	}
}
