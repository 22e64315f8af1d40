package lint_test

import (
	"fmt"

	"github.com/redlua/redlua/lint"
)

// A user's own test can lint the scripts it ships. This script builds a
// key in Lua, forgets a "local", and calls a command Redis does not know.
func ExampleCheck() {
	src := []byte(`local prefix = 'lock:'
count = redis.call('INCR', prefix .. ARGV[1])
return redis.call('GETT', KEYS[1])
`)
	for _, d := range lint.Check("custom.lua", src, nil) {
		fmt.Println(d)
	}
	// Output:
	// custom.lua:2:1: (W111) setting non-standard global variable 'count'
	// custom.lua:2:28: (W902) key name for INCR is built in Lua: pass the whole key in KEYS (a built key fails on Redis Cluster and under ACL key patterns)
	// custom.lua:3:19: (E922) unknown Redis command 'GETT': Redis fails the call with "Unknown Redis command called from script"
}

// Config narrows the report with luacheck's patterns and adds globals.
func ExampleConfig() {
	src := []byte("local unused = 1\nhelper()\n")
	cfg := &lint.Config{Ignore: []string{"211"}, ReadGlobals: []string{"helper"}}
	fmt.Println(len(lint.Check("quiet.lua", src, cfg)))
	// Output:
	// 0
}
