package evalsha_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/registry"
)

const loadAcquire = `-- name: mutex.acquire
-- version: 2
-- description: Take the lock when it is free.
-- keys: lock fence
-- args: owner ttl_ms
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return nil
`

const loadInspect = `#!lua flags=no-writes,allow-stale
-- name: mutex.inspect
-- version: 1
-- description: Report the holder.
-- keys: locks...
-- args:
return redis.call('GET', KEYS[1])
`

// miniredis, like Redis 6, cannot compile "#!lua": Load falls back to the
// legacy source, which EVALSHA can then run under LegacySHA1.
func TestLoadMiniredisLegacyFallback(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	reg, err := registry.New(fstest.MapFS{"mutex.acquire.v2.lua": {Data: []byte(loadAcquire)}, "mutex.inspect.v1.lua": {Data: []byte(loadInspect)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := evalsha.Load(ctx, client, reg); err != nil {
		t.Fatalf("Load on miniredis: %v", err)
	}
	in, _ := reg.Get("mutex.inspect")
	exists, err := client.ScriptExists(ctx, in.LegacySHA1(), in.SHA1).Result()
	if err != nil || !exists[0] || exists[1] {
		t.Fatalf("SCRIPT EXISTS legacy, canonical = %v, %v; want [true false]", exists, err)
	}
	mr.Set("k", "holder")
	if got, err := client.EvalSha(ctx, in.LegacySHA1(), []string{"k"}).Text(); err != nil || got != "holder" {
		t.Fatalf("EVALSHA legacy = %q, %v", got, err)
	}
}

func TestLoadReportsNodeErrors(t *testing.T) {
	mr := miniredis.RunT(t)
	addr := mr.Addr()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	reg, _ := registry.New(fstest.MapFS{"mutex.acquire.v2.lua": {Data: []byte(loadAcquire)}})
	mr.Close()
	err := evalsha.Load(context.Background(), client, reg)
	var le *evalsha.LoadError
	if !errors.As(err, &le) || le.Node != addr {
		t.Fatalf("Load on a dead server = %v, want a *LoadError naming %s", err, addr)
	}
	if err := evalsha.Load(context.Background(), nil, reg); err == nil {
		t.Error("Load with a nil client did not fail")
	}
	if err := evalsha.Load(context.Background(), client, nil); err == nil {
		t.Error("Load with a nil registry did not fail")
	}
}
