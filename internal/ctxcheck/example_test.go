package ctxcheck_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/redlua/redlua/internal/ctxcheck"
)

// A table test lists the package's calls that take a context, runs each
// with a nil context, and reports a panic as an error.
func Example() {
	calls, err := ctxcheck.Calls(".") // this package: none take a context
	fmt.Println(len(calls), err)

	lookup := func(ctx context.Context, key string) error {
		if ctx == nil {
			return errors.New("nil context: pass context.Background()")
		}
		return ctx.Err()
	}
	var nilCtx context.Context
	fmt.Println(ctxcheck.NoPanic("lookup", func() error { return lookup(nilCtx, "k") }))
	fmt.Println(ctxcheck.NoPanic("index", func() error { var m map[string]int; m["k"]++; return nil }))
	// Output:
	// 0 <nil>
	// nil context: pass context.Background()
	// index panicked: assignment to entry in nil map
}
