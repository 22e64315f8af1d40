package simulate_test

import (
	"context"
	"fmt"

	"github.com/redlua/redlua/simulate"
)

// A script that times itself with os.clock runs on Redis 7.4 and Valkey 8,
// not on Redis 7.0: test it under the profile of the server you run.
func ExampleWithServer() {
	ctx := context.Background()
	src := "return redis.REDIS_VERSION .. ' ' .. type(rawget(_G, 'os')) .. ' ' .. type(rawget(_G, 'getfenv'))"
	for _, p := range []simulate.Profile{simulate.Redis70, simulate.Redis74, simulate.Valkey80} {
		srv := simulate.New(simulate.WithServer(p))
		fmt.Println(p, srv.RunSource(ctx, src, nil).Val())
	}
	fmt.Println(simulate.New(simulate.WithServer(simulate.Valkey80)).RunSource(ctx, "return redis.SERVER_NAME .. ' ' .. redis.VALKEY_VERSION", nil).Val())
	// Output:
	// redis-7.0 7.0.15 nil nil
	// redis-7.4 7.4.1 table function
	// valkey-8.0 7.2.4 table function
	// valkey 8.0.1
}
