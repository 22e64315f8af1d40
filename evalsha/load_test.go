package evalsha_test

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
)

// miniredis, like Redis 6, cannot compile "#!lua": Load falls back to the
// legacy source, which EVALSHA can then run under LegacySHA1.
func TestLoadMiniredisLegacyFallback(t *testing.T) {
	mr, client := miniClient(t)
	reg := testRegistry(t)
	ctx := context.Background()
	if err := evalsha.Load(ctx, client, reg); err != nil {
		t.Fatalf("Load on miniredis: %v", err)
	}
	get := script(t, reg, "counter.get")
	if !get.HasShebang() {
		t.Fatal("testdata's counter.get lost its #!lua line; this test needs one")
	}
	exists, err := client.ScriptExists(ctx, get.LegacySHA1(), get.SHA1).Result()
	if err != nil || !exists[0] || exists[1] {
		t.Fatalf("SCRIPT EXISTS legacy, canonical = %v, %v; want [true false]", exists, err)
	}
	mr.Set("k", "7")
	if got, err := client.EvalSha(ctx, get.LegacySHA1(), []string{"k"}).Text(); err != nil || got != "7" {
		t.Fatalf("EVALSHA legacy = %q, %v", got, err)
	}
}

func TestLoadReportsNodeErrors(t *testing.T) {
	mr := miniredis.RunT(t)
	addr := mr.Addr()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	reg := testRegistry(t)
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
