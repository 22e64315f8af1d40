package simulate

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	acquire, release, keep := get("mutex.acquire@14"), get("mutex.release@11"), get("mutex.keepqueued@6")
	undo, extend := get("mutex.undo@6"), get("mutex.extend@6")
	inspect, semAcquire, force := get("lock.inspect@3"), get("sem.acquire@11"), get("lock.forceunlock@4")
	semRelease, semUndo, semExtend := get("sem.release@11"), get("sem.undo@5"), get("sem.extend@4")
	semLimit, semKeep, semTake := get("sem.setlimit@8"), get("sem.keepqueued@6"), get("sem.take@5")
	rlock, wlock := get("rw.rlock@7"), get("rw.lock@7")
	runlock, wunlock, rextend, leave := get("rw.runlock@8"), get("rw.unlock@4"), get("rw.rextend@4"), get("rw.leave@6")

	client := diffStandalone(t).Client()
	sim := diffNew(t)
	ctx := context.Background()
	m := []string{"{m}", "{m}:queue"}
	mg := []string{"{m}", "{m}:queue", "{m}:gone"} // mutex.undo's keys
	// mutex.acquire's ARGV: ttl, the attempt's record field, the hold's end
	// (client, attempt, owner, meta); the attempt id ends with the call's
	// waiter TTL and flags.
	acq := func(owner, attempt, client, meta string) []any {
		return []any{30000, "g:" + attempt, client + "\t" + attempt + "\t" + owner + "\t" + meta}
	}
	rel := func(owner, attempt string) []any { return []any{"\t" + attempt + "\t" + owner + "\t"} }
	s := []string{"{s}", "{s}:squeue", "{s}:sem"}
	si := []string{"{s}", "{s}:sem"} // sem.take and sem.extend: the hash and the index
	holder := func(client, owner string) string { return client + "\t" + owner + "\t{\"pid\":1}" }
	const wait = "20000 PUBLISH"
	inspectKeys := func(n string) []string {
		return []string{n, n + ":queue", n + ":squeue"}
	}
	w := []string{"{w}"}
	wi := []string{"{w}", "{w}:rw"} // the RWMutex scripts: its hash and index
	type step struct {
		script *registry.Script // nil: a command, args
		keys   []string
		args   []any
	}
	steps := []step{
		{inspect, inspectKeys("{m}"), []any{"0", 100}},
		{acquire, m, acq("a", "a-1/20000/-", "ca", `{"pid":1}`)},
		{acquire, m, acq("b", "b-1/20000/-", "cb", `{"pid":2}`)},
		{acquire, m, acq("c", "c-1/0/-", "cc", "")}, // TryLock: not queued
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{nil, nil, []any{"PTTL", "{m}"}},
		{nil, nil, []any{"PEXPIRE", "{m}:queue", 5000}},
		{keep, m, []any{"b", "nobody"}},
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{inspect, inspectKeys("{m}"), []any{"0", 100}},
		{extend, m, []any{"a", 40000, "a-1/20000/-"}},
		{nil, nil, []any{"PTTL", "{m}:queue"}},
		{release, m, rel("a", "a-1/20000/-")},
		{acquire, m, acq("b", "b-1/20000/-", "cb", `{"pid":2}`)}, // claims the grant
		{nil, nil, []any{"HKEYS", "{m}"}},
		{nil, nil, []any{"EXISTS", "{m}:queue"}},
		{release, m, rel("b", "b-1/20000/-")},
		{acquire, m, acq("a", "a-2/0/-", "ca", "")}, // the fast path
		{release, m, rel("a", "a-2/0/-")},
		{undo, mg, []any{"z", "z-1/20000/-", 60000, "PUBLISH"}}, // z gives up
		{nil, nil, []any{"PTTL", "{m}:gone"}},
		{nil, nil, []any{"ZCARD", "{m}:gone"}},
		{acquire, m, acq("z", "z-1/20000/-", "cz", "")}, // late: takes nothing
		{acquire, m, acq("z", "z-2/20000/-", "cz", "")}, // its record exists: the long path
		{acquire, m, acq("z", "z-3/20000/r", "cz", "")}, // re-entered
		{nil, nil, []any{"PTTL", "{m}"}},

		{rlock, wi, []any{"r:r1", 60000, "g:r1-1", "wq--cr\tr1-1\t{}"}},
		{rlock, wi, []any{"r:r2", 60000, "g:r2-1", "wq--cr\tr2-1\t{}"}},
		{wlock, wi, []any{"w1", 60000, "g:w1-1", "wq--00020000cw\tw1-1\tw1\t{}"}}, // waits behind the readers
		{rlock, wi, []any{"r:r3", 60000, "g:r3-1", "wq--cr\tr3-1\t{}"}},           // waits behind the writer
		{nil, nil, []any{"HLEN", "{w}"}},
		{nil, nil, []any{"PTTL", "{w}"}},
		{inspect, inspectKeys("{w}"), []any{"0", 100}},
		{force, w, []any{10000, "PUBLISH", "{w}:released", "redlua:revoke:", "0", 100}}, // revokes both readers
		{runlock, wi, []any{"r:r1"}},
		{runlock, wi, []any{"r:r2"}}, // the last reader out wakes w1
		{nil, nil, []any{"HEXISTS", "{w}", "h"}},
		{wlock, wi, []any{"w1", 60000, "g:w1-1", "wq--00020000cw\tw1-1\tw1\t{}"}},
		{rextend, wi, []any{"w1", 30000, "w"}},
		{nil, nil, []any{"PTTL", "{w}"}},
		{wunlock, wi, []any{"w1"}},
		{leave, wi, []any{"z", "z-1", 60000, "w", "PUBLISH"}},
		{wlock, wi, []any{"z", 60000, "g:z-1", "wq--00020000cz\tz-1\tz\t{}"}},        // late: takes nothing
		{rlock, wi, []any{"r:r4", 5, "g:r4-1", "wq--cr\tr4-1\t{}"}},                  // an error
		{leave, wi, []any{"z", "z-2", 60000, "w", "PUB"}},                            // an error
		{force, w, []any{0, "PUB", "{w}:released", "redlua:revoke:", "0", 100}},      // an error
		{force, w, []any{-1, "PUBLISH", "{w}:released", "redlua:revoke:", "0", 100}}, // an error

		{semTake, si, []any{"alice", "1 60000 2", holder("c1", "alice")}},
		{semTake, si, []any{"bob", "2 60000 2", holder("c2", "bob")}}, // 0: sem.acquire decides
		{semAcquire, s, []any{"bob", 2, 60000, 2, holder("c2", "bob"), wait}},
		{inspect, inspectKeys("{s}"), []any{"0", 100}},
		{nil, nil, []any{"HEXISTS", "{s}", "w:bob"}},
		{semKeep, s, []any{"bob", "nobody"}},
		{semRelease, s, []any{"alice"}}, // hands bob both permits
		{nil, nil, []any{"EXISTS", "{s}:squeue"}},
		{semAcquire, s, []any{"bob", 2, 60000, 2, holder("c2", "bob"), wait}}, // claims them
		{semExtend, si, []any{"bob", 30000}},
		// carol queues behind bob; bob's release hands her the permit.
		{semAcquire, s, []any{"carol", 1, 60000, 2, holder("c3", "carol"), wait}},
		{nil, nil, []any{"PTTL", "{s}:squeue"}},
		{semLimit, s, []any{3}}, // a third permit: carol's
		{nil, nil, []any{"PTTL", "{s}"}},
		{semRelease, s, []any{"bob"}},
		{semExtend, si, []any{"bob", 30000}},                                      // released: -1
		{semAcquire, s, []any{"carol", 1, 60000, 2, holder("c3", "carol"), wait}}, // claims it
		{semRelease, s, []any{"carol"}},
		{semUndo, s, []any{"dave", 60000}},                                      // dave gives up
		{semAcquire, s, []any{"dave", 1, 60000, 2, holder("c4", "dave"), wait}}, // late: takes nothing
		{semAcquire, s, []any{"x", 0, 60000, 2, holder("c4", "x"), wait}},       // an error
		{nil, nil, []any{"HKEYS", "{s}"}},
		{force, s[:1], []any{0, "PUBLISH", "{s}:released", "redlua:revoke:", "0", 100}},
		{force, s[:1], []any{0, "PUB", "{s}:released", "redlua:revoke:", "0", 100}}, // an error
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
