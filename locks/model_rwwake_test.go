package locks_test

import (
	"testing"

	"github.com/redlua/redlua/explore"
)

// Give-up models (see model_giveup_test.go) of the RWMutex scripts: a
// writer's undo is rw.unlock@1 with the attempt, then
// rw.leave@3; a reader's is rw.runlock@4 with the attempt. A late
// rw.lock@4 or rw.rlock@3 of the given-up attempt takes nothing.
func mcGiveUpRWv4(t *testing.T) []mcGiveUpKind {
	v := mcV2Lookup(t, "rw.rlock@3", "rw.runlock@4", "rw.lock@4", "rw.unlock@1", "rw.leave@3")
	rw := rwScripts{rlock: v[0], runlock: v[1], wlock: v[2], wunlock: v[3]}
	leave := v[4]
	goneTTL := 2 * mcFairWaitTTL.Milliseconds()
	const record = "redis.call('HSET', gone, attempt, 1)"
	held := func(v *explore.View) string {
		if h := mcRWHeld(v); h != "" {
			return h
		}
		if d, ok := v.Key("{m}:wclients"); ok {
			if _, found := d.Value.(map[string]string)["a"]; found {
				return "a's client is still recorded as a waiting writer's"
			}
		}
		return ""
	}
	return []mcGiveUpKind{
		{name: "rw.rlock@3 undone by rw.runlock@4", record: record,
			late: explore.Step{Label: "rlock arrives", Script: rw.rlock, Keys: rw.keys(),
				Args: []any{"a", mcTTL.Milliseconds(), "1", mcGiveUpAttempt}},
			undo: []explore.Step{{Label: "give up", Script: rw.runlock, Keys: rw.runlockKeys(),
				Args: []any{"a", "{m}:released", "PUBLISH", mcGiveUpAttempt, goneTTL, "{m}:grant:"}}},
			rival:    mcWriter("b", rw),
			leftover: held},
		{name: "rw.lock@4", record: record,
			late: explore.Step{Label: "lock arrives", Script: rw.wlock, Keys: rw.wlockKeys(),
				Args: []any{"a", mcTTL.Milliseconds(), mcWaitTTL.Milliseconds(), "", mcGiveUpAttempt, "client-a"}},
			undo: []explore.Step{
				{Label: "give up", Script: rw.wunlock, Keys: []string{"{m}", "{m}:gone", "{m}:wwait", "{m}:wclients"},
					Args: []any{"a", "{m}:released", "{m}:grant:", "PUBLISH", mcGiveUpAttempt, goneTTL}},
				{Label: "leave", Script: leave, Keys: []string{"{m}:wwait", "{m}:wclients"}, Args: []any{"a", "{m}:released", "PUBLISH"}},
			},
			rival:    mcReader("b", rw),
			leftover: held},
	}
}

func TestModelGiveUpRWMutex(t *testing.T) {
	for _, k := range mcGiveUpRWv4(t) {
		mcCheckGiveUp(t, k)
	}
	// The writer's leave must drop its client too.
	k := mcGiveUpRWv4(t)[1]
	k.undo = append([]explore.Step(nil), k.undo...)
	k.undo[1].Script = mcBreak(t, k.undo[1].Script, "redis.call('HDEL', clients, owner)", "-- client kept")
	mcMustFail(t, mcGiveUpModel("rw.leave@3 keeps the client", k), "abandoned attempts take nothing")
}
