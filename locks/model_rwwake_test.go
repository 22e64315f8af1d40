package locks_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/registry"
)

// Model checks of the RWMutex scripts (see model_test.go): every lock name
// is a hash, "{m}", and an index, "{m}:rw" (docs/layout.md), and the scripts are called with the KEYS
// and ARGV the locks package passes.

type rwScripts struct {
	rlock, runlock, wlock, wunlock, leave *registry.Script
}

// mcRWScripts is the set the client runs.
func mcRWScripts(t *testing.T) rwScripts {
	v := mcV2Lookup(t, "rw.rlock@7", "rw.runlock@8", "rw.lock@7", "rw.unlock@4", "rw.leave@6")
	return rwScripts{rlock: v[0], runlock: v[1], wlock: v[2], wunlock: v[3], leave: v[4]}
}

// mcRWKeys is what every rw script takes: the lock's hash and its index.
var mcRWKeys = []string{"{m}", "{m}:rw"}

// rlockArgs is an RLock's ARGV (writer preference, waiting) for owner's
// attempt.
func (s rwScripts) rlockArgs(owner, attempt string) []any {
	return []any{"r:" + owner, mcTTL.Milliseconds(), "g:" + attempt, "wq--client-" + owner + "\t" + attempt + "\t"}
}

// lockArgs is a Lock's ARGV (waiting, with the waiter TTL) for owner's
// attempt.
func (s rwScripts) lockArgs(owner, attempt string) []any {
	return []any{owner, mcTTL.Milliseconds(), "g:" + attempt,
		fmt.Sprintf("wq--%08d", mcWaitTTL.Milliseconds()) + "client-" + owner + "\t" + attempt + "\t" + owner + "\t"}
}

// unlock is the writer's release, rw.unlock.
func (s rwScripts) unlock(name string) explore.Step {
	return explore.Step{Label: "unlock", Script: s.wunlock, Keys: mcRWKeys, Args: []any{name}}
}

func mcReader(name string, s rwScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "rlock", Script: s.rlock, Keys: mcRWKeys, Args: s.rlockArgs(name, name+"-attempt"),
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "rlock"
				}
				c.Acquire(mcTTL)
				return "runlock"
			}},
		{Label: "runlock", Script: s.runlock, Keys: mcRWKeys, Args: []any{"r:" + name},
			Then: func(c *explore.Ctx) string { c.Release(); return "rlock" }},
	}}
}

func mcWriter(name string, s rwScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "lock", Script: s.wlock, Keys: mcRWKeys, Args: s.lockArgs(name, name+"-attempt"),
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "lock"
				}
				c.Acquire(mcTTL)
				return "unlock"
			}},
		withThen(s.unlock(name), func(c *explore.Ctx) string { c.Release(); return "lock" }),
	}}
}

// mcRWHash is the lock hash's fields ("" when the key is gone), and the
// server's time in ms as the scripts see it.
func mcRWHash(v *explore.View) (map[string]string, int64) {
	now := 1_700_000_000_000 + v.Now().Milliseconds()
	if d, ok := v.Key("{m}"); ok {
		return d.Value.(map[string]string), now
	}
	return nil, now
}

// mcRWWriter is the owner of the live write hold ("" for none).
func mcRWWriter(v *explore.View) string {
	fields, now := mcRWHash(v)
	f := strings.Split(fields["h"], "\t")
	if len(f) < 8 || f[0] != "rwmutex" || (f[2] != "h" && f[2] != "x") {
		return ""
	}
	if until, _ := strconv.ParseInt(f[1], 10, 64); until <= now {
		return ""
	}
	return f[6]
}

// mcRWLive says whether field (r:<owner> or W:<owner>) holds a deadline
// still ahead.
func mcRWLive(v *explore.View, field string) bool {
	fields, now := mcRWHash(v)
	value, ok := fields[field]
	if !ok {
		return false
	}
	at, _ := strconv.ParseInt(strings.SplitN(value, "\t", 2)[0], 10, 64)
	return at > now
}

// What the hand-written explorer these models replaced checked: the server
// never has a live writer with a live reader of another owner, no writer
// believes it holds with another holder (reader or writer), and (as
// progress) a writer gets in even when every holder crashed.
var (
	mcRWServer = explore.Invariant{Name: "server: no writer with live readers", Check: func(v *explore.View) error {
		w := mcRWWriter(v)
		if w == "" {
			return nil
		}
		fields, _ := mcRWHash(v)
		for field := range fields {
			if strings.HasPrefix(field, "r:") && field != "r:"+w && mcRWLive(v, field) {
				return fmt.Errorf("the server has the writer %s and the live reader %s", w, field[2:])
			}
		}
		return nil
	}}
	mcRWBeliefs = explore.Invariant{Name: "beliefs: a writer holds alone", Check: func(v *explore.View) error {
		if h := v.Holders(); v.Holds("w") && len(h) > 1 {
			return fmt.Errorf("the writer holds the lock together with %v", h)
		}
		return nil
	}}
)

func mcRWModel(name string, s rwScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcReader("r1", s), mcReader("r2", s), mcWriter("w", s)},
		Invariants: []explore.Invariant{mcRWServer, mcRWBeliefs},
		Progress:   []explore.Progress{{Name: "a writer gets in", Actor: mcWriter("late-writer", s), Within: 4}},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

// mcRWWritersAlone: no writer believes it holds the lock together with
// another holder, reader or writer.
func mcRWWritersAlone(writers ...string) explore.Invariant {
	return explore.Invariant{Name: "beliefs: writers hold alone", Check: func(v *explore.View) error {
		for _, w := range writers {
			if h := v.Holders(); v.Holds(w) && len(h) > 1 {
				return fmt.Errorf("the writer %s holds the lock together with %v", w, h)
			}
		}
		return nil
	}}
}

// mcRWWritersModel: two writers and a reader, for what only a second
// writer shows (one writer's unlock dropping the other's hold).
func mcRWWritersModel(name string, s rwScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcReader("r", s), mcWriter("old", s), mcWriter("w", s)},
		Invariants: []explore.Invariant{mcRWServer, mcRWWritersAlone("old", "w")},
		Progress:   []explore.Progress{{Name: "a writer gets in", Actor: mcWriter("late-writer", s), Within: 4}},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

func TestModelRWMutex(t *testing.T) {
	s := mcRWScripts(t)
	res := explore.Check(t, mcRWModel("rw lock, 2 readers + 1 writer", s))
	if res != nil && res.States < 1000 {
		t.Fatalf("only %d states: the model explores too little to mean anything", res.States)
	}
	explore.Check(t, mcRWWritersModel("rw lock, 2 writers + 1 reader", s))

	broken := s
	broken.rlock = mcBreak(t, s.rlock, "elseif not owns(string.match(rest, '^[^\\t]*\\t(.*)$') or '') then", "elseif false then")
	mcMustFail(t, mcRWModel("rw lock, rlock ignores the writer", broken), "server: no writer with live readers")
	broken = s
	broken.wlock = mcBreak(t, s.wlock, "if live > 0 then", "if false then")
	mcMustFail(t, mcRWModel("rw lock, writer ignores readers", broken), "server: no writer with live readers")
	broken = s
	broken.wunlock = mcBreak(t, s.wunlock, "if not upto or (holder ~= owner and holder .. '\\t' .. took ~= owner) then",
		"if not upto then")
	mcMustFail(t, mcRWWritersModel("rw.unlock drops another writer's hold", broken), "beliefs: writers hold alone")
	broken = s
	broken.runlock = mcBreak(t, s.runlock, "  if left <= 0 then", "  if true then")
	mcMustFail(t, mcRWModel("rw.runlock drops h while other readers hold", broken), "server: no writer with live readers")
}

// mcRWLeft is what a given-up RWMutex attempt of owner "a" may have left
// on the lock ("" for nothing).
func mcRWLeft(v *explore.View) string {
	switch {
	case mcRWWriter(v) == "a":
		return "a holds the write lock"
	case mcRWLive(v, "r:a"):
		return "a holds a read lock"
	case mcRWLive(v, "W:a"):
		return "a waits as a writer, holding readers back"
	}
	return ""
}

// Give-up models (see model_giveup_test.go) of the RWMutex scripts: a
// call's undo is rw.leave@6 with its attempt, which records the attempt,
// drops the hold it took and takes a writer out of the waiting writers;
// a late rw.lock@7 or rw.rlock@7 of the given-up attempt takes nothing.
func mcGiveUpRW(t *testing.T) []mcGiveUpKind {
	s := mcRWScripts(t)
	goneTTL := 2 * mcFairWaitTTL.Milliseconds()
	const record = "redis.call('HSET', lock, 'g:' .. attempt, string.format('%d', now + gone_ttl))"
	return []mcGiveUpKind{
		{name: "rw.rlock@7 undone by rw.leave@6", record: record,
			late: explore.Step{Label: "rlock arrives", Script: s.rlock, Keys: mcRWKeys, Args: s.rlockArgs("a", mcGiveUpAttempt)},
			undo: []explore.Step{{Label: "give up", Script: s.leave, Keys: mcRWKeys,
				Args: []any{"a", mcGiveUpAttempt, goneTTL, "r", "PUBLISH"}}},
			rival:    mcWriter("b", s),
			leftover: mcRWLeft},
		{name: "rw.lock@7 undone by rw.leave@6", record: record,
			late: explore.Step{Label: "lock arrives", Script: s.wlock, Keys: mcRWKeys, Args: s.lockArgs("a", mcGiveUpAttempt)},
			undo: []explore.Step{{Label: "give up", Script: s.leave, Keys: mcRWKeys,
				Args: []any{"a", mcGiveUpAttempt, goneTTL, "w", "PUBLISH"}}},
			rival:    mcReader("b", s),
			leftover: mcRWLeft},
	}
}

// mcCheckGiveUpRW is mcCheckGiveUp for the rw scripts, whose given-up
// check and record read differently.
func mcCheckGiveUpRW(t *testing.T, k mcGiveUpKind) {
	t.Helper()
	res := explore.Check(t, mcGiveUpModel(k.name+", a given-up attempt arriving late", k))
	if res != nil && res.States < 50 {
		t.Fatalf("%s: only %d states: the model explores too little to mean anything", k.name, res.States)
	}
	broken := k
	broken.late.Script = mcBreak(t, k.late.Script, "if v[4] and tonumber(v[4]) > now then", "if false then")
	mcMustFail(t, mcGiveUpModel(k.name+", given-up attempts not checked", broken), "abandoned attempts take nothing")
	broken = k
	broken.undo = append([]explore.Step(nil), k.undo...)
	broken.undo[0].Script = mcBreak(t, k.undo[0].Script, k.record, "-- not recorded")
	mcMustFail(t, mcGiveUpModel(k.name+", the undo records nothing", broken), "abandoned attempts take nothing")
}

func TestModelGiveUpRWMutex(t *testing.T) {
	for _, k := range mcGiveUpRW(t) {
		mcCheckGiveUpRW(t, k)
	}
	// The writer's give-up must take it out of the waiting writers too.
	k := mcGiveUpRW(t)[1]
	k.undo = append([]explore.Step(nil), k.undo...)
	k.undo[0].Script = mcBreak(t, k.undo[0].Script, "  redis.call('HDEL', lock, 'W:' .. owner)", "  -- still waiting")
	mcMustFail(t, mcGiveUpModel("rw.leave@6 keeps the waiting writer", k), "abandoned attempts take nothing")
}
