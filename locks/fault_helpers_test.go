package locks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

// The fault suite's clients do not retry (a dead or frozen server shows as
// an error, not as go-redis's retries) and time out after 1 s: short enough
// that a Lock call sent to a frozen server gives up during the freeze, long
// enough that a busy machine (2 cores shared by many builds) does not make
// healthy calls fail.
func faultRedisOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, PoolSize: 8}
}

// faultClient is a go-redis client and a locks.Client on it, both closed
// when the test ends.
func faultClient(t testing.TB, addr string, opts ...locks.Option) (*redis.Client, *locks.Client) {
	t.Helper()
	rc := redis.NewClient(faultRedisOptions(addr))
	c, err := locks.New(rc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); rc.Close() })
	return rc, c
}

// holderOracle answers "does owner hold the lock called name right now?" on
// whatever server is the primary at the moment of the question; the fenced
// resource uses it to tell stale writes from legitimate ones.
type holderOracle struct {
	mu     sync.Mutex
	name   string
	client *locks.Client
}

func (o *holderOracle) set(c *locks.Client, name string) {
	o.mu.Lock()
	o.client, o.name = c, name
	o.mu.Unlock()
}

func (o *holderOracle) isHolder(owner string) bool {
	o.mu.Lock()
	c, name := o.client, o.name
	o.mu.Unlock()
	if c == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := c.Inspect(ctx, name)
	return err == nil && info.Held && info.Owner == owner
}
