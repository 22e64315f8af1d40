package main

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// The command runs in-process through run. `scripts verify` needs no
// server: it checks the embedded scripts against their sum file.
func Example() {
	code := run(context.Background(), []string{"scripts", "verify"},
		stdio{in: strings.NewReader(""), out: os.Stdout, err: os.Stdout}, os.Getenv)
	fmt.Println("exit", code)
	// Output:
	// 60 scripts match the embedded scripts.sum
	// exit 0
}
