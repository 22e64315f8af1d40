package evalsha_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

func TestRunReplicatedRejectsBadInput(t *testing.T) {
	_, c := miniClient(t)
	r := newRunner(t, c)
	incr := script(t, testRegistry(t), "counter.incr")
	ctx := context.Background()
	for _, tc := range []struct {
		replicas int
		timeout  time.Duration
		want     string
	}{
		{-1, time.Second, "replicas >= 0"},
		{1, 0, "timeout of at least 1ms"},
	} {
		_, _, err := r.RunReplicated(ctx, incr, tc.replicas, tc.timeout, []string{"k"}, 1)
		var se *evalsha.ScriptError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RunReplicated(%d, %v) = %v; want a *ScriptError saying %q", tc.replicas, tc.timeout, err, tc.want)
		}
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	_, _, err := newRunner(t, ring).RunReplicated(ctx, incr, 1, time.Second, []string{"k"}, 1)
	if err == nil || !strings.Contains(err.Error(), "*redis.Client") || !strings.Contains(err.Error(), "*redis.Ring") {
		t.Errorf("RunReplicated on a Ring = %v; want an error naming what is supported", err)
	}
}

// replicatedContract checks acked counts on client, whose keys key live on
// a primary with one replica, which pause/resume stop and continue.
func replicatedContract(t *testing.T, client redis.UniversalClient, key string, pause, resume func()) {
	ctx := context.Background()
	reg := testRegistry(t)
	r := newRunner(t, client)
	incr, fail := script(t, reg, "counter.incr"), script(t, reg, "echo.fail")

	// Cold cache: NOSCRIPT, then EVAL + WAIT in the second pipeline.
	cmd, acked, err := r.RunReplicated(ctx, incr, 1, 5*time.Second, []string{key}, 5)
	if n, _ := cmd.Int64(); err != nil || n != 5 || acked != 1 {
		t.Fatalf("cold RunReplicated = %d, acked %d, %v; want 5, acked 1", n, acked, err)
	}
	cmd, acked, err = r.RunReplicated(ctx, incr, 1, 5*time.Second, []string{key}, 2)
	if n, _ := cmd.Int64(); err != nil || n != 7 || acked != 1 {
		t.Fatalf("cached RunReplicated = %d, acked %d, %v; want 7, acked 1", n, acked, err)
	}
	if s := r.Stats(); s.NoScript != 1 || s.Calls != 2 {
		t.Errorf("stats %+v; want 2 calls, one NOSCRIPT", s)
	}
	_, _, err = r.RunReplicated(ctx, fail, 1, 5*time.Second, []string{key}, "nope")
	var se *evalsha.ScriptError
	if !errors.As(err, &se) || se.Script != "echo.fail@1" {
		t.Errorf("script error through RunReplicated = %v; want *ScriptError", err)
	}

	pause()
	defer resume()
	start := time.Now()
	cmd, acked, err = r.RunReplicated(ctx, incr, 1, 300*time.Millisecond, []string{key}, 1)
	if n, _ := cmd.Int64(); err != nil || n != 8 || acked != 0 {
		t.Fatalf("with the replica paused = %d, acked %d, %v; want 8, acked 0", n, acked, err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("WAIT returned after %v, before its 300ms timeout", waited)
	}
}

func TestRunReplicatedPrimaryReplica(t *testing.T) {
	primary, replica := redistest.PrimaryReplica(t)
	replicatedContract(t, primary.Client(), "n", replica.Pause, replica.Resume)
}

// A WAIT longer than the client's ReadTimeout goes over a pinned connection
// with WAIT's own read deadline, not into a pipeline that would time out.
func TestRunReplicatedLongTimeout(t *testing.T) {
	primary, replica := redistest.PrimaryReplica(t)
	c := primary.Client(func(o *redis.Options) { o.ReadTimeout = 300 * time.Millisecond })
	r := newRunner(t, c)
	incr := script(t, testRegistry(t), "counter.incr")
	replica.Pause()
	defer replica.Resume()
	cmd, acked, err := r.RunReplicated(context.Background(), incr, 1, 700*time.Millisecond, []string{"n"}, 1)
	if n, _ := cmd.Int64(); err != nil || n != 1 || acked != 0 {
		t.Fatalf("WAIT past the ReadTimeout = %d, acked %d, %v; want 1, acked 0", n, acked, err)
	}
}

func TestRunReplicatedSentinel(t *testing.T) {
	set := redistest.Sentinel(t)
	replicatedContract(t, set.Client(), "n", set.Replica.Pause, set.Replica.Resume)
}

// On a cluster the script and WAIT go to the primary owning the key, whose
// replica is the one that acknowledges.
func TestRunReplicatedCluster(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3, ReplicasPerPrimary: 1})
	client := cl.Client()
	// Replica i replicates primary i (see redistest.NewCluster).
	owner := ownerIndex(t, cl, client, "{r}n")
	replicatedContract(t, client, "{r}n", cl.Replicas[owner].Pause, cl.Replicas[owner].Resume)

	_, _, err := newRunner(t, client).RunReplicated(context.Background(), script(t, testRegistry(t), "pub"), 1, time.Second, nil, "ch", "x")
	if err == nil || !strings.Contains(err.Error(), "at least one key") {
		t.Errorf("keyless RunReplicated on a cluster = %v", err)
	}
}

func ownerIndex(t *testing.T, cl *redistest.Cluster, client *redis.ClusterClient, key string) int {
	t.Helper()
	node, err := client.MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range cl.Primaries {
		if p.Addr == node.Options().Addr {
			return i
		}
	}
	t.Fatalf("%s is owned by %s, which is no primary", key, node.Options().Addr)
	return -1
}

// A slot that moved after the cluster client read the slot map (MOVED), or
// that is being migrated (ASK), is followed once to the node named.
func TestRunReplicatedClusterRedirects(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3})
	ctx := context.Background()
	client := cl.Client()
	r := newRunner(t, client)
	incr := script(t, testRegistry(t), "counter.incr")
	ids := make([]string, len(cl.Primaries))
	for i, p := range cl.Primaries {
		id, err := p.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	slotOf := func(key string) int64 {
		slot, err := client.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return slot
	}

	// ASK: the owner migrates the (empty) slot, the other imports it.
	key := "{ask}n"
	src := ownerIndex(t, cl, client, key)
	dst := (src + 1) % len(cl.Primaries)
	slot := slotOf(key)
	if err := cl.Primaries[dst].Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Primaries[src].Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst]).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _, err := r.RunReplicated(ctx, incr, 0, 100*time.Millisecond, []string{key}, 3); err != nil || n.Val() != int64(3) {
		t.Fatalf("RunReplicated on a migrating slot = %v, %v; want 3", n.Val(), err)
	}
	importer := cl.Primaries[dst].Client()
	pipe := importer.Pipeline()
	pipe.Do(ctx, "ASKING")
	get := pipe.Get(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil || get.Val() != "3" {
		t.Fatalf("GET %s on the importing node = %q, %v; want 3", key, get.Val(), err)
	}

	// MOVED: the (empty) slot of another key changes owner behind the
	// client's back.
	key = "{moved}n"
	src = ownerIndex(t, cl, client, key)
	dst = (src + 1) % len(cl.Primaries)
	slot = slotOf(key)
	for _, i := range []int{dst, src, 3 - src - dst} {
		if err := cl.Primaries[i].Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst]).Err(); err != nil {
			t.Fatalf("SETSLOT on %s: %v", cl.Primaries[i].Addr, err)
		}
	}
	if n, _, err := r.RunReplicated(ctx, incr, 0, 100*time.Millisecond, []string{key}, 4); err != nil || n.Val() != int64(4) {
		t.Fatalf("RunReplicated on a moved slot = %v, %v; want 4", n.Val(), err)
	}
	if v, err := cl.Primaries[dst].Do(ctx, "GET", key).Text(); err != nil || v != "4" {
		t.Fatalf("GET %s on its new owner = %q, %v", key, v, err)
	}
}
