// Command lock is the README's first example: it takes a Mutex, works
// under its lease and releases it. REDIS_ADDR names the server.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlua/redlua/locks"
)

func main() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")}) // "" is localhost:6379
	lc, err := locks.New(client, locks.WithTTL(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer lc.Close()
	// The watchdog renews the lease every TTL/3 while it is held.
	m, _ := lc.Mutex("invoice:42", locks.WithWatchdog(locks.DefaultRenewFraction))
	lease, err := m.Lock(ctx) // waits in line: a release hands the lock to the next waiter
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Unlock(ctx)
	work, stop := lease.Context(ctx) // cancelled, with ErrLockLost as cause, if the lease is lost
	defer stop()
	fmt.Println("holding invoice:42 with fencing token", lease.Token(), "work ctx err:", work.Err())
}
