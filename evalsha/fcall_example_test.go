package evalsha_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// Running the project's scripts as Redis 7 functions (FCALL) instead of
// EVALSHA: the library loads itself on first use and survives a failover,
// since functions replicate.
func ExampleNewFunctionRunner() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	reg, err := registry.New(lua.FS)
	if err != nil {
		fmt.Println(err)
		return
	}
	runner, err := evalsha.NewFunctionRunner(client, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer runner.Close()
	inspect, _ := reg.Get("lock.inspect")
	keys := []string{"{orders}", "{orders}:queue", "{orders}:squeue"}
	reply, err := runner.Run(context.Background(), inspect, keys, "0", 100).Slice() // the first page
	fmt.Println(reply, err)
}
