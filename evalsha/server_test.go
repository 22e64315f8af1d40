package evalsha_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

func TestRunRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	runContract(t, srv.Client())
}

func TestSHA1EqualsScriptLoad(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	ctx := context.Background()
	for _, s := range testRegistry(t).Scripts() {
		sha, err := c.ScriptLoad(ctx, s.Source).Result()
		if err != nil || sha != s.SHA1 {
			t.Errorf("%s: SCRIPT LOAD = %s, %v; registry says %s", s.ID(), sha, err, s.SHA1)
		}
	}
}

func TestRunAfterScriptFlushRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	ctx := context.Background()
	reg := testRegistry(t)
	if err := evalsha.Load(ctx, c, reg); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, c)
	incr := script(t, reg, "counter.incr")
	if err := r.Run(ctx, incr, []string{"n"}, 1).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Run(ctx, incr, []string{"n"}, 1).Int64(); err != nil || n != 2 {
		t.Fatalf("after SCRIPT FLUSH: %d, %v", n, err)
	}
	if s := r.Stats(); s.NoScript != 1 {
		t.Errorf("stats %+v, want one NOSCRIPT fallback", s)
	}
}

func TestRunManyAfterFlushRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	pipelineContract(t, c, func() { c.ScriptFlush(context.Background()) })
}

func TestSubscribeRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	subscribeContract(t, srv.Client(), true)
}

// A no-writes script goes out as EVALSHA_RO and runs on a read-only replica.
func TestReadOnlyScriptOnReplica(t *testing.T) {
	primary, replica := redistest.PrimaryReplica(t)
	ctx := context.Background()
	// WAIT counts the replicas that acknowledged the writes of its own
	// connection, so the write and its WAIT share one connection; on another
	// connection WAIT has nothing to wait for and answers at once.
	conn := primary.Client().Conn()
	defer conn.Close()
	if err := conn.Set(ctx, "n", "7", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Do(ctx, "WAIT", 1, 10000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 after the write = %d, %v; want 1 (the replica acknowledged it)", n, err)
	}
	reg := testRegistry(t)
	r := newRunner(t, replica.Client())
	get := script(t, reg, "counter.get")
	for i := 0; i < 2; i++ { // cold, then cached
		if v, err := r.Run(ctx, get, []string{"n"}).Text(); err != nil || v != "7" {
			t.Fatalf("no-writes script on the replica = %q, %v", v, err)
		}
	}
	stats, err := replica.Client().Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !containsLine(stats, "cmdstat_evalsha_ro:calls=2") {
		t.Errorf("the replica did not see EVALSHA_RO twice:\n%s", stats)
	}
	// A write script on the replica fails with the server's READONLY error, named.
	incr := script(t, reg, "counter.incr")
	if err := r.Run(ctx, incr, []string{"n"}, 1).Err(); err == nil {
		t.Error("a write script ran on a read-only replica")
	}
}

func containsLine(info, prefix string) bool {
	for _, line := range splitLines(info) {
		if len(line) >= len(prefix) && line[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			line := s[start:i]
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			out = append(out, line)
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// On a 3-primary cluster Load reaches every node and Run routes by key.
func TestClusterLoadAndRoute(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3, ReplicasPerPrimary: 1})
	client := cl.Client()
	ctx := context.Background()
	reg := testRegistry(t)
	if err := evalsha.Load(ctx, client, reg); err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, node := range cl.Nodes {
		for _, s := range reg.Scripts() {
			ok, err := node.Client().ScriptExists(ctx, s.SHA1).Result()
			if err != nil || !ok[0] {
				t.Errorf("%s missing on node %s: %v %v", s.ID(), node.Addr, ok, err)
			}
		}
	}
	r := newRunner(t, client)
	incr := script(t, reg, "counter.incr")
	owners := map[string]bool{}
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("counter:%d", i)
		if n, err := r.Run(ctx, incr, []string{key}, i).Int64(); err != nil || n != int64(i) {
			t.Fatalf("Run on %s = %d, %v", key, n, err)
		}
		// The key must live on the primary that owns its slot.
		for _, p := range cl.Primaries {
			if v, err := p.Client().Get(ctx, key).Result(); err == nil && v == fmt.Sprint(i) {
				owners[p.Addr] = true
			} else if err != nil && err != redis.Nil {
				if !isMoved(err) {
					t.Fatalf("GET %s on %s: %v", key, p.Addr, err)
				}
			}
		}
	}
	if len(owners) != 3 {
		t.Errorf("30 keys landed on %d primaries, want all 3", len(owners))
	}
	if s := r.Stats(); s.NoScript != 0 {
		t.Errorf("preloaded cluster still hit NOSCRIPT: %+v", s)
	}
}

func isMoved(err error) bool {
	msg := err.Error()
	return len(msg) >= 5 && msg[:5] == "MOVED"
}

// BenchmarkRunVsRawEvalSha compares Runner.Run with go-redis's EvalSha on the
// same server and connection pool, in one run: sub-benchmarks "raw" and "runner".
func BenchmarkRunVsRawEvalSha(b *testing.B) {
	srv := redistest.Standalone(b)
	c := srv.Client()
	ctx := context.Background()
	reg := testRegistry(b)
	if err := evalsha.Load(ctx, c, reg); err != nil {
		b.Fatal(err)
	}
	incr := script(b, reg, "counter.incr")
	r, _ := evalsha.New(c)
	keys := []string{"bench"}
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := c.EvalSha(ctx, incr.SHA1, keys, 1).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runner", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := r.Run(ctx, incr, keys, 1).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// PUBLISH reaches every node of a cluster, so the shared subscription may
// sit on any of them (plain pub/sub chosen explicitly: cluster clients use
// sharded pub/sub by default).
func TestSubscribeCluster(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3})
	subscribeContract(t, cl.Client(), false, evalsha.WithShardedPubSub(false))
}

// A Sentinel-managed primary: Load and Run go through the failover client
// to whichever server Sentinel names as primary.
func TestSentinelLoadAndRun(t *testing.T) {
	set := redistest.Sentinel(t)
	client := set.Client()
	ctx := context.Background()
	reg := testRegistry(t)
	if err := evalsha.Load(ctx, client, reg); err != nil {
		t.Fatalf("Load through Sentinel: %v", err)
	}
	for _, s := range reg.Scripts() {
		ok, err := set.Primary.Client().ScriptExists(ctx, s.SHA1).Result()
		if err != nil || !ok[0] {
			t.Errorf("%s not on the primary after Load: %v %v", s.ID(), ok, err)
		}
	}
	r := newRunner(t, client)
	if n, err := r.Run(ctx, script(t, reg, "counter.incr"), []string{"n"}, 4).Int64(); err != nil || n != 4 {
		t.Fatalf("Run through Sentinel = %d, %v", n, err)
	}
	if s := r.Stats(); s.NoScript != 0 {
		t.Errorf("preloaded scripts hit NOSCRIPT: %+v", s)
	}
}
