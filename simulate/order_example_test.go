package simulate_test

import (
	"context"
	"fmt"

	"github.com/redlua/redlua/simulate"
)

// A test asks the simulator whether Redis defines a reply's order before
// comparing it exactly: a small hash (a listpack) lists fields in insertion
// order on every server; a big one (a hash table) in an order no server
// shares.
func ExampleServer_ReplyOrder() {
	ctx := context.Background()
	srv := simulate.New()
	srv.Do(ctx, "HSET", "small", "b", 1, "a", 2)
	for i := 0; i < 600; i++ {
		srv.Do(ctx, "HSET", "big", fmt.Sprint("f", i), i)
	}
	fmt.Println(srv.Do(ctx, "OBJECT", "ENCODING", "small").Val(), srv.ReplyOrder("HKEYS", "small"))
	fmt.Println(srv.Do(ctx, "OBJECT", "ENCODING", "big").Val(), srv.ReplyOrder("HKEYS", "big"))
	fmt.Println(srv.Do(ctx, "HSCAN", "small", 0).Val())
	// Output:
	// listpack defined
	// hashtable undefined
	// [0 [b 1 a 2]]
}
