package simulate

import (
	"context"
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
	acquire, release, keep := get("mutex.acquire@10"), get("mutex.release@9"), get("mutex.keepqueued@5")
	undo, extend := get("mutex.undo@3"), get("mutex.extend@4")
	inspect, semAcquire, semForce := get("mutex.inspect@2"), get("sem.acquire@6"), get("sem.forceunlock@1")
	semRelease := get("sem.release@5")
	rlock, wlock, rwForce := get("rw.rlock@3"), get("rw.lock@4"), get("rw.forceunlock@1")

	client := redistest.Standalone(t).Client()
	sim := New()
	ctx := context.Background()
	m := []string{"{m}", "{m}:queue"}
	// mutex.acquire's ARGV: ttl, the attempt's record field, the hold's end
	// (client, attempt, owner, meta); the attempt id ends with the call's
	// waiter TTL and flags.
	acq := func(owner, attempt, client, meta string) []any {
		return []any{30000, "g:" + attempt, client + "\t" + attempt + "\t" + owner + "\t" + meta}
	}
	rel := func(owner, attempt string) []any { return []any{"\t" + attempt + "\t" + owner + "\t"} }
	s := []string{"{s}:permits", "{s}:limit", "{s}:fence", "{s}", "{s}:readers", "{s}:gone", "{s}:squeue", "{s}:swaiters", "{s}:soffers"}
	sRelease := []string{"{s}:permits", "{s}:gone", "{s}:limit", "{s}:squeue", "{s}:swaiters", "{s}:fence", "{s}:soffers"}
	inspectKeys := func(n string) []string {
		return []string{n, n + ":queue", n + ":readers", n + ":rholds", n + ":permits", n + ":limit", n + ":squeue", n + ":swaiters"}
	}
	w := []string{"{w}", "{w}:readers", "{w}:rholds", "{w}:wwait", "{w}:fence", "{w}:permits", "{w}:gone", "{w}:wclients"}
	wForce := []string{"{w}:readers", "{w}:rholds", "{w}:wwait", "{w}:wclients"}
	type step struct {
		script *registry.Script // nil: a command, args
		keys   []string
		args   []any
	}
	steps := []step{
		{inspect, inspectKeys("{m}"), nil},
		{acquire, m, acq("a", "a-1/20000/-", "ca", `{"pid":1}`)},
		{acquire, m, acq("b", "b-1/20000/-", "cb", `{"pid":2}`)},
		{acquire, m, acq("c", "c-1/0/-", "cc", "")}, // TryLock: not queued
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{nil, nil, []any{"PTTL", "{m}"}},
		{nil, nil, []any{"PEXPIRE", "{m}:queue", 5000}},
		{keep, m, []any{"b", "nobody"}},
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{inspect, inspectKeys("{m}"), nil},
		{extend, []string{"{m}"}, []any{"a", 40000, "a-1/20000/-"}},
		{release, m, rel("a", "a-1/20000/-")},
		{acquire, m, acq("b", "b-1/20000/-", "cb", `{"pid":2}`)}, // claims the grant
		{nil, nil, []any{"HKEYS", "{m}"}},
		{nil, nil, []any{"EXISTS", "{m}:queue"}},
		{release, m, rel("b", "b-1/20000/-")},
		{acquire, m, acq("a", "a-2/0/-", "ca", "")}, // the fast path
		{release, m, rel("a", "a-2/0/-")},
		{undo, m, []any{"z", "z-1/20000/-", 60000, "PUBLISH"}}, // z gives up
		{acquire, m, acq("z", "z-1/20000/-", "cz", "")},        // late: takes nothing
		{acquire, m, acq("z", "z-2/20000/-", "cz", "")},        // its record exists: the long path
		{acquire, m, acq("z", "z-3/20000/r", "cz", "")},        // re-entered
		{nil, nil, []any{"PTTL", "{m}"}},

		{rlock, w[:7], []any{"r1", 60000, "1", "r1-1"}},
		{rlock, w[:7], []any{"r2", 60000, "1", "r2-1"}},
		{wlock, w, []any{"w1", 60000, 20000, "", "w1-1", "cw"}},
		{inspect, inspectKeys("{w}"), nil},
		{rwForce, wForce, []any{"{w}:released", "PUBLISH", "{w}:grant:"}},
		{rwForce, wForce, []any{"{w}:released", "PUBLISH", "{w}:grant:"}},
		{nil, nil, []any{"EXISTS", "{w}:readers", "{w}:rholds"}},
		{wlock, w, []any{"w1", 60000, 20000, "", "w1-1", "cw"}},
		{rwForce, wForce, []any{"{w}:released", "PUB", "{w}:grant:"}},

		{semAcquire, s, []any{"alice", 1, 60000, 2, "alice", 20000, "c1", "{s}:grant:", "PUBLISH"}},
		{semAcquire, s, []any{"bob", 2, 60000, 2, "bob", 20000, "c2", "{s}:grant:", "PUBLISH"}},
		{inspect, inspectKeys("{s}"), nil},
		{semForce, []string{"{s}:permits", "{s}:limit", "{s}:squeue", "{s}:swaiters"}, []any{"{s}:released", "PUBLISH", "{s}:grant:"}},
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
		{semForce, []string{"{s}:permits", "{s}:limit", "{s}:squeue", "{s}:swaiters"}, []any{"{s}:released", "PUB", "{s}:grant:"}},
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
func timesAndTTLs(o outcome) outcome {
	o.Val = mapInts(o.Val, func(x int64) any {
		if x > 1_000_000_000_000 {
			return "time"
		}
		return roundTTL(x)
	})
	return o
}
