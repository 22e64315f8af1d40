// Command demo walks through redlua on a Redis server: it registers the
// embedded lock scripts, loads them, and lets two workers share one lock,
// printing each step in plain words.
//
//	go run ./cmd/demo                            # an embedded miniredis
//	REDIS_ADDR=127.0.0.1:6379 go run ./cmd/demo  # your own server
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

func main() {
	if err := run(context.Background(), os.Getenv("REDIS_ADDR"), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, out io.Writer) error {
	say := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }

	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("starting the embedded miniredis: %w", err)
		}
		defer mr.Close()
		addr = mr.Addr()
		say("No REDIS_ADDR set: using an embedded miniredis at %s.", addr)
	} else {
		say("Using the Redis server at %s (REDIS_ADDR).", addr)
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cannot reach %s: %w", addr, err)
	}

	reg, err := registry.New(lua.FS)
	if err != nil {
		return err
	}
	say("\n1. The registry parsed %d embedded scripts and checked each header against its body:", len(reg.Scripts()))
	for _, s := range reg.Scripts() {
		say("   %-18s sha1 %s…  keys %v  args %v", s.ID(), s.SHA1[:12], s.Keys, s.Args)
	}
	if err := evalsha.Load(ctx, client, reg); err != nil {
		return err
	}
	say("\n2. SCRIPT LOAD put them on the server, so the first call is already a cheap EVALSHA.")

	runner, err := evalsha.New(client)
	if err != nil {
		return err
	}
	defer runner.Close()
	script := func(name string) *registry.Script {
		s, _ := reg.Get(name) // the embedded set always has the mutex scripts
		return s
	}
	acquire, release, inspect := script("mutex.acquire"), script("mutex.release"), script("mutex.inspect")
	lock := []string{"{report:daily}", "{report:daily}:fence"}
	const channel = "{report:daily}:released"
	const lease = 2 * time.Second

	say("\n3. Two workers want the lock {report:daily}; each has its own owner token.")
	alice, bob := "alice-7f3a", "bob-91c2"
	reply, err := runner.Run(ctx, acquire, lock, alice, lease.Milliseconds(), "0", "worker alice").Slice()
	if err != nil {
		return err
	}
	say("   alice asks first: acquired=%v, fencing token %v", reply[0] == int64(1), reply[1])
	reply, err = runner.Run(ctx, acquire, lock, bob, lease.Milliseconds(), "0", "worker bob").Slice()
	if err != nil {
		return err
	}
	say("   bob asks next: acquired=%v; the lease has %vms left, so bob waits for the release message", reply[0] == int64(1), reply[1])

	woken := make(chan struct{}, 1)
	unsubscribe, err := runner.Subscribe(ctx, channel, func(string) {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return err
	}
	defer unsubscribe()

	info, err := runner.Run(ctx, inspect, []string{"{report:daily}", "{report:daily}:queue"}).Slice()
	if err != nil {
		return err
	}
	say("\n4. An operator asks who holds it (a read-only script): owner %v, token %v, %vms left, note %q.", info[0], info[1], info[3], info[4])

	say("\n5. alice finishes her work and releases the lock; the release script publishes a wake-up.")
	if _, err := runner.Run(ctx, release, lock[:1], alice, channel).Int64(); err != nil {
		return err
	}
	select {
	case <-woken:
		say("   bob was woken at once by the message, not by polling.")
	case <-time.After(lease):
		say("   no message arrived; bob would retry when alice's lease ran out anyway.")
	}
	reply, err = runner.Run(ctx, acquire, lock, bob, lease.Milliseconds(), "0", "worker bob").Slice()
	if err != nil {
		return err
	}
	say("   bob asks again: acquired=%v, fencing token %v (higher than alice's, so a storage system can reject alice's late writes)", reply[0] == int64(1), reply[1])

	n, err := runner.Run(ctx, release, lock[:1], alice, channel).Int64()
	if err != nil {
		return err
	}
	say("\n6. alice, confused, tries to release again: the script answers %d (another owner holds it), and nothing changes.", n)
	if _, err := runner.Run(ctx, release, lock[:1], bob, channel).Int64(); err != nil {
		return err
	}
	st := runner.Stats()
	say("\nThe runner made %d script calls, %d of them needed the NOSCRIPT fallback.", st.Calls, st.NoScript)
	return lockDemo(ctx, client, say)
}

// lockDemo shows the same ideas through the locks package, which wraps them.
func lockDemo(ctx context.Context, client *redis.Client, say func(string, ...any)) error {
	say("\n7. The locks package does all of the above for you. Three workers share a fair lock with a watchdog:")
	c, err := locks.New(client, locks.WithFair(time.Second), locks.WithTTL(500*time.Millisecond), locks.WithWatchdog(0))
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := c.Mutex("report:weekly")
	if err != nil {
		return err
	}
	first, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	say("   worker 1 holds it (fencing token %d) and works longer than its 500ms lease; the watchdog renews it.", first.Token())
	var wg sync.WaitGroup
	results := make(chan string, 2)
	for w := 2; w <= 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Lock(ctx)
			if err != nil {
				results <- fmt.Sprintf("worker %d failed: %v", w, err)
				return
			}
			results <- fmt.Sprintf("worker %d got it in its turn, handed over by the release script (token %d)", w, l.Token())
			_ = l.Unlock(ctx)
		}()
		for { // queue the workers in order, so the demo's output is stable
			info, err := c.Inspect(ctx, "report:weekly")
			if err != nil {
				return err
			}
			if info.Waiters == int64(w-1) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(800 * time.Millisecond)
	say("   after 800ms worker 1 still holds it: %v", first.Err() == nil)
	if err := first.Unlock(ctx); err != nil {
		return err
	}
	wg.Wait()
	close(results)
	for r := range results {
		say("   %s", r)
	}
	st := c.Stats()
	say("\nDone: %d acquisitions, %d attempts found the lock busy, %d leases lost.", st.Acquired, st.Contended, st.Lost)
	return nil
}
