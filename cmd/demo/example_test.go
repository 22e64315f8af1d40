package main

import (
	"context"
	"fmt"
	"strings"
)

// The demo needs nothing but Go: with no REDIS_ADDR it runs on an embedded
// miniredis, and it removes every key it created.
func Example() {
	var out strings.Builder
	err := run(context.Background(), "", &out)
	fmt.Println(err, strings.Contains(out.String(), "Cleaned up"))
	// Output: <nil> true
}
