package locks_test

import (
	"fmt"
	"testing"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/simulate"
)

// Give-up models of the RWMutex, Semaphore and MultiLock scripts: the
// counterpart of mcV2GiveUpModel (model_queue_test.go) for the other kinds.
// A call whose acquisition timed out undoes it ("a": the kind's release with
// the attempt id, which records the attempt as given up and drops a hold
// only if the attempt took it; then, for a writer, leaving the waiting set;
// for a MultiLock, the second lock's release) while its acquire script may
// still reach the server at any point ("late"); a competitor "b" takes and
// releases the lock meanwhile. Whatever the order, once a finished its undo
// (and within the record's lifetime), the server keeps nothing of a's.

// mcGiveUpKind is one lock kind's give-up: the late acquire, the undo's
// steps (the first records the attempt), the competitor, and what of a's
// may be left on the server.
type mcGiveUpKind struct {
	name     string
	late     explore.Step
	undo     []explore.Step
	rival    explore.Actor
	leftover func(v *explore.View) string
	// record is the line of the undo's first script that records the
	// attempt; a broken copy drops it.
	record string
	// check is the line of the late script that refuses a recorded
	// attempt ("" for the line the mutex's and the rw scripts share); a
	// broken copy skips it.
	check string
}

const mcGiveUpAttempt = "a-1"

// mcLiveMember says whether zset key has member with a deadline still ahead.
func mcLiveMember(v *explore.View, key, member string) bool {
	d, ok := v.Key(key)
	if !ok {
		return false
	}
	now := float64(1_700_000_000_000 + v.Now().Milliseconds())
	for _, z := range d.Value.([]simulate.ZMember) {
		if z.Member == member && z.Score > now {
			return true
		}
	}
	return false
}

func mcGiveUpModel(name string, k mcGiveUpKind) *explore.Model {
	goneTTL := 2 * mcFairWaitTTL.Milliseconds()
	steps := append([]explore.Step(nil), k.undo...)
	// The record lives gone_ttl from when it was made: "at" is then. An
	// attempt arriving later takes the lock for one lease that no one
	// believes in (mcV2GiveUpModel found that trace for the mutex).
	steps[0] = withThen(steps[0], func(c *explore.Ctx) string {
		c.SetVar("at", c.Now().Milliseconds())
		return ""
	})
	last := len(steps) - 1
	then := steps[last].Then
	steps[last] = withThen(steps[last], func(c *explore.Ctx) string {
		if then != nil {
			then(c)
		}
		c.SetVar("gave-up", 1)
		return explore.End
	})
	undo := explore.Actor{Name: "a", Vars: []string{"gave-up", "at"}, Steps: steps}
	late := explore.Actor{Name: "late", Steps: []explore.Step{withThen(k.late, func(*explore.Ctx) string { return explore.End })}}
	abandoned := explore.Invariant{Name: "abandoned attempts take nothing", Check: func(v *explore.View) error {
		if v.Var("a", "gave-up") == 0 || v.Now().Milliseconds() >= v.Var("a", "at")+goneTTL {
			return nil
		}
		if what := k.leftover(v); what != "" {
			return fmt.Errorf("a gave up and undid its attempt, yet %s", what)
		}
		return nil
	}}
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{undo, late, k.rival},
		Invariants: []explore.Invariant{abandoned},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
	}
}

// mcGiveUpKinds are the Semaphore's and the MultiLock's give-ups (the
// RWMutex's are in model_rwwake_test.go).
func mcGiveUpKinds(t *testing.T) []mcGiveUpKind {
	v := mcV2Lookup(t, mcMutexIDs[1], "multi.acquire@6", "sem.acquire@11", "sem.release@11", mcMutexIDs[2], "sem.undo@5")
	release, multi, undo := v[0], v[1], v[4]
	sem := semScripts{acquire: v[2], release: v[3], undo: v[5]}
	goneTTL := 2 * mcFairWaitTTL.Milliseconds()
	g := []string{"{g}:a", "{g}:b"}
	giveUp := func(lock string) explore.Step {
		return explore.Step{Label: "give up " + lock, Script: undo, Keys: mcKeysOf(undo, lock), Args: mcUndoArgs("a", mcGiveUpAttempt)}
	}
	return []mcGiveUpKind{
		// A Semaphore call's owner token is its attempt id.
		{name: "sem.acquire", record: "redis.call('HSET', lock, 'g:' .. owner, string.format('%d', now + gone_ttl))",
			check: "if got[6] and tonumber(got[6]) > now then",
			late: explore.Step{Label: "acquire arrives", Script: sem.acquire, Keys: sem.keys(),
				Args: sem.acquireArgs("a", 1)},
			undo: []explore.Step{{Label: "give up", Script: sem.undo, Keys: sem.keys(),
				Args: []any{"a", goneTTL}}},
			rival:    mcSemGrantClient("b", sem),
			leftover: mcSemLeft},
		{name: "multi.acquire", record: mcUndoRecord, check: "if v[3] and tonumber(v[3]) > now then",
			late: explore.Step{Label: "acquire arrives", Script: multi, Keys: g,
				Args: []any{"a", mcTTL.Milliseconds(), mcGiveUpAttempt, "client-a", ""}},
			undo:  []explore.Step{giveUp(g[0]), giveUp(g[1])},
			rival: mcMultiClient("b", multi, release, g[1], "{g}:c"),
			leftover: func(v *explore.View) string {
				for _, k := range g {
					if mcOwner(v, k) == "a" {
						return "a holds " + k
					}
				}
				return ""
			}},
	}
}

func TestModelGiveUpOtherKinds(t *testing.T) {
	for _, k := range mcGiveUpKinds(t) {
		mcCheckGiveUp(t, k)
	}
}

// mcCheckGiveUp explores k's give-up model and shows that it can fail: the
// gone check is what refuses the late attempt, and the undo's record is
// what it checks.
func mcCheckGiveUp(t *testing.T, k mcGiveUpKind) {
	t.Helper()
	res := explore.Check(t, mcGiveUpModel(k.name+", a given-up attempt arriving late", k))
	if res != nil && res.States < 50 {
		t.Fatalf("%s: only %d states: the model explores too little to mean anything", k.name, res.States)
	}
	broken := k
	check := k.check
	if check == "" {
		check = "if redis.call('HEXISTS', gone, attempt) == 1 then"
	}
	broken.late.Script = mcBreak(t, k.late.Script, check, "if false then")
	mcMustFail(t, mcGiveUpModel(k.name+", gone attempts not checked", broken), "abandoned attempts take nothing")
	broken = k
	broken.undo = append([]explore.Step(nil), k.undo...)
	broken.undo[0].Script = mcBreak(t, k.undo[0].Script, k.record, "-- not recorded")
	mcMustFail(t, mcGiveUpModel(k.name+", the undo records nothing", broken), "abandoned attempts take nothing")
}

// mcSemLeft is what a given-up Semaphore call "a" may have left: a live
// record of permits, or its entry in the queue.
func mcSemLeft(v *explore.View) string {
	d, ok := v.Key("{s}")
	if !ok {
		return ""
	}
	fields := d.Value.(map[string]string)
	if rec, ok := fields["p:a"]; ok {
		var expiry int64
		fmt.Sscan(rec, &expiry)
		if expiry > 1_700_000_000_000+v.Now().Milliseconds() {
			return "a holds permits"
		}
	}
	if _, ok := fields["w:a"]; ok {
		return "a is left in the queue"
	}
	return ""
}
