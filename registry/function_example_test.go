package registry_test

import (
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/redlua/redlua/registry"
)

// A registry published as one Redis 7 function library: FUNCTION LOAD
// lib.Code, then FCALL the function each script became.
func ExampleNewFunctionLibrary() {
	reg, err := registry.New(fstest.MapFS{
		"counter.incr.v1.lua": {Data: []byte(`-- name: counter.incr
-- version: 1
-- description: Add one to a counter.
-- keys: counter
-- args:
return redis.call('INCR', KEYS[1])
`)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	lib, err := registry.NewFunctionLibrary(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := reg.Get("counter.incr")
	fn, _ := lib.Function(s)
	fmt.Println(registry.IsFunctionLibrary(lib.Name), strings.HasPrefix(fn, "counter_incr_v1_"))
	fmt.Println(strings.SplitN(lib.Code, "\n", 2)[0] == "#!lua name="+lib.Name)
	// Output:
	// true true
	// true
}
