// Command luacheck checks Redis Lua scripts and prints luacheck-compatible
// reports (default, plain, JSON, sarif, github). Exit codes follow luacheck:
// 0 clean, 1 warnings, 2 errors, 3 I/O errors, 4 bad usage.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
