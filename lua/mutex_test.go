package lua_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// The version-1 mutex scripts' contract, on miniredis and on a real server.
func TestMutexScripts(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { c.Close() })
		mutexContract(t, c, func(d time.Duration) { mr.FastForward(d) })
	})
	t.Run("redis-server", func(t *testing.T) {
		srv := redistest.Standalone(t)
		mutexContract(t, srv.Client(), func(d time.Duration) { time.Sleep(d) })
	})
}

func mutexContract(t *testing.T, c *redis.Client, elapse func(time.Duration)) {
	ctx := context.Background()
	reg := scripts(t)
	r, err := evalsha.New(c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	get := func(name string) func(keys []string, args ...any) any {
		s, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return func(keys []string, args ...any) any {
			v, err := r.Run(ctx, s, keys, args...).Result()
			if err != nil && err != redis.Nil {
				t.Fatalf("%s: %v", s.ID(), err)
			}
			return v
		}
	}
	acquire, release, extend, inspect := get("mutex.acquire@1"), get("mutex.release@1"), get("mutex.extend@1"), get("mutex.inspect@1")
	lock := []string{"{orders}", "{orders}:fence"}
	one := lock[:1]
	inspectKeys := []string{"{orders}", "{orders}:queue"}

	check := func(what string, got, want any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("free lock", acquire(lock, "alice", 200, "0", "host-a"), []any{int64(1), int64(1), int64(1)})
	got := acquire(lock, "bob", 200, "0", "host-b").([]any)
	if got[0] != int64(0) || got[1].(int64) <= 0 || got[1].(int64) > 200 {
		t.Fatalf("held lock = %v; want {0, pttl in (0, 200]}", got)
	}
	check("non-reentrant same owner", acquire(lock, "alice", 200, "0", "").([]any)[0], int64(0))
	check("reentrant same owner", acquire(lock, "alice", 200, "1", ""), []any{int64(1), int64(1), int64(2)})
	info := inspect(inspectKeys).([]any)
	check("inspect owner/fence/count/meta/queue", []any{info[0], info[1], info[2], info[4], info[5]}, []any{"alice", int64(1), int64(2), "host-a", int64(0)})
	check("extend by another", extend(one, "bob", 500), int64(0))
	check("extend by owner", extend(one, "alice", 500), int64(1))
	check("release by another", release(one, "bob", "{orders}:released"), int64(0))

	var mu sync.Mutex
	var msgs []string
	unsub, err := r.Subscribe(ctx, "{orders}:released", func(p string) { mu.Lock(); msgs = append(msgs, p); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	check("first release of two holds", release(one, "alice", "{orders}:released"), int64(2))
	check("last release", release(one, "alice", "{orders}:released"), int64(1))
	check("release when free", release(one, "alice", "{orders}:released"), int64(-1))
	check("inspect a free lock", inspect(inspectKeys), []any{nil, int64(0), int64(0), int64(-2), "", int64(0)})
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(msgs)
		mu.Unlock()
		if n == 1 {
			break
		}
		if n > 1 || time.Now().After(deadline) {
			t.Fatalf("release messages %v; want exactly one, from the release that freed the lock", msgs)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Fencing tokens keep growing across owners and expiries.
	check("bob takes it", acquire(lock, "bob", 50, "0", ""), []any{int64(1), int64(2), int64(1)})
	elapse(80 * time.Millisecond)
	check("extend after expiry", extend(one, "bob", 50), int64(-1))
	check("carol after bob's lease expired", acquire(lock, "carol", 1000, "0", ""), []any{int64(1), int64(3), int64(1)})
}
