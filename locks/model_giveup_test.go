package locks_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// Give-up models of the RWMutex, Semaphore and MultiLock scripts: the
// counterpart of mcV2GiveUpModel (model_queue_test.go) for the kinds whose
// undo is two scripts, gone.record and then a release. A call whose
// acquisition timed out undoes it ("a": record, then release, then leave
// the writers' waiting set for a writer) while its acquire script may still
// reach the server at any point ("late"); a competitor "b" takes and
// releases the lock meanwhile. Whatever the order, once a finished its undo
// (and within the record's lifetime), the server keeps nothing of a's.

// mcGiveUpKind is one lock kind's give-up: the late acquire, the release
// steps of the undo (after gone.record), the competitor, and what of a's
// may be left on the server.
type mcGiveUpKind struct {
	name     string
	gone     string // the gone hash the acquire looks at
	late     explore.Step
	releases []explore.Step
	rival    explore.Actor
	leftover func(v *explore.View) string
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

func mcHashOwner(v *explore.View, key string) string {
	if d, ok := v.Key(key); ok {
		return d.Value.(map[string]string)["owner"]
	}
	return ""
}

func mcGiveUpModel(name string, k mcGiveUpKind, record *registry.Script) *explore.Model {
	return mcGiveUpModelOrder(name, k, record, true)
}

// mcGiveUpModelOrder is mcGiveUpModel with the undo recording the attempt
// first (as the locks package does) or last.
func mcGiveUpModelOrder(name string, k mcGiveUpKind, record *registry.Script, recordFirst bool) *explore.Model {
	goneTTL := 2 * mcFairWaitTTL.Milliseconds()
	rec := explore.Step{Label: "record gone", Script: record, Keys: []string{k.gone}, Args: []any{mcGiveUpAttempt, goneTTL}}
	steps := append([]explore.Step{rec}, k.releases...)
	if !recordFirst {
		steps = append(append([]explore.Step(nil), k.releases...), rec)
	}
	// The record lives gone_ttl from when it was made: "at" is then. An
	// attempt arriving later takes the lock for one lease that no one
	// believes in (mcV2GiveUpModel found that trace for the mutex).
	steps[slices.IndexFunc(steps, func(st explore.Step) bool { return st.Label == rec.Label })].Then = func(c *explore.Ctx) string {
		c.SetVar("at", c.Now().Milliseconds())
		return ""
	}
	last := len(steps) - 1
	steps[last] = withThen(steps[last], func(c *explore.Ctx) string {
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

func mcGiveUpKinds(t *testing.T) []mcGiveUpKind {
	v := mcV2Lookup(t, "rw.rlock@3", "rw.runlock@2", "rw.lock@3", "mutex.release@4", "rw.leave@2",
		"sem.acquire@4", "sem.release@2", "multi.acquire@3")
	rlock, runlock, wlock, release, leave, semAcquire, semRelease, multi := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	rw := rwScripts{rlock: rlock, runlock: runlock, wlock: wlock, wunlock: release, v2: true}
	rwKeys := rw.keys()
	rwHeld := func(v *explore.View) string {
		switch {
		case mcHashOwner(v, "{m}") == "a":
			return "a holds the write lock"
		case mcLiveMember(v, "{m}:readers", "a"):
			return "a holds a read lock"
		case mcLiveMember(v, "{m}:wwait", "a"):
			return "a waits as a writer, holding readers back"
		}
		return ""
	}
	sem := semScripts{acquire: semAcquire, release: semRelease, v2: true}
	g := []string{"{g}:a", "{g}:b"}
	return []mcGiveUpKind{
		{name: "rw.rlock@3", gone: "{m}:gone",
			late: explore.Step{Label: "rlock arrives", Script: rlock, Keys: rwKeys,
				Args: []any{"a", mcTTL.Milliseconds(), "1", mcGiveUpAttempt}},
			releases: []explore.Step{{Label: "runlock", Script: runlock, Keys: mcRWKeys[1:3], Args: rw.runlockArgs("a")}},
			rival:    mcWriter("b", rw),
			leftover: rwHeld},
		{name: "rw.lock@3", gone: "{m}:gone",
			late: explore.Step{Label: "lock arrives", Script: wlock, Keys: rwKeys,
				Args: []any{"a", mcTTL.Milliseconds(), mcWaitTTL.Milliseconds(), "", mcGiveUpAttempt}},
			releases: []explore.Step{
				{Label: "leave", Script: leave, Keys: mcRWKeys[3:4], Args: []any{"a", "{m}:released", "PUBLISH"}},
				rw.unlock("a"),
			},
			rival:    mcReader("b", rw),
			leftover: rwHeld},
		{name: "sem.acquire@4", gone: "{s}:gone",
			late: explore.Step{Label: "acquire arrives", Script: semAcquire, Keys: sem.keys(),
				Args: []any{"a", 1, mcTTL.Milliseconds(), 1, mcGiveUpAttempt}},
			releases: []explore.Step{{Label: "release", Script: semRelease, Keys: mcSemKeys[:1], Args: sem.releaseArgs("a")}},
			rival:    mcSemClient("b", sem),
			leftover: func(v *explore.View) string {
				if mcLiveMember(v, "{s}:permits", "a:1") {
					return "a holds a permit"
				}
				return ""
			}},
		{name: "multi.acquire@3", gone: "{g}:a:gone",
			late: explore.Step{Label: "acquire arrives", Script: multi,
				Keys: []string{"{g}:a:gone", g[0], g[0] + ":readers", g[0] + ":permits", g[1], g[1] + ":readers", g[1] + ":permits"},
				Args: []any{"a", mcTTL.Milliseconds(), "", mcGiveUpAttempt}},
			releases: []explore.Step{
				{Label: "release " + g[0], Script: release, Keys: mcKeysOf(release, g[0]), Args: mcV2ReleaseArgs(release, "a", "")},
				{Label: "release " + g[1], Script: release, Keys: mcKeysOf(release, g[1]), Args: mcV2ReleaseArgs(release, "a", "")},
			},
			rival: mcMultiClient("b", multi, release, g[1], "{g}:c", true),
			leftover: func(v *explore.View) string {
				for _, k := range g {
					if mcHashOwner(v, k) == "a" {
						return "a holds " + k
					}
				}
				return ""
			}},
	}
}

func TestModelGiveUpOtherKinds(t *testing.T) {
	record := mcV2Lookup(t, "gone.record@1")[0]
	for _, k := range mcGiveUpKinds(t) {
		res := explore.Check(t, mcGiveUpModel(k.name+", a given-up attempt arriving late", k, record))
		if res != nil && res.States < 50 {
			t.Fatalf("%s: only %d states: the model explores too little to mean anything", k.name, res.States)
		}

		// The gone check is what refuses the late attempt.
		broken := k
		broken.late.Script = mcBreak(t, k.late.Script, "if redis.call('HEXISTS', gone, attempt) == 1 then", "if false then")
		mcMustFail(t, mcGiveUpModel(k.name+", gone attempts not checked", broken, record), "abandoned attempts take nothing")
	}
	// Recording after the release leaves a window for the late attempt.
	k := mcGiveUpKinds(t)[2]
	mcMustFail(t, mcGiveUpModelOrder(k.name+", released before recorded", k, record, false), "abandoned attempts take nothing")
}
