package simulate_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

const acquireSrc = `-- name: mutex.acquire
-- version: 1
-- description: Take a lock if it is free, else report its PTTL.
-- keys: lock
-- args: owner ttl_ms
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return redis.call('PTTL', KEYS[1])
`

// A lock's lease runs out on the virtual clock, without waiting.
func ExampleServer_Run() {
	acquire, err := registry.ParseScript("mutex.acquire.v1.lua", []byte(acquireSrc))
	if err != nil {
		panic(err)
	}
	clock := simulate.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := simulate.New(simulate.WithClock(clock))
	ctx := context.Background()
	keys := []string{"{orders}:lock"}

	got, _ := srv.Run(ctx, acquire, keys, "alice", 30000).Int64()
	fmt.Println("alice:", got)
	clock.Advance(10 * time.Second)
	got, _ = srv.Run(ctx, acquire, keys, "bob", 30000).Int64()
	fmt.Println("bob waits ms:", got)
	clock.Advance(20 * time.Second)
	got, _ = srv.Run(ctx, acquire, keys, "bob", 30000).Int64()
	fmt.Println("bob:", got)
	owner, _ := srv.Do(ctx, "GET", keys[0]).Text()
	fmt.Println("owner:", owner)
	// Output:
	// alice: 1
	// bob waits ms: 20000
	// bob: 1
	// owner: bob
}

// Errors carry Redis's own text.
func ExampleServer_RunSource() {
	srv := simulate.New()
	err := srv.RunSource(context.Background(), "return nosuch", nil).Err()
	fmt.Println(err)
	// Output:
	// ERR user_script:1: Script attempted to access nonexistent global variable 'nosuch' script: 100e7d6e08587ed416717dc6d703eca312809a20, on @user_script:1.
}

// A script that touches a key it was not given fails with the line and key.
func ExampleDisciplineError() {
	srv := simulate.New()
	err := srv.RunSource(context.Background(), "return redis.call('GET', 'config')", nil).Err()
	fmt.Println(errors.Is(err, simulate.ErrUndeclaredKey))
	var de *simulate.DisciplineError
	if errors.As(err, &de) {
		fmt.Println(de.Line, de.Key)
	}
	// Output:
	// true
	// 1 config
}

// Subscribers get what scripts publish once the script has finished.
func ExampleServer_Subscribe() {
	srv := simulate.New()
	ctx := context.Background()
	unsubscribe, _ := srv.Subscribe(ctx, "released", func(payload string) {
		fmt.Println("woken by", payload)
	})
	defer unsubscribe()
	n, _ := srv.RunSource(ctx, "return redis.call('PUBLISH', 'released', ARGV[1])", nil, "alice").Int64()
	fmt.Println("receivers:", n)
	// Output:
	// woken by alice
	// receivers: 1
}

// Trace shows the commands a script ran.
func ExampleServer_Trace() {
	srv := simulate.New()
	srv.RunSource(context.Background(), "redis.call('SET', KEYS[1], 'v') return redis.call('GET', KEYS[1])", []string{"k"})
	for _, e := range srv.Trace() {
		fmt.Println(e.Args, e.Reply.Str)
	}
	// Output:
	// [SET k v] OK
	// [GET k] v
}
