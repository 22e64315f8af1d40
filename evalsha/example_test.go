package evalsha_test

import (
	"context"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/registry"
)

func Example() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()

	reg, err := registry.New(os.DirFS("testdata"))
	if err != nil {
		fmt.Println(err)
		return
	}
	runner, _ := evalsha.New(client)
	defer runner.Close()
	incr, _ := reg.Get("counter.incr")

	ctx := context.Background()
	n, err := runner.Run(ctx, incr, []string{"visits"}, 3).Int64()
	fmt.Println(n, err)
	// The first call found no cached script and fell back to EVAL once.
	fmt.Printf("%+v\n", runner.Stats())
	// Output:
	// 3 <nil>
	// {Calls:1 NoScript:1 Evals:1 ReadOnly:0 Failures:0}
}

// Script errors name the script, and keep the server's text.
func ExampleScriptError() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	reg, _ := registry.New(os.DirFS("testdata"))
	runner, _ := evalsha.New(client)
	fail, _ := reg.Get("echo.fail")

	err := runner.Run(context.Background(), fail, []string{"k"}, "quota exceeded").Err()
	fmt.Println(err)
	// Output: echo.fail@1: quota exceeded
}

// Many calls in one round trip; results come back in the caller's order.
func ExampleRunner_RunMany() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	reg, _ := registry.New(os.DirFS("testdata"))
	runner, _ := evalsha.New(client)
	incr, _ := reg.Get("counter.incr")

	cmds, err := runner.RunMany(context.Background(), []evalsha.Call{
		{Script: incr, Keys: []string{"a"}, Args: []any{1}},
		{Script: incr, Keys: []string{"b"}, Args: []any{10}},
		{Script: incr, Keys: []string{"a"}, Args: []any{1}},
	})
	for _, c := range cmds {
		fmt.Print(c.Val(), " ")
	}
	fmt.Println(err)
	// Output: 1 10 2 <nil>
}

// Load puts every script on every node, so the first EVALSHA finds it.
func ExampleLoad() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	reg, _ := registry.New(fstest.MapFS{"hello.v1.lua": {Data: []byte("-- name: hello\n-- version: 1\n-- description: Greet.\n-- keys:\n-- args: who\nreturn 'hello ' .. ARGV[1]\n")}})
	if err := evalsha.Load(context.Background(), client, reg); err != nil {
		fmt.Println(err)
		return
	}
	s, _ := reg.Get("hello")
	reply, _ := client.EvalSha(context.Background(), s.SHA1, nil, "world").Text()
	fmt.Println(reply)
	// Output: hello world
}
