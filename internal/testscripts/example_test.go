package testscripts_test

import (
	"fmt"

	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// The fixtures are a registry like any other directory of scripts.
func Example() {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range reg.Scripts() {
		fmt.Println(s.ID(), s.Keys)
	}
	// Output:
	// mutex.acquire@1 [lock fence]
	// mutex.extend@1 [lock]
	// mutex.inspect@1 [lock queue]
	// mutex.release@1 [lock]
}
