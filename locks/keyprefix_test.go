package locks_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// A Client with WithKeyPrefix("app:") works for a Redis ACL user limited
// to the keys ~app:* and the channels &app:*: every kind of lock, a
// contended wait (woken on a channel), Inspect and ForceUnlock. Its keys
// are app:{name}...; the same user's Client without the prefix, and a
// command on a key outside the pattern, are refused.
func TestKeyPrefixUnderACLUser(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := timeout(t, time.Minute)
	if err := srv.Do(ctx, "ACL", "SETUSER", "app", "on", ">app-secret", "resetkeys", "~app:*", "resetchannels", "&app:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	appClient := func() *redis.Client {
		rc := srv.Client(func(o *redis.Options) { o.Username, o.Password = "app", "app-secret" })
		t.Cleanup(func() { rc.Close() })
		return rc
	}
	newClient := func(opts ...locks.Option) *locks.Client {
		c, err := locks.New(appClient(), append([]locks.Option{locks.WithTTL(time.Minute)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := newClient(locks.WithKeyPrefix("app:")), newClient(locks.WithKeyPrefix("app:"))

	held, err := mutex(t, a, "orders:42").Lock(ctx)
	if err != nil {
		t.Fatalf("Lock under the ACL user with the prefix: %v", err)
	}
	if n, err := srv.Do(ctx, "EXISTS", "app:{orders:42}").Int(); err != nil || n != 1 {
		t.Fatalf("EXISTS app:{orders:42} = %d, %v; want the lock's key under the prefix", n, err)
	}
	if n, err := srv.Do(ctx, "EXISTS", "{orders:42}").Int(); err != nil || n != 0 {
		t.Fatalf("EXISTS {orders:42} = %d, %v; want no key without the prefix", n, err)
	}
	info, err := b.Inspect(ctx, "orders:42")
	if err != nil || !info.Held || info.Token != held.Token() {
		t.Fatalf("Inspect through the other prefixed Client = %+v, %v; want the holder", info, err)
	}
	// A contended Lock queues and is woken on its grant channel by the
	// release: both under the prefix.
	waited := make(chan error, 1)
	go func() {
		l, err := mutex(t, b, "orders:42").Lock(ctx)
		if err == nil {
			err = l.Unlock(ctx)
		}
		waited <- err
	}()
	poll(t, "the second Lock queued", 30*time.Second, nil, func() bool {
		info, err := a.Inspect(ctx, "orders:42")
		return err == nil && info.Waiters > 0
	})
	if err := held.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the waiting Lock under the prefix: %v", err)
	}

	rw, err := a.RWMutex("catalog")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rw.RLock(ctx)
	if err != nil {
		t.Fatalf("RLock under the prefix: %v", err)
	}
	if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	sem, err := a.Semaphore("slots", 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sem.Acquire(ctx, 2)
	if err != nil {
		t.Fatalf("Semaphore under the prefix: %v", err)
	}
	if err := p.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	ml, err := a.MultiLock([]string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ml.Lock(ctx)
	if err != nil {
		t.Fatalf("MultiLock under the prefix: %v", err)
	}
	if err := ms.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	forced, err := mutex(t, a, "batch").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if removed, err := b.ForceUnlock(ctx, "batch", locks.WithGrace(0)); err != nil || !removed {
		t.Fatalf("ForceUnlock under the prefix = %v, %v", removed, err)
	}
	_ = forced.Unlock(ctx)

	// Outside the pattern: refused by the server.
	if _, err := mutex(t, newClient(), "orders:42").TryLock(ctx); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("TryLock without the prefix under the ACL user = %v, want NOPERM", err)
	}
	if err := appClient().Set(ctx, "other", "1", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("SET other under the ACL user = %v, want NOPERM (the ACL is what the test relies on)", err)
	}
}

// WithKeyPrefix refuses what would break the keys: empty, too long,
// braces (the hash tag), a name that with the prefix passes MaxNameBytes;
// it is a Client option.
func TestKeyPrefixRefusals(t *testing.T) {
	for _, prefix := range []string{"", "{app}:", "app}", strings.Repeat("p", locks.MaxKeyPrefixBytes+1)} {
		if _, err := locks.NewWithBackend(simulate.New(), locks.WithKeyPrefix(prefix)); !errors.Is(err, locks.ErrInvalidArgument) || !strings.Contains(err.Error(), "WithKeyPrefix(") {
			t.Errorf("WithKeyPrefix(%q) = %v, want ErrInvalidArgument naming the option", prefix, err)
		}
	}
	c, err := locks.NewWithBackend(simulate.New(), locks.WithKeyPrefix("app:"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mutex("m", locks.WithKeyPrefix("x:")); err == nil || !strings.Contains(err.Error(), "WithKeyPrefix does not apply") {
		t.Errorf("WithKeyPrefix on a Mutex = %v, want it refused (Client only)", err)
	}
	if _, err := c.Mutex(strings.Repeat("n", locks.MaxNameBytes)); !errors.Is(err, locks.ErrInvalidArgument) || !strings.Contains(err.Error(), "key prefix") {
		t.Errorf("a name of MaxNameBytes under a prefix = %v, want ErrInvalidArgument naming the prefix", err)
	}
	if _, err := c.Mutex(strings.Repeat("n", locks.MaxNameBytes-len("app:"))); err != nil {
		t.Errorf("a name that fits with the prefix = %v", err)
	}
}
