package fence_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/simulate"
)

// A holder whose lease ran out writes after the next holder did: the
// Redis fence refuses it and leaves the newer value. (Here offline, on the
// simulator; pass evalsha.New(client) for a real Redis.)
func Example() {
	ctx := context.Background()
	f, err := fence.NewRedis(simulate.New())
	if err != nil {
		fmt.Println(err)
		return
	}
	// lease is any fence.Holder; in a program, the *locks.Lease of a Mutex.
	a := lease{name: "invoice-7", owner: "a", token: 1_700_000_000_000_000}
	b := lease{name: "invoice-7", owner: "b", token: 1_700_000_000_250_000}
	_, err = f.Write(ctx, b, "billing", fence.Set("{billing}:invoice-7", "paid by b"))
	fmt.Println("b:", err)
	_, err = f.Write(ctx, a, "billing", fence.Set("{billing}:invoice-7", "paid by a"))
	fmt.Println("a stale:", errors.Is(err, fence.ErrStale))
	// Output:
	// b: <nil>
	// a stale: true
}
