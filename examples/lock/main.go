// Command lock is the README's first example: it takes a Mutex, works
// under its lease and releases it (Mutex.Do). REDIS_ADDR names the server.
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
	m, _ := lc.Mutex("invoice:42", locks.WithWatchdog(locks.DefaultRenewFraction)) // renews every TTL/3
	// Do waits in line, runs the function with a context that ends (cause ErrLockLost) if the
	// lease is lost, then releases the lock however it returns, even if ctx was cancelled.
	err = m.Do(ctx, func(work context.Context, lease *locks.Lease) error {
		fmt.Println("holding invoice:42 with fencing token", lease.Token(), "work ctx err:", work.Err())
		return nil
	})
	if err != nil { // errors.Is(err, locks.ErrLockLost): the work may have run unprotected
		log.Fatal(err)
	}
}
