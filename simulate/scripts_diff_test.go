package simulate

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// TestFixtureScriptsMatchRedis runs the small lock scripts of
// internal/testscripts through one lock's life on a real server and on the
// simulator, and compares every reply (scripts_current_diff_test.go does the
// same for the scripts the locks run).
func TestFixtureScriptsMatchRedis(t *testing.T) {
	get := scriptsOf(t, testscripts.FS)
	acquire, release := get("mutex.acquire@1"), get("mutex.release@1")
	extend, inspect := get("mutex.extend@1"), get("mutex.inspect@1")

	client := diffStandalone(t).Client()
	sim := diffNew(t)
	ctx := context.Background()
	lock, fence, queue := "{m}:lock", "{m}:fence", "{m}:queue"
	steps := []struct {
		script *registry.Script
		keys   []string
		args   []any
	}{
		{inspect, []string{lock, queue}, nil},
		{acquire, []string{lock, fence}, []any{"a", 30000, "1", "meta-a"}},
		{acquire, []string{lock, fence}, []any{"b", 30000, "1", "meta-b"}},
		{acquire, []string{lock, fence}, []any{"a", 30000, "1", "meta-a"}},
		{inspect, []string{lock, queue}, nil},
		{extend, []string{lock}, []any{"b", 60000}},
		{extend, []string{lock}, []any{"a", 60000}},
		{release, []string{lock}, []any{"b", "{m}:released"}},
		{release, []string{lock}, []any{"a", "{m}:released"}},
		{release, []string{lock}, []any{"a", "{m}:released"}},
		{release, []string{lock}, []any{"a", "{m}:released"}},
		{inspect, []string{lock, queue}, nil},
		{acquire, []string{lock, fence}, []any{"b", 30000, "0", ""}},
		{inspect, []string{lock, queue}, nil},
	}
	for i, st := range steps {
		want := roundTTLs(redisOutcome(ctx, client, st.script, st.keys, st.args...))
		got := roundTTLs(outcomeOf(sim.Run(ctx, st.script, st.keys, st.args...)))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("step %d (%s %v): simulator differs (-redis +simulator):\n%s", i, st.script.ID(), st.args, diff)
		}
	}
}

// roundTTLs rounds large integers (PTTLs in milliseconds, which differ by
// the time the real server's steps took) to whole seconds.
func roundTTLs(o outcome) outcome {
	o.Val = mapInts(o.Val, roundTTL)
	return o
}

// roundTTL rounds x to whole seconds when it is above one.
func roundTTL(x int64) any {
	if x > 1000 {
		return (x + 500) / 1000 * 1000
	}
	return x
}

// mapInts replaces every integer in a reply, nested arrays included, by
// f's result.
func mapInts(v any, f func(int64) any) any {
	switch x := v.(type) {
	case int64:
		return f(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = mapInts(x[i], f)
		}
		return out
	}
	return v
}

// TestOwnScriptsLoad checks that every script in lua/ compiles in the
// simulator's Lua 5.1 sandbox under the SHA1 the real server gives it.
func TestOwnScriptsLoad(t *testing.T) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	client := diffStandalone(t).Client()
	sim := diffNew(t)
	ctx := context.Background()
	for _, s := range reg.Scripts() {
		want, err := client.ScriptLoad(ctx, s.Source).Result()
		if err != nil {
			t.Fatalf("%s: redis-server: %v", s.ID(), err)
		}
		got, err := sim.Do(ctx, "SCRIPT", "LOAD", s.Source).Text()
		if err != nil || got != want {
			t.Errorf("%s: simulator SCRIPT LOAD = %q, %v; redis-server %q", s.ID(), got, err, want)
		}
	}
}

// ownScripts returns a lookup of the project's scripts (lua/) by ID that
// fails the test on an unknown one.
func ownScripts(t *testing.T) func(id string) *registry.Script {
	t.Helper()
	return scriptsOf(t, lua.FS)
}

// scriptsOf returns a lookup of the scripts of fsys by ID that fails the
// test on an unknown one.
func scriptsOf(t *testing.T, fsys fs.FS) func(id string) *registry.Script {
	t.Helper()
	reg, err := registry.New(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return func(id string) *registry.Script {
		t.Helper()
		s, err := reg.Lookup(id)
		if err != nil {
			t.Fatalf("lookup %s: %v", id, err)
		}
		return s
	}
}

// redisOutcome runs script on a real server: EVALSHA, then EVAL when the
// server does not have it yet.
func redisOutcome(ctx context.Context, client *redis.Client, script *registry.Script, keys []string, args ...any) outcome {
	o := outcomeOf(client.EvalSha(ctx, script.SHA1, keys, args...))
	if strings.HasPrefix(o.Err, "NOSCRIPT") {
		o = outcomeOf(client.Eval(ctx, script.Source, keys, args...))
	}
	return o
}
