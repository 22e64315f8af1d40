package simulate_test

import (
	"context"
	"fmt"

	"github.com/redlua/redlua/simulate"
)

// Redis 7 Functions run in the simulator as on a server: FUNCTION LOAD a
// library, then FCALL (or FCALL_RO for functions flagged no-writes).
func ExampleServer_Do_functions() {
	ctx := context.Background()
	srv := simulate.New()
	code := `#!lua name=counter
redis.register_function('bump', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)
redis.register_function{function_name='peek', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}`
	fmt.Println(srv.Do(ctx, "FUNCTION", "LOAD", code).Val())
	fmt.Println(srv.Do(ctx, "FCALL", "bump", 1, "hits", 5).Val())
	fmt.Println(srv.Do(ctx, "FCALL_RO", "peek", 1, "hits").Val())
	fmt.Println(srv.Do(ctx, "FCALL_RO", "bump", 1, "hits", 1).Err())
	// Output:
	// counter
	// 5
	// 5
	// ERR Can not execute a script with write flag using *_ro command.
}
