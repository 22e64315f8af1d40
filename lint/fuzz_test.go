package lint

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCheck feeds arbitrary bytes through the lexer, the parser, the
// resolver and every analyzer: nothing may panic, and every diagnostic
// must point inside the source.
func FuzzCheck(f *testing.F) {
	seeds, _ := filepath.Glob("../lua/*.lua")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"local x = 1 -- luacheck: push ignore 211\n-- luacheck: pop\n",
		"goto x ::x:: return 1 // 2 & 3 ~ 4",
		"#!lua flags=no-writes\n-- name: a\n-- version: 1\n-- description: d\n-- keys: k...\n-- args:\nreturn redis.call('SET', KEYS[2], 'v')",
		"local function f(...) local a, b = ... ; ; return function() return a, b end end",
		"repeat local x = 1 until x; while true do break end for i = 1, 2, 3 do end",
		"a, b.c, d[1] = 1\nlocal t = {[1] = 2, x = 3; 4}\nt:m'x'{}",
		"--[==[ long ]==] s = [[\n]] .. '\\0\\255\\n' .. 0x1F .. 1e5 .. .5",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		ds := Check("f.lua", src, &Config{MaxLineLength: 40, Ignore: []string{"611"}})
		lines := 1
		for _, c := range src {
			if c == '\n' {
				lines++
			}
		}
		for _, d := range ds {
			if d.Line < 1 || d.Column < 1 || d.Code == "" || d.Message == "" {
				t.Fatalf("malformed diagnostic %+v", d)
			}
			if d.Line > lines+1 {
				t.Fatalf("diagnostic beyond the last line (%d lines): %+v", lines, d)
			}
		}
	})
}
