package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
)

func TestStandalone(t *testing.T) {
	s := redistest.Standalone(t)
	c := s.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET = %q, %v", v, err)
	}
	if s.Port == 6379 {
		t.Error("a test server took the default port")
	}
}

func TestPrimaryReplica(t *testing.T) {
	p, r := redistest.PrimaryReplica(t)
	ctx := context.Background()
	if err := p.Client().Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Client().Do(ctx, "WAIT", 1, 5000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT = %d, %v", n, err)
	}
	if v, err := r.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("replica GET = %q, %v", v, err)
	}
	if err := r.Client().Set(ctx, "k", "x", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("write on replica = %v, want READONLY", err)
	}
}

func TestCluster(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3, ReplicasPerPrimary: 1})
	if len(cl.Primaries) != 3 || len(cl.Replicas) != 3 {
		t.Fatalf("%d primaries, %d replicas", len(cl.Primaries), len(cl.Replicas))
	}
	c := cl.Client()
	ctx := context.Background()
	owners := map[string]bool{}
	for i := 0; i < 50; i++ {
		key := fmt.Sprintf("key:%d", i)
		if err := c.Set(ctx, key, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		for _, p := range cl.Primaries {
			if n, _ := p.Client().Exists(ctx, key).Result(); n == 1 {
				owners[p.Addr] = true
			}
		}
	}
	if len(owners) != 3 {
		t.Errorf("keys landed on %d primaries, want 3", len(owners))
	}
	info, err := cl.Primaries[0].Client().ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6") {
		t.Errorf("CLUSTER INFO = %q, %v", info, err)
	}
}

func TestPauseResume(t *testing.T) {
	s := redistest.Standalone(t)
	c := s.Client(func(o *redis.Options) { o.ReadTimeout = 100 * time.Millisecond; o.MaxRetries = -1 })
	ctx := context.Background()
	s.Pause()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("a paused server answered")
	}
	s.Resume()
	deadline := time.Now().Add(5 * time.Second)
	for c.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the resumed server does not answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKillFreesThePort(t *testing.T) {
	s := redistest.Standalone(t)
	s.Kill()
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		t.Fatalf("port still taken after Kill: %v", err)
	}
	l.Close()
}

func TestRestart(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	s.Client().Set(ctx, "k", "v", 0)
	s.Restart(t)
	if err := s.Client().Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after restart GET = %v, want redis.Nil (nothing persisted)", err)
	}
}

// No orphans: the process is gone once the test that started it ends.
func TestCleanupKillsTheProcess(t *testing.T) {
	var pidAddr string
	var pid int
	t.Run("inner", func(t *testing.T) {
		s := redistest.Standalone(t)
		pidAddr = s.Addr
		info, err := s.Client().Info(context.Background(), "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "process_id:"); ok {
				fmt.Sscan(v, &pid)
			}
		}
		s.Pause() // a paused server must be killed too
	})
	if pid == 0 {
		t.Fatal("no pid")
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %d (%s) still runs after its test ended", pid, pidAddr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMissingBinary(t *testing.T) {
	if _, ok := redistest.Available(redistest.WithBinary("/nonexistent/redis-server")); ok {
		t.Fatal("a missing binary was reported available")
	}
	if os.Getenv("REDLUA_REQUIRE_SERVER") == "1" {
		return // the skip path is what this test checks; under CI RequireServer would fail instead
	}
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }()
		redistest.RequireServer(ft, redistest.WithBinary("/nonexistent/redis-server"))
	}()
	if !ft.skipped || !strings.Contains(ft.msg, "apt-get install -y redis-server") || !strings.Contains(ft.msg, "REDLUA_REQUIRE_SERVER=1") {
		t.Fatalf("skipped=%v msg=%q", ft.skipped, ft.msg)
	}
}

type fakeT struct {
	testing.TB
	skipped bool
	msg     string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Skip(args ...any) {
	f.skipped = true
	f.msg = fmt.Sprint(args...)
	panic("skip")
}

func TestSentinel(t *testing.T) {
	set := redistest.Sentinel(t)
	c := set.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := set.Primary.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("the failover client did not write to the primary: %q, %v", v, err)
	}
}

// The replica behind the link misses what the primary wrote while the link
// was held; after Failover it is the primary without those writes, and
// Rejoin brings the dead server back as its replica.
func TestLaggingPairLosesHeldWrites(t *testing.T) {
	p := redistest.NewLaggingPair(t)
	ctx := context.Background()
	start := time.Now()
	for trial := 0; trial < 3; trial++ {
		key := fmt.Sprintf("k%d", trial)
		p.Link.SetDelay(200 * time.Millisecond)
		if err := p.Primary.Do(ctx, "SET", key, "v").Err(); err != nil {
			t.Fatal(err)
		}
		p.Failover(t)
		if n, err := p.Primary.Do(ctx, "EXISTS", key).Int(); err != nil || n != 0 {
			t.Fatalf("trial %d: promoted replica EXISTS %s = %d, %v; want 0 (the write was held)", trial, key, n, err)
		}
		if role, _ := p.Primary.Do(ctx, "ROLE").Slice(); len(role) == 0 || role[0] != "master" {
			t.Fatalf("trial %d: promoted server's role %v", trial, role)
		}
		p.Link.SetDelay(0)
		p.Rejoin(t)
	}
	t.Logf("3 failovers with rejoin in %v", time.Since(start).Round(time.Millisecond))
}
