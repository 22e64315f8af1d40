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

// Config.Server checks a script against one server line's sandbox: os
// exists from Redis 7.4 and in Valkey 8, not in what every server has.
func ExampleConfig_server() {
	src := []byte("return os.clock()\n")
	fmt.Println(lint.Check("any.lua", src, nil))
	fmt.Println(lint.Check("new.lua", src, &lint.Config{Server: lint.Redis74}))
	fmt.Println(lint.ServerLines())
	// Output:
	// [any.lua:1:8: (W113) accessing undefined variable 'os']
	// []
	// [redis70 redis72 redis74 redis80 valkey72 valkey80]
}

// Layered options, as a driver with a config file and a command line has
// them: the most specific layer's rules come first, and the first enable
// or ignore that matches decides.
func ExampleFilter() {
	rules := []lint.Rule{
		{Kind: lint.RuleEnable, Patterns: []string{"211/debug_.*"}}, // command line
		{Kind: lint.RuleIgnore, Patterns: []string{"21"}},           // config file
	}
	src := []byte("local debug_x = 1\nlocal y = 2\nreturn 3\n")
	for _, d := range lint.Check("layers.lua", src, &lint.Config{Rules: rules}) {
		fmt.Println(d, lint.HelpURL(d.Code))
	}
	// Output:
	// layers.lua:1:7: (W211) unused variable 'debug_x' https://github.com/redlua/redlua/blob/main/lint/CODES.md#w211
}
