package keyslot_test

import (
	"fmt"

	"github.com/redlua/redlua/internal/keyslot"
)

// Keys that share a {hash tag} share a slot, so one script may use them all
// on Redis Cluster.
func ExampleOf() {
	fmt.Println(keyslot.Of("{orders}:lock") == keyslot.Of("{orders}:fence"))
	fmt.Println(keyslot.Of("foo"))
	// Output:
	// true
	// 12182
}
