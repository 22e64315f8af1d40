package simulate

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// TestOwnScriptsMatchRedis runs the project's scripts (lua/) through one
// lock's life on a real server and on the simulator, and compares every reply.
func TestOwnScriptsMatchRedis(t *testing.T) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	get := func(id string) *registry.Script {
		s, err := reg.Lookup(id)
		if err != nil {
			t.Fatalf("lookup %s: %v", id, err)
		}
		return s
	}
	acquire, release := get("mutex.acquire@1"), get("mutex.release@1")
	extend, inspect := get("mutex.extend@1"), get("mutex.inspect@1")

	client := redistest.Standalone(t).Client()
	sim := New()
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
		want := roundTTLs(outcomeOf(client.EvalSha(ctx, st.script.SHA1, st.keys, st.args...)))
		if strings.HasPrefix(want.Err, "NOSCRIPT") {
			want = roundTTLs(outcomeOf(client.Eval(ctx, st.script.Source, st.keys, st.args...)))
		}
		got := roundTTLs(outcomeOf(sim.Run(ctx, st.script, st.keys, st.args...)))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("step %d (%s %v): simulator differs (-redis +simulator):\n%s", i, st.script.ID(), st.args, diff)
		}
	}
}

// roundTTLs rounds large integers (PTTLs in milliseconds, which differ by
// the time the real server's steps took) to whole seconds.
func roundTTLs(o outcome) outcome {
	var round func(v any) any
	round = func(v any) any {
		switch x := v.(type) {
		case int64:
			if x > 1000 {
				return (x + 500) / 1000 * 1000
			}
		case []any:
			out := make([]any, len(x))
			for i := range x {
				out[i] = round(x[i])
			}
			return out
		}
		return v
	}
	o.Val = round(o.Val)
	return o
}

// TestOwnScriptsLoad checks that every script in lua/ compiles in the
// simulator's Lua 5.1 sandbox under the SHA1 the real server gives it.
func TestOwnScriptsLoad(t *testing.T) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	client := redistest.Standalone(t).Client()
	sim := New()
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
