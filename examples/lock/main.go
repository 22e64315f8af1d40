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
	// The watchdog renews the lease every TTL/3 while it is held.
	m, _ := lc.Mutex("invoice:42", locks.WithWatchdog(locks.DefaultRenewFraction))
	// Do waits in line (a release hands the lock to the next waiter), runs the function, and
	// releases the lock however it returns, even when ctx was cancelled meanwhile.
	err = m.Do(ctx, func(work context.Context, lease *locks.Lease) error {
		// work is cancelled, with ErrLockLost as cause, if the lease is lost.
		fmt.Println("holding invoice:42 with fencing token", lease.Token(), "work ctx err:", work.Err())
		return nil
	})
	if err != nil { // errors.Is(err, locks.ErrLockLost): the work may have run unprotected
		log.Fatal(err)
	}
}
