package main

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// The command runs in-process through run. A bad flag value, after NAME
// as before it, is refused in the CLI's words before anything connects.
func Example() {
	code := run(context.Background(), []string{"lock", "nightly-report", "--ttl", "5ms", "--", "./report.sh"},
		stdio{in: strings.NewReader(""), out: os.Stdout, err: os.Stdout}, func(string) string { return "" })
	fmt.Println("exit", code)
	// Output:
	// redlua lock: --ttl 5ms is too short: a lease lasts at least 10ms; give a longer one, such as --ttl 30s (the default); see 'redlua lock --help'
	// exit 2
}
