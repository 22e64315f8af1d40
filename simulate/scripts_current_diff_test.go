package simulate

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/registry"
)

// TestCurrentScriptsMatchRedis runs the script versions the locks package
// pins now through a mutex's queue and a semaphore's life, on a real server
// and on the simulator, and compares every reply and the queue keys' TTLs.
// Replies carry the server's time (fencing tokens, the time of a queued
// attempt), which differs between the two: numbers that are epoch times
// compare as "time", TTLs to the second.
func TestCurrentScriptsMatchRedis(t *testing.T) {
	get := ownScripts(t)
	acquire, release, keep := get("mutex.acquire@6"), get("mutex.release@5"), get("mutex.keepqueued@2")
	inspect, semAcquire, force := get("lock.inspect@2"), get("sem.acquire@6"), get("lock.forceunlock@2")
	semRelease := get("sem.release@5")
	rlock, wlock := get("rw.rlock@3"), get("rw.lock@4")

	client := redistest.Standalone(t).Client()
	sim := New()
	ctx := context.Background()
	m := []string{"{m}", "{m}:queue", "{m}:waiters", "{m}:readers", "{m}:permits", "{m}:gone"}
	mRelease := []string{"{m}", "{m}:queue", "{m}:waiters", "{m}:gone"}
	s := []string{"{s}:permits", "{s}:limit", "{s}:fence", "{s}", "{s}:readers", "{s}:gone", "{s}:squeue", "{s}:swaiters", "{s}:soffers"}
	sRelease := []string{"{s}:permits", "{s}:gone", "{s}:limit", "{s}:squeue", "{s}:swaiters", "{s}:fence", "{s}:soffers"}
	inspectKeys := func(n string) []string {
		return []string{n, n + ":queue", n + ":squeue", n + ":wwait"}
	}
	w := []string{"{w}", "{w}:readers", "{w}:rholds", "{w}:wwait", "{w}:fence", "{w}:permits", "{w}:gone", "{w}:wclients"}
	type step struct {
		script *registry.Script // nil: a command, args
		keys   []string
		args   []any
	}
	steps := []step{
		{inspect, inspectKeys("{m}"), nil},
		{acquire, m, []any{"a", 30000, "0", `{"pid":1}`, 20000, "0", "ca", "a-1"}},
		{acquire, m, []any{"b", 30000, "0", `{"pid":2}`, 20000, "0", "cb", "b-1"}},
		{acquire, m, []any{"c", 30000, "0", "", 0, "0", "cc", "c-1"}}, // TryLock: not queued
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{nil, nil, []any{"PTTL", "{m}:waiters"}},
		{nil, nil, []any{"PEXPIRE", "{m}:queue", 5000}},
		{keep, []string{"{m}", "{m}:queue", "{m}:waiters"}, []any{"b", "nobody"}},
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{inspect, inspectKeys("{m}"), nil},
		{release, mRelease, []any{"a", "{m}:released", "{m}:grant:", "PUBLISH", "", 60000, "a-1"}},
		{acquire, m, []any{"b", 30000, "0", `{"pid":2}`, 20000, "0", "cb", "b-1"}}, // claims the grant
		{inspect, inspectKeys("{m}"), nil},
		{nil, nil, []any{"EXISTS", "{m}:queue", "{m}:waiters"}},
		{release, mRelease, []any{"b", "{m}:released", "{m}:grant:", "PUBLISH", "", 60000, "b-1"}},
		{acquire, m, []any{"a", 30000, "0", "", 0, "0", "ca", "a-2"}}, // the fast path
		{release, mRelease, []any{"a", "{m}:released", "{m}:grant:", "PUBLISH", "", 60000, "a-2"}},
		{release, mRelease, []any{"z", "{m}:released", "{m}:grant:", "PUBLISH", "z-1", 60000, ""}}, // z gives up
		{acquire, m, []any{"z", 30000, "0", "", 20000, "0", "cz", "z-1"}},                          // late: takes nothing
		{acquire, m, []any{"z", 30000, "0", "", 20000, "0", "cz", "z-2"}},                          // gone exists: the long path
		{acquire, m, []any{"z", 30000, "1", "", 20000, "0", "cz", "z-3"}},                          // re-entered

		{rlock, w[:7], []any{"r1", 60000, "1", "r1-1"}},
		{rlock, w[:7], []any{"r2", 60000, "1", "r2-1"}},
		{wlock, w, []any{"w1", 60000, 20000, "", "w1-1", "cw"}},
		{inspect, inspectKeys("{w}"), nil},
		{force, []string{"{w}"}, []any{10000, "PUBLISH", "{w}:released", "{w}:grant:"}},
		{force, []string{"{w}"}, []any{0, "PUBLISH", "{w}:released", "{w}:grant:"}},
		{nil, nil, []any{"EXISTS", "{w}:readers", "{w}:rholds"}},
		{wlock, w, []any{"w1", 60000, 20000, "", "w1-1", "cw"}},
		{force, []string{"{w}"}, []any{0, "PUB", "{w}:released", "{w}:grant:"}},
		{force, []string{"{w}"}, []any{-1, "PUBLISH", "{w}:released", "{w}:grant:"}},

		{semAcquire, s, []any{"alice", 1, 60000, 2, "alice", 20000, "c1", "{s}:grant:", "PUBLISH"}},
		{semAcquire, s, []any{"bob", 2, 60000, 2, "bob", 20000, "c2", "{s}:grant:", "PUBLISH"}},
		{inspect, inspectKeys("{s}"), nil},
		{force, []string{"{s}"}, []any{0, "PUBLISH", "{s}:released", "{s}:grant:"}},
		{semAcquire, s, []any{"bob", 2, 60000, 2, "bob", 20000, "c2", "{s}:grant:", "PUBLISH"}},
		{inspect, inspectKeys("{s}"), nil},
		// carol queues behind bob; bob's release hands her the permit.
		{semAcquire, s, []any{"carol", 1, 60000, 2, "carol", 20000, "c3", "{s}:grant:", "PUBLISH"}},
		{nil, nil, []any{"HGET", "{s}:soffers", "carol"}},
		{nil, nil, []any{"PTTL", "{s}:soffers"}},
		{semRelease, sRelease, []any{"bob", 2, "{s}:released", "PUBLISH", "", 60000, "{s}:grant:"}},
		{nil, nil, []any{"EXISTS", "{s}:squeue", "{s}:swaiters", "{s}:soffers"}},
		{nil, nil, []any{"ZCARD", "{s}:permits"}},
		{semAcquire, s, []any{"carol", 1, 60000, 2, "carol", 20000, "c3", "{s}:grant:", "PUBLISH"}}, // claims it
		{semRelease, sRelease, []any{"carol", 1, "{s}:released", "PUBLISH", "", 60000, "{s}:grant:"}},
		{semRelease, sRelease, []any{"dave", 1, "{s}:released", "PUBLISH", "dave", 60000, "{s}:grant:"}}, // dave gives up
		{semAcquire, s, []any{"dave", 1, 60000, 2, "dave", 20000, "c4", "{s}:grant:", "PUBLISH"}},        // late: takes nothing
		{semRelease, sRelease, []any{"x", 0, "{s}:released", "PUBLISH", "", 60000, "{s}:grant:"}},        // an error
		{force, []string{"{s}"}, []any{0, "PUB", "{s}:released", "{s}:grant:"}},
	}
	for i, st := range steps {
		var want, got outcome
		if st.script == nil {
			want = outcomeOf(client.Do(ctx, st.args...))
			got = outcomeOf(sim.Do(ctx, st.args...))
		} else {
			want = redisOutcome(ctx, client, st.script, st.keys, st.args...)
			got = outcomeOf(sim.Run(ctx, st.script, st.keys, st.args...))
			// Run names the script in its errors, as evalsha.Runner does;
			// EVALSHA's own reply does not.
			got.Err = strings.TrimPrefix(got.Err, st.script.ID()+": ")
		}
		want, got = timesAndTTLs(want), timesAndTTLs(got)
		name := "command"
		if st.script != nil {
			name = st.script.ID()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("step %d (%s %v): simulator differs (-redis +simulator):\n%s", i, name, st.args, diff)
		}
	}
}

// timesAndTTLs replaces epoch times (ms or µs since 1970) by "time" and
// rounds other large integers (TTLs in milliseconds) to whole seconds.
// Times inside strings (a hash's fields, as lock.inspect returns them) are
// replaced too.
func timesAndTTLs(o outcome) outcome {
	o.Val = mapInts(mapStrings(o.Val), func(x int64) any {
		if x > 1_000_000_000_000 {
			return "time"
		}
		return roundTTL(x)
	})
	return o
}

var epochDigits = regexp.MustCompile(`[0-9]{13,}`)

func mapStrings(v any) any {
	switch x := v.(type) {
	case string:
		return epochDigits.ReplaceAllString(x, "time")
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = mapStrings(x[i])
		}
		return out
	}
	return v
}
