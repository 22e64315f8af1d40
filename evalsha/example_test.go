package evalsha_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing/fstest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
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

// The script and WAIT travel in one pipeline on one connection; acked says
// how many replicas had the write when WAIT returned (this in-memory server
// has none, so WAIT answers 0 at once; a real primary waits up to the
// timeout for the replicas asked for).
func ExampleRunner_RunReplicated() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	reg, _ := registry.New(os.DirFS("testdata"))
	runner, _ := evalsha.New(client)
	incr, _ := reg.Get("counter.incr")

	cmd, acked, err := runner.RunReplicated(context.Background(), incr, 1, 100*time.Millisecond, []string{"orders"}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	if acked < 1 {
		fmt.Println("written, but no replica acknowledged yet:", cmd.Val())
	}
	// Output: written, but no replica acknowledged yet: 1
}

// Shard channels: publish with SPUBLISH from a script whose key shares the
// channel's slot (the hash tag {orders}).
func ExampleRunner_ShardedPubSub() {
	mr, _ := miniredis.Run()
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	runner, _ := evalsha.New(client)
	fmt.Println("standalone:", runner.ShardedPubSub())

	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{mr.Addr()}})
	defer cluster.Close()
	onCluster, _ := evalsha.New(cluster)
	fmt.Println("cluster:", onCluster.ShardedPubSub())
	// Output:
	// standalone: false
	// cluster: true
}

// Code written against Scripter runs on real Redis (a *Runner) and offline
// (a *simulate.Server) alike, errors included.
func ExampleScripter() {
	reg, _ := registry.New(os.DirFS("testdata"))
	fail, _ := reg.Get("echo.fail")
	var s evalsha.Scripter = simulate.New()

	err := s.Run(context.Background(), fail, []string{"k"}, "quota exceeded").Err()
	var se *evalsha.ScriptError
	fmt.Println(errors.As(err, &se), se.Script, err)
	// Output: true echo.fail@1 echo.fail@1: quota exceeded
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
