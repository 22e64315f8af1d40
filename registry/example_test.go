package registry_test

import (
	"fmt"
	"testing/fstest"

	"github.com/redlua/redlua/registry"
)

// A user's own scripts, read from a directory (here an in-memory one).
func ExampleNew() {
	scripts := fstest.MapFS{
		"ratelimit.take.v1.lua": {Data: []byte(`-- name: ratelimit.take
-- version: 1
-- description: Take one token from a bucket that refills every window.
-- keys: bucket
-- args: capacity window_ms
local left = redis.call('DECR', KEYS[1])
if left == tonumber(ARGV[1]) - 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return left
`)},
	}
	reg, err := registry.New(scripts)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := reg.Get("ratelimit.take")
	fmt.Println(s.ID(), s.Keys, s.Args)
	fmt.Println(s.Description)
	// Output:
	// ratelimit.take@1 [bucket] [capacity window_ms]
	// Take one token from a bucket that refills every window.
}

// Registration fails with file:line and a hint when the body uses a key the
// header does not declare.
func ExampleParseScript_error() {
	_, err := registry.ParseScript("bad.lua", []byte(`-- name: bad
-- version: 1
-- description: Reads a second key it never declared.
-- keys: first
-- args:
return redis.call('GET', KEYS[2])
`))
	fmt.Println(err)
	// Output:
	// bad.lua:6:26: KEYS[2] is beyond the keys the header declares: 1 (first); add a name to "-- keys:" or fix the index
}

// The one flag parser: the registry, lint and the simulator all read a
// "#!lua" line with it.
func ExampleParseShebang() {
	flags, problems := registry.ParseShebang("#!lua flags=no-writes,fast")
	fmt.Println(flags)
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// [no-writes]
	// unknown script flag "fast"; Redis 7 knows no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys
}
