package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCorpus generates n lock-style scripts of 30-150 lines into dir: a
// redlua header, KEYS/ARGV locals, redis.call branches and loops.
func writeCorpus(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	var files []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "#!lua\n-- name: gen.s%d\n-- version: 1\n-- description: generated script %d.\n-- keys: lock queue\n-- args: owner ttl_ms\n", i, i)
		b.WriteString("local lock, queue = KEYS[1], KEYS[2]\nlocal owner, ttl = ARGV[1], tonumber(ARGV[2])\n")
		blocks := 4 + i%26 // 30 to ~150 lines
		for j := 0; j < blocks; j++ {
			fmt.Fprintf(&b, "local v%d = redis.call('HGET', lock, 'f%d')\n", j, j)
			fmt.Fprintf(&b, "if v%d == owner then\n  redis.call('PEXPIRE', lock, ttl)\nelseif not v%d then\n", j, j)
			fmt.Fprintf(&b, "  for k = 1, %d do redis.call('RPUSH', queue, owner .. k) end\nend\n", j+1)
		}
		b.WriteString("return redis.call('PTTL', lock)\n")
		p := filepath.Join(dir, fmt.Sprintf("gen.s%d.v1.lua", i))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

func TestCorpusIsClean(t *testing.T) {
	dir := t.TempDir()
	writeCorpus(t, dir, 100)
	if out, _, code := runCLI(t, "", "--formatter", "plain", dir); code != exitOK {
		t.Fatalf("generated corpus should be valid Lua: exit %d\n%s", code, out)
	}
}

// BenchmarkLuacheckCorpus checks 100 generated scripts per iteration, as
// the CLI does (files in parallel).
func BenchmarkLuacheckCorpus(b *testing.B) {
	dir := b.TempDir()
	writeCorpus(b, dir, 100)
	b.ResetTimer()
	for b.Loop() {
		if code := run([]string{"--no-config", "-qqq", dir}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
}

// TestWriteBenchCorpus lets bench.sh generate the same corpus for the real
// luacheck: REDLUA_BENCH_CORPUS=dir go test -run WriteBenchCorpus.
func TestWriteBenchCorpus(t *testing.T) {
	dir := os.Getenv("REDLUA_BENCH_CORPUS")
	if dir == "" {
		t.Skip("set REDLUA_BENCH_CORPUS=dir to write the benchmark corpus")
	}
	writeCorpus(t, dir, 100)
}
