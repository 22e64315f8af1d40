package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const script = "-- name: a\n-- version: 1\n-- description: d\n-- keys: k\n-- args:\nreturn redis.call('GET', KEYS[1])\n"

func TestRecordThenVerify(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.v1.lua")
	os.WriteFile(file, []byte(script), 0o644)
	os.WriteFile(filepath.Join(dir, "b.v1.lua"), []byte(strings.Replace(script, "name: a", "name: b", 1)), 0o644)
	var out, errb strings.Builder
	if code := run([]string{"verify", dir}, &out, &errb); code != 1 {
		t.Fatalf("verify without a sum file exited %d", code)
	}
	if code := run([]string{"record", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "recorded a@1") {
		t.Fatalf("record exited %d: %s %s", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := run([]string{"verify", dir}, &out, &errb); code != 0 {
		t.Fatalf("verify after record exited %d: %s", code, errb.String())
	}
	os.WriteFile(file, []byte(strings.Replace(script, "GET", "DEL", 1)), 0o644)
	if code := run([]string{"verify", dir}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "a@1 changed after it was recorded") {
		t.Fatalf("verify after an edit exited %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"record", dir}, &out, &errb); code != 1 {
		t.Fatalf("record accepted an edited release: %s", errb.String())
	}
	// Retired before a release: allowed. Released, then removed: refused.
	os.WriteFile(file, []byte(script), 0o644)
	if code := run([]string{"release", dir}, &out, &errb); code != 0 {
		t.Fatalf("release exited %d: %s", code, errb.String())
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "scripts.sum"))
	if !strings.Contains(string(sum), " released\n") {
		t.Fatalf("release did not mark a@1:\n%s", sum)
	}
	os.Remove(file)
	errb.Reset()
	if code := run([]string{"verify", dir}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "a@1 is released") {
		t.Fatalf("verify without a released file exited %d: %s", code, errb.String())
	}
	os.WriteFile(filepath.Join(dir, "scripts.sum"), []byte(strings.Replace(string(sum), " released", "", 1)), 0o644)
	errb.Reset()
	if code := run([]string{"verify", dir}, &out, &errb); code != 0 {
		t.Fatalf("verify of a retired unreleased version exited %d: %s", code, errb.String())
	}
	if code := run([]string{"bogus"}, &out, &errb); code != 2 {
		t.Fatalf("bad usage exited %d", code)
	}
}
