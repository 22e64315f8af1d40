package registry_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/redlua/redlua/registry"
)

// ParseScript and ReadSum read files users write: whatever they are given,
// they return a result or errors that point into the file, never panic. A
// script that parses keeps its source, and parsing that source again gives
// the same SHA1.
func FuzzParseScript(f *testing.F) {
	released, err := filepath.Glob("../lua/*.lua")
	if err != nil || len(released) == 0 {
		f.Fatalf("no seed scripts under ../lua: %v", err)
	}
	for _, p := range released {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("#!lua flags=no-writes,allow-oom\n-- name: a\n-- version: 1\n-- keys: k...\n-- args:\nreturn KEYS[2]\n"))
	f.Add([]byte("-- name: a\n-- version: 0\n-- version: 2\nreturn ARGV[0]\n"))
	f.Add([]byte("#!lua flags=\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := registry.ParseScript("fuzz.lua", src)
		if err != nil {
			for _, e := range unjoin(err) {
				var re *registry.Error
				if !errors.As(e, &re) {
					t.Fatalf("ParseScript error %T %q is not a *registry.Error with a position", e, e)
				}
			}
			return
		}
		again, err := registry.ParseScript("fuzz.lua", []byte(s.Source))
		if err != nil || again.SHA1 != s.SHA1 {
			t.Fatalf("the parsed source does not parse to the same script: %v", err)
		}
		_, _ = registry.ReadSum(bytes.NewReader(src))
	})
}

// unjoin flattens errors.Join.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}
