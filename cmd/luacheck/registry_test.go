package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodScript = "-- name: app.get\n-- version: 1\n-- description: Read a key.\n-- keys: key\n-- args:\nreturn redis.call('GET', KEYS[1])\n"

// writeTree writes files (path → contents) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, src := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRegistryMode: a directory of scripts that lints clean must also
// register; what registry.New refuses is a finding with a code, naming
// the fix, and exit 1.
func TestRegistryMode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
		want  []string // substrings of the plain output, in order
		code  int
	}{
		{"headerless script beside scripts", map[string]string{"app.get.v1.lua": goodScript, "helper.lua": "return 1\n"},
			nil, []string{"helper.lua:1:1: (W943) the file has no header", "start it with comment lines such as"}, exitWarnings},
		{"name mismatch", map[string]string{"get.lua": goodScript},
			nil, []string{"get.lua:1:1: (W944) the file name get.lua does not match the header's app.get@1; rename the file app.get.v1.lua"}, exitWarnings},
		{"same name@version twice", map[string]string{"app.get.v1.lua": goodScript, "old/app.get.v1.lua": goodScript},
			nil, []string{"(W945) app.get@1 is declared again (first in ", "give the new text a new version"}, exitWarnings},
		{"clean registry", map[string]string{"app.get.v1.lua": goodScript, "app.get.v2.lua": strings.Replace(goodScript, "version: 1", "version: 2", 1)},
			nil, nil, exitOK},
		{"plain Lua, no headers: not a registry", map[string]string{"a.lua": "return 1\n", "b.lua": "return 2\n"},
			nil, nil, exitOK},
		{"--registry on plain Lua", map[string]string{"a.lua": "return 1\n"},
			[]string{"--registry"}, []string{"a.lua:1:1: (W943) the file has no header"}, exitWarnings},
		{"--no-registry", map[string]string{"app.get.v1.lua": goodScript, "helper.lua": "return 1\n"},
			[]string{"--no-registry"}, nil, exitOK},
		{"--ignore 943", map[string]string{"app.get.v1.lua": goodScript, "helper.lua": "return 1\n"},
			[]string{"--ignore", "943", "--"}, nil, exitOK},
		{"syntax error reported alone", map[string]string{"app.get.v1.lua": goodScript, "broken.lua": "if then\n"},
			nil, []string{"broken.lua:1:4: (E011)"}, exitErrors},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			args := append([]string{"--no-config", "--no-default-config", "--formatter", "plain", "--codes"}, tc.args...)
			out, errOut, code := runCLI(t, "", append(args, dir)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			rest := out
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q:\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			if len(tc.want) == 0 && out != "" {
				t.Errorf("want no findings, got:\n%s", out)
			}
			if strings.Count(out, "\n") > max(len(tc.want), 1) && tc.name != "same name@version twice" {
				t.Errorf("more findings than expected:\n%s", out)
			}
		})
	}
}

// A file named on the command line with a header is judged by its name
// too; a config can turn the mode off.
func TestRegistryModeFilesAndConfig(t *testing.T) {
	dir := writeTree(t, map[string]string{"get.lua": goodScript, "off.luacheckrc": "registry = false\n", "bad.luacheckrc": "registry = 1\n"})
	file := filepath.Join(dir, "get.lua")
	out, _, code := runCLI(t, "", "--no-config", "--formatter", "plain", "--codes", file)
	if code != exitWarnings || !strings.Contains(out, "(W944)") {
		t.Errorf("file operand: exit %d, want 1 with W944:\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "--config", filepath.Join(dir, "off.luacheckrc"), "--formatter", "plain", "--codes", file)
	if code != exitOK {
		t.Errorf("registry = false: exit %d, want 0:\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "--config", filepath.Join(dir, "off.luacheckrc"), "--registry", "--formatter", "plain", "--codes", file)
	if code != exitWarnings {
		t.Errorf("--registry beats registry = false: exit %d, want 1:\n%s", code, out)
	}
	_, errOut, code := runCLI(t, "", "--config", filepath.Join(dir, "bad.luacheckrc"), file)
	if code != exitCritical || !strings.Contains(errOut, "registry = true or false") {
		t.Errorf("registry = 1: exit %d, want 4 naming the fix: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "--registry", "--no-registry", file)
	if code != exitCritical || !strings.Contains(errOut, "contradict") {
		t.Errorf("both flags: exit %d, want 4: %s", code, errOut)
	}
}

// redlua's own scripts are a registry (registry.New(lua.FS)): they lint
// clean with the mode on.
func TestShippedScriptsRegister(t *testing.T) {
	out, _, code := runCLI(t, "", "--no-config", "--no-default-config", "--registry", "--formatter", "plain", "--codes", "../../lua")
	if code != exitOK {
		t.Errorf("lua/: exit %d, want 0:\n%s", code, out)
	}
}
