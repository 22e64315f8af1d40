package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormattersEscapeControlBytes feeds a binary script, under a file
// name with an escape sequence in it, to every formatter: none may write
// a control byte (a terminal would act on it), and each shows the byte
// as luacheck does, \x01.
func TestFormattersEscapeControlBytes(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "evil\x1bc\x07.lua")
	if err := os.WriteFile(name, []byte("local x = 1\x01\x1b[31m\nreturn x\n"), 0o644); err != nil {
		t.Skipf("this file system refuses control bytes in names: %v", err)
	}
	for _, f := range []string{"default", "plain", "JSON", "sarif", "github", "JUnit"} {
		t.Run(f, func(t *testing.T) {
			out, _, code := runCLI(t, "", "--no-config", "--formatter", f, "--codes", "--no-color", name)
			if code != exitErrors {
				t.Errorf("exit code %d, want %d (a syntax error)", code, exitErrors)
			}
			for i := 0; i < len(out); i++ {
				if c := out[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
					t.Fatalf("raw control byte %#x at %d in:\n%q", c, i, out)
				}
			}
			text := out
			if f == "JSON" || f == "sarif" {
				var v any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
				b, _ := json.Marshal(v)
				text = strings.ReplaceAll(string(b), `\\`, `\`)
			}
			if !strings.Contains(text, `\x01`) || !strings.Contains(text, `evil\x1bc\x07.lua`) {
				t.Errorf("want the byte and the file name escaped as \\x01 and \\x1b:\n%s", out)
			}
		})
	}
}

func TestEscapeControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, 'quotes' and tabs\t": "plain text, 'quotes' and tabs\t",
		"near '\x01'":                     `near '\x01'`,
		"a\nb\rc\x7f":                     `a\x0ab\x0dc\x7f`,
		"bad \xff utf-8":                  `bad \xff utf-8`,
		"é ünïcode":                       "é ünïcode",
		"c1 \u009b and bidi \u202e":       `c1 \u009b and bidi \u202e`,
	} {
		if got := escapeControls(in); got != want {
			t.Errorf("escapeControls(%q) = %q, want %q", in, got, want)
		}
	}
}
