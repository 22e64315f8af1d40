package lua_test

import (
	"fmt"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// The embedded scripts are data: parse them with the registry, which checks
// every header against its body, and pin the version you run (version 8 is
// the one locks runs for a Mutex).
func Example() {
	reg, err := registry.New(lua.FS)
	if err != nil {
		fmt.Println(err)
		return
	}
	acquire, err := reg.Lookup("mutex.acquire@14")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(acquire.ID(), acquire.Keys)
	// Output: mutex.acquire@14 [lock queue]
}
