package evalsha_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// luaRegistry is the small lock scripts of internal/testscripts.
func luaRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func newFunctionRunner(t *testing.T, c redis.UniversalClient, reg *registry.Registry) *evalsha.FunctionRunner {
	t.Helper()
	f, err := evalsha.NewFunctionRunner(c, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// call runs a registry script through f and fails the test on an error.
func call(t *testing.T, f *evalsha.FunctionRunner, reg *registry.Registry, name string, keys []string, args ...any) any {
	t.Helper()
	s, err := reg.Lookup(name + "@1") // the version-1 contract these tests check
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Run(context.Background(), s, keys, args...).Result()
	if err != nil && err != redis.Nil {
		t.Fatalf("%s: %v", s.ID(), err)
	}
	return v
}

// TestFunctionRunnerMutexRealServer: the mutex scripts' happy path runs
// through FCALL/FCALL_RO; the library is loaded once, on first use, and
// the release's wake-up arrives through Subscribe.
func TestFunctionRunnerMutexRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	reg := luaRegistry(t)
	f := newFunctionRunner(t, srv.Client(), reg)
	lock := []string{"{orders}", "{orders}:fence"}
	check := func(what string, got, want any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("acquire", call(t, f, reg, "mutex.acquire", lock, "alice", 60000, "0", "host-a"), []any{int64(1), int64(1), int64(1)})
	check("acquire by another", call(t, f, reg, "mutex.acquire", lock, "bob", 60000, "0", "").([]any)[0], int64(0))
	info := call(t, f, reg, "mutex.inspect", []string{"{orders}", "{orders}:queue"}).([]any)
	check("inspect owner", info[0], "alice")
	check("extend", call(t, f, reg, "mutex.extend", lock[:1], "alice", 60000), int64(1))

	woken := make(chan string, 1)
	unsub, err := f.Subscribe(context.Background(), "{orders}:released", func(p string) { woken <- p })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	check("release", call(t, f, reg, "mutex.release", lock[:1], "alice", "{orders}:released"), int64(1))
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up message within 10s of the release")
	}
	st := f.Stats()
	if st.Reloads != 1 || st.Failures != 0 || st.ReadOnly == 0 {
		t.Errorf("stats %+v: want one load (the first call), no failures, the inspect sent as FCALL_RO", st)
	}
	libs, err := srv.Client().FunctionList(context.Background(), redis.FunctionListQuery{}).Result()
	if err != nil || len(libs) != 1 || libs[0].Name != f.Library().Name || len(libs[0].Functions) != len(reg.Scripts()) {
		t.Errorf("FUNCTION LIST = %+v, %v; want %s with one function per script", libs, err, f.Library().Name)
	}
}

// TestFunctionRunnerAfterFailoverRealServer: functions replicate, so a
// replica promoted with REPLICAOF NO ONE runs the scripts at once: no
// reload. The same runner against a server that never had the library
// must load it (Reloads 1), which shows the counter sees a reload.
func TestFunctionRunnerAfterFailoverRealServer(t *testing.T) {
	ctx := context.Background()
	primary, replica := redistest.PrimaryReplica(t)
	reg := luaRegistry(t)
	lock := []string{"{jobs}", "{jobs}:fence"}

	// WAIT counts the replicas that acknowledged the writes of its own
	// connection: a pool of one connection carries the library load, the
	// acquire and the WAIT, so the WAIT covers both writes.
	one := primary.Client(func(o *redis.Options) { o.PoolSize = 1 })
	before := newFunctionRunner(t, one, reg)
	if got := call(t, before, reg, "mutex.acquire", lock, "alice", 60000, "0", ""); !cmp.Equal(got, []any{int64(1), int64(1), int64(1)}) {
		t.Fatalf("acquire on the primary = %v", got)
	}
	if n, err := one.Do(ctx, "WAIT", 1, 10000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 after the acquire = %d, %v; want 1 (the replica acknowledged it)", n, err)
	}
	if err := replica.Client().Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	after := newFunctionRunner(t, replica.Client(), reg)
	got := call(t, after, reg, "mutex.acquire", lock, "bob", 60000, "0", "").([]any)
	if got[0] != int64(0) {
		t.Fatalf("acquire by bob on the promoted replica = %v; alice's lock should have replicated", got)
	}
	if got := call(t, after, reg, "mutex.release", lock[:1], "alice", "{jobs}:released"); got != int64(1) {
		t.Fatalf("release by alice on the promoted replica = %v", got)
	}
	if st := after.Stats(); st.Reloads != 0 {
		t.Errorf("the promoted replica needed %d library loads; functions replicate, it should need none", st.Reloads)
	}

	fresh := newFunctionRunner(t, redistest.Standalone(t).Client(), reg)
	call(t, fresh, reg, "mutex.acquire", lock, "carol", 60000, "0", "")
	if st := fresh.Stats(); st.Reloads != 1 {
		t.Errorf("a server without the library: %d loads, want 1", st.Reloads)
	}
}

// TestFunctionRunnerClusterRealServer: on a cluster the library is loaded
// on every primary, so locks in every slot work.
func TestFunctionRunnerClusterRealServer(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{})
	reg := luaRegistry(t)
	f := newFunctionRunner(t, cl.Client(), reg)
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("{lock%d}", i)
		got := call(t, f, reg, "mutex.acquire", []string{name, name + ":fence"}, "alice", 60000, "0", "")
		if !cmp.Equal(got, []any{int64(1), int64(1), int64(1)}) {
			t.Fatalf("acquire %s = %v", name, got)
		}
	}
	if st := f.Stats(); st.Reloads != 1 {
		t.Errorf("%d library loads; one FUNCTION LOAD round over every primary should do", st.Reloads)
	}
}

func TestFunctionRunnerBadInput(t *testing.T) {
	srv := redistest.Standalone(t)
	if _, err := evalsha.NewFunctionRunner(srv.Client(), nil); err == nil {
		t.Error("NewFunctionRunner without a registry succeeded")
	}
	if _, err := evalsha.NewFunctionRunner(nil, luaRegistry(t)); err == nil {
		t.Error("NewFunctionRunner without a client succeeded")
	}
	f := newFunctionRunner(t, srv.Client(), luaRegistry(t))
	ctx := context.Background()
	if err := f.Run(ctx, nil, nil).Err(); err == nil {
		t.Error("Run(nil script) succeeded")
	}
	other, err := registry.ParseScript("x.lua", []byte("-- name: other\n-- version: 1\n-- description: x\n-- keys: k\n-- args:\nreturn 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Run(ctx, other, []string{"k"}).Err(); err == nil {
		t.Error("Run of a script outside the registry succeeded")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s, _ := luaRegistry(t).Lookup("mutex.inspect@1")
	if err := f.Run(cctx, s, []string{"{a}", "{a}:queue"}).Err(); err == nil {
		t.Error("Run with a canceled context succeeded")
	}
}

// TestFunctionRunnerRunManyRealServer: a pipeline of calls on a server
// without the library loads it once and re-sends the calls; each reply
// stays in its place.
func TestFunctionRunnerRunManyRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	reg := luaRegistry(t)
	f := newFunctionRunner(t, srv.Client(), reg)
	acquire, _ := reg.Lookup("mutex.acquire@1")
	inspect, _ := reg.Lookup("mutex.inspect@1")
	var calls []evalsha.Call
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("{m%d}", i)
		calls = append(calls, evalsha.Call{Script: acquire, Keys: []string{name, name + ":fence"}, Args: []any{"alice", 60000, "0", ""}})
	}
	calls = append(calls, evalsha.Call{Script: inspect, Keys: []string{"{m0}", "{m0}:queue"}}, evalsha.Call{Script: acquire, Keys: []string{"too few"}})
	cmds, err := f.RunMany(context.Background(), calls)
	if err == nil {
		t.Error("RunMany with a bad call reported no error")
	}
	for i := 0; i < 5; i++ {
		if v, err := cmds[i].Result(); err != nil || !cmp.Equal(v, []any{int64(1), int64(1), int64(1)}) {
			t.Errorf("call %d = %v, %v", i, v, err)
		}
	}
	if v, err := cmds[5].Slice(); err != nil || v[0] != "alice" {
		t.Errorf("inspect = %v, %v; want alice as the owner (it ran after the acquires were re-sent? it must see them)", v, err)
	}
	if cmds[6].Err() == nil {
		t.Error("the call with too few keys succeeded")
	}
	if st := f.Stats(); st.Reloads != 1 {
		t.Errorf("%d loads, want 1", st.Reloads)
	}
}
