package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Record a new script directory once, then verify it in CI: verify fails
// as soon as a released version is edited.
func Example() {
	dir, _ := os.MkdirTemp("", "luasum")
	defer os.RemoveAll(dir)
	script := "-- name: hello\n-- version: 1\n-- description: Greet.\n-- keys:\n-- args: who\nreturn 'hello ' .. ARGV[1]\n"
	_ = os.WriteFile(filepath.Join(dir, "hello.v1.lua"), []byte(script), 0o644)
	fmt.Println("record:", run([]string{"record", dir}, io.Discard, os.Stdout))
	_ = os.WriteFile(filepath.Join(dir, "hello.v1.lua"), []byte(script+"-- edited\n"), 0o644)
	fmt.Println("verify after an edit fails:", run([]string{"verify", dir}, io.Discard, io.Discard) != 0)
	// Output:
	// record: 0
	// verify after an edit fails: true
}
