package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyScripts copies the repo's released scripts into a temp dir the test
// may damage.
func copyScripts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob("../../lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in ../../lua: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSumMatches(t *testing.T) {
	if _, stderr, code := runCLI(t, "", "-qqq", "--sum", "../../lua/scripts.sum", "../../lua"); code != exitOK {
		t.Fatalf("released scripts should verify: exit %d, %s", code, stderr)
	}
}

// An edited recorded version fails, and so does a removed released one; a
// removed one that was never released is retired, not an error.
func TestSumDetectsEditNotRetirement(t *testing.T) {
	dir := copyScripts(t)
	if err := os.Remove(filepath.Join(dir, "mutex.extend.v6.lua")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "mutex.acquire.v14.lua"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("-- an edit after it was recorded\n")
	f.Close()
	// The ledger as if mutex.extend@6 had never been released.
	ledger, err := os.ReadFile("../../lua/scripts.sum")
	if err != nil {
		t.Fatal(err)
	}
	unreleased := regexp.MustCompile(`(?m)^(mutex\.extend@6 [0-9a-f]{40}) released$`)
	if !unreleased.Match(ledger) {
		t.Fatal("lua/scripts.sum does not mark mutex.extend@6 released: pick another released version here")
	}
	sum := filepath.Join(t.TempDir(), "scripts.sum")
	if err := os.WriteFile(sum, unreleased.ReplaceAll(ledger, []byte("$1")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "", "-qqq", "--sum", sum, dir)
	if code != exitErrors {
		t.Errorf("exit %d, want %d", code, exitErrors)
	}
	if want := "mutex.acquire@14 changed after it was recorded"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "mutex.extend@6") {
		t.Errorf("a retired unreleased version was reported:\n%s", stderr)
	}
	// With the real ledger, the same removal is an error: it was released.
	if _, stderr, code := runCLI(t, "", "-qqq", "--sum", "../../lua/scripts.sum", dir); code == exitOK ||
		!strings.Contains(stderr, "mutex.extend@6 is released") {
		t.Errorf("a removed released version: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestSumFileProblems(t *testing.T) {
	if _, _, code := runCLI(t, "", "-qqq", "--sum", "testdata/missing.sum", "../../lua"); code != exitIO {
		t.Errorf("missing sum file: exit %d, want %d", code, exitIO)
	}
	bad := filepath.Join(t.TempDir(), "bad.sum")
	os.WriteFile(bad, []byte("not a sum line\n"), 0o644)
	if _, stderr, code := runCLI(t, "", "-qqq", "--sum", bad, "../../lua"); code != exitCritical || !strings.Contains(stderr, "line 1") {
		t.Errorf("malformed sum file: exit %d, want %d; %s", code, exitCritical, stderr)
	}
}
