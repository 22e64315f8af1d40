package simulate_test

import (
	"context"
	"fmt"

	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

const countSrc = `-- name: waiters.count
-- version: 1
-- description: Count a lock's waiters, once by reading every field and once by HLEN.
-- keys: lock
-- args: mode
if ARGV[1] == 'scan' then return #redis.call('HKEYS', KEYS[1]) end
return redis.call('HLEN', KEYS[1])
`

// Work counts the elements each command touched: a scan of the hash grows
// with the waiters, an HLEN does not.
func ExampleServer_Work() {
	count, err := registry.ParseScript("waiters.count.v1.lua", []byte(countSrc))
	if err != nil {
		panic(err)
	}
	srv := simulate.New()
	ctx := context.Background()
	for _, waiters := range []int{10, 10000} {
		srv.Do(ctx, "DEL", "{lock}")
		for i := 0; i < waiters; i++ {
			srv.Do(ctx, "HSET", "{lock}", fmt.Sprintf("w:%d", i), "1")
		}
		srv.ResetWork()
		srv.Run(ctx, count, []string{"{lock}"}, "scan")
		scan := srv.Work().Scripts["waiters.count@1"].Elements
		srv.ResetWork()
		srv.Run(ctx, count, []string{"{lock}"}, "len")
		hlen := srv.Work().Scripts["waiters.count@1"].Elements
		fmt.Printf("%d waiters: HKEYS %d elements, HLEN %d\n", waiters, scan, hlen)
	}
	// Output:
	// 10 waiters: HKEYS 10 elements, HLEN 1
	// 10000 waiters: HKEYS 10000 elements, HLEN 1
}
