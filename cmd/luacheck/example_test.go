package main

import (
	"os"
	"strings"
)

// The CLI runs in-process through run; this is what CI sees for a script
// with a syntax error.
func Example() {
	run([]string{"--formatter", "plain", "--codes", "-", "--filename", "bad.lua"},
		strings.NewReader("#!lua\nlocal = 1\n"), os.Stdout, os.Stderr)
	// Output:
	// bad.lua:2:7: (E011) expected identifier near '='
}
