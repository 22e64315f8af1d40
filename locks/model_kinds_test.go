package locks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// Model checks of the RWMutex, Semaphore and MultiLock scripts (see
// model_test.go).

// --- read-write lock ----------------------------------------------------------

type rwScripts struct {
	rlock, runlock, wlock, wunlock *registry.Script
}

// keys is what rw.rlock takes.
func (s rwScripts) keys() []string {
	return append(append([]string(nil), mcRWKeys...), "{m}:permits", "{m}:gone")
}

// wlockKeys is what rw.lock takes: keys() and the hash of waiting writers'
// clients.
func (s rwScripts) wlockKeys() []string { return append(s.keys(), "{m}:wclients") }

// runlockArgs is an RUnlock's ARGV (no attempt to undo).
func (s rwScripts) runlockArgs(name string) []any {
	return []any{name, "{m}:released", "PUBLISH", "", 2 * mcFairWaitTTL.Milliseconds(), "{m}:grant:"}
}

// runlockKeys is what rw.runlock takes.
func (s rwScripts) runlockKeys() []string {
	return []string{mcRWKeys[1], mcRWKeys[2], "{m}:gone", "{m}:wwait", "{m}:wclients"}
}

// unlock is the writer's release, rw.unlock.
func (s rwScripts) unlock(name string) explore.Step {
	return explore.Step{Label: "unlock", Script: s.wunlock, Keys: []string{"{m}", "{m}:gone", "{m}:wwait", "{m}:wclients"},
		Args: mcV2ReleaseArgs(s.wunlock, name, "")}
}

func mcReader(name string, s rwScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "rlock", Script: s.rlock, Keys: s.keys(), Args: mcFit(s.rlock, name, mcTTL.Milliseconds(), "1", name+"-attempt"),
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "rlock"
				}
				c.Acquire(mcTTL)
				return "runlock"
			}},
		{Label: "runlock", Script: s.runlock, Keys: s.runlockKeys(), Args: s.runlockArgs(name),
			Then: func(c *explore.Ctx) string { c.Release(); return "rlock" }},
	}}
}

func mcWriter(name string, s rwScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "lock", Script: s.wlock, Keys: s.wlockKeys(), Args: mcFit(s.wlock, name, mcTTL.Milliseconds(), mcWaitTTL.Milliseconds(), "", name+"-attempt", "client-"+name),
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

// What the hand-written explorer this file replaces checked: the server
// never has a live writer with a live reader, no writer believes it holds
// with another holder (reader or writer), and (as progress) a writer gets
// in even when every holder crashed.
var (
	mcRWServer = explore.Invariant{Name: "server: no writer with live readers", Check: func(v *explore.View) error {
		// A writer holds the hash's owner field; a
		// released hash stays, without owner, for its last token.
		if w, ok := v.Key("{m}"); !ok || w.Value.(map[string]string)["owner"] == "" {
			return nil
		}
		d, ok := v.Key("{m}:readers")
		if !ok {
			return nil
		}
		now := float64(1_700_000_000_000 + v.Now().Milliseconds())
		for _, z := range d.Value.([]simulate.ZMember) {
			if z.Score > now {
				return fmt.Errorf("the server has a writer and the live reader %s", z.Member)
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
		Unobserved: []string{"{m}:fence"},
		Progress:   []explore.Progress{{Name: "a writer gets in", Actor: mcWriter("late-writer", s), Within: 4}},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

// --- semaphore ----------------------------------------------------------------

type semScripts struct{ acquire, release *registry.Script }

// keys is what sem.acquire takes.
func (s semScripts) keys() []string {
	return append(append([]string(nil), mcSemKeys...), "{s}", "{s}:readers", "{s}:gone", "{s}:squeue", "{s}:swaiters", "{s}:soffers")
}

// releaseArgs is an Unlock's ARGV (no attempt to undo) for one permit.
func (s semScripts) releaseArgs(name string) []any {
	return []any{name, 1, "{s}:released", "PUBLISH", "", 2 * mcFairWaitTTL.Milliseconds(), "{s}:grant:"}
}

// releaseKeys is what sem.release takes.
func (s semScripts) releaseKeys() []string {
	return []string{mcSemKeys[0], "{s}:gone", mcSemKeys[1], "{s}:squeue", "{s}:swaiters", mcSemKeys[2], "{s}:soffers"}
}

func mcSemClient(name string, s semScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		// It queues as a waiter (waiter TTL, its client, the wake-up prefix).
		{Label: "acquire", Script: s.acquire, Keys: s.keys(),
			Args: []any{name, 1, mcTTL.Milliseconds(), 2, name + "-attempt", mcWaitTTL.Milliseconds(), name, "{s}:grant:", "PUBLISH"},
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				c.Acquire(mcTTL)
				return "release"
			}},
		{Label: "release", Script: s.release, Keys: s.releaseKeys(), Args: s.releaseArgs(name),
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

func mcSemModel(name string, s semScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcSemClient("a", s), mcSemClient("b", s), mcSemClient("c", s)},
		Invariants: []explore.Invariant{explore.AtMostHolders(2)},
		Progress:   []explore.Progress{{Name: "crashed holders give their permits back", Actor: mcSemClient("late", s), Within: 3}},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
	}
}

// --- multi-lock -----------------------------------------------------------------

// mcMultiClient takes two locks of one slot at once with multi.acquire,
// then releases them one by one with mutex.release.
func mcMultiClient(name string, acquire, release *registry.Script, a, b string) explore.Actor {
	attempt := name + "-attempt"
	releaseOf := func(lock string) explore.Step {
		return explore.Step{Label: "release " + lock, Script: release, Keys: mcKeysOf(release, lock), Args: mcReleaseArgs(name, attempt)}
	}
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: acquire, Keys: []string{a, b}, Args: []any{name, mcTTL.Milliseconds(), attempt, "client-" + name, ""},
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				c.Acquire(mcTTL)
				return "release " + a
			}},
		withThen(releaseOf(a), func(c *explore.Ctx) string { c.Release(); return "" }),
		withThen(releaseOf(b), func(c *explore.Ctx) string { return "acquire" }),
	}}
}

func mcMultiModel(name string, acquire, release *registry.Script) *explore.Model {
	return &explore.Model{
		Name: name,
		// x and y share lock b.
		Actors: []explore.Actor{
			mcMultiClient("x", acquire, release, "{g}:a", "{g}:b"),
			mcMultiClient("y", acquire, release, "{g}:b", "{g}:c"),
		},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

// --- the models -----------------------------------------------------------------

func TestModelRWMutex(t *testing.T) {
	// The set the client runs: rw.rlock@3 with rw.runlock@4, rw.lock@4 and
	// rw.unlock@1.
	v := mcV2Lookup(t, "rw.rlock@3", "rw.runlock@4", "rw.lock@4", "rw.unlock@1")
	s := rwScripts{rlock: v[0], runlock: v[1], wlock: v[2], wunlock: v[3]}
	res := explore.Check(t, mcRWModel("rw lock, 2 readers + 1 writer", s))
	if res != nil && res.States < 1000 {
		t.Fatalf("only %d states: the model explores too little to mean anything", res.States)
	}

	broken := s
	broken.rlock = mcBreak(t, s.rlock, "if holder and holder ~= owner then", "if false then")
	mcMustFail(t, mcRWModel("rw lock, rlock ignores the writer", broken), "server: no writer with live readers")
	broken = s
	broken.wlock = mcBreak(t, s.wlock, "if not holder and others == 0 then", "if not holder then")
	mcMustFail(t, mcRWModel("rw lock, writer ignores readers", broken), "server: no writer with live readers")
	broken = s
	broken.wunlock = mcBreak(t, s.wunlock, "if holder ~= owner then", "if false then")
	mcMustFail(t, mcRWWritersModel("rw.unlock drops another writer's hold", broken), "beliefs: writers hold alone")
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
		Unobserved: []string{"{m}:fence"},
		Progress:   []explore.Progress{{Name: "a writer gets in", Actor: mcWriter("late-writer", s), Within: 4}},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

func TestModelSemaphore(t *testing.T) {
	v := mcV2Lookup(t, "sem.acquire@6", "sem.release@5")
	s := semScripts{acquire: v[0], release: v[1]}
	explore.Check(t, mcSemModel("semaphore of 2 permits, 3 clients", s))

	broken := s
	broken.acquire = mcBreak(t, s.acquire, "local owed, fits, i = 0, used + count <= limit, 0",
		"local owed, fits, i = 0, used + count <= limit + 1, 0")
	mcMustFail(t, mcSemModel("semaphore, off by one", broken), "at most 2 holders")
}

// mcSemGrantClient is a Semaphore call: it queues, then
// learns of a hand-over from the grant message, without a round trip.
// "grant message" stands for that message, as mcGrantSeen does for the
// Mutex: a step that finds its permit in the permits set at any point
// while it is there. A call that finds none looks again (acquire), which
// also claims a grant made since.
func mcSemGrantClient(name string, s semScripts) explore.Actor {
	acquired := func(c *explore.Ctx) string {
		if !mcTaken(c) {
			c.SetVar("queued", c.Now().Milliseconds()+1)
			return "grant message"
		}
		c.Acquire(mcTTL)
		return "release"
	}
	return explore.Actor{Name: name, Vars: []string{"queued"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: s.keys(),
			Args: []any{name, 1, mcTTL.Milliseconds(), 2, name, mcWaitTTL.Milliseconds(), name, "{s}:grant:", "PUBLISH"},
			Then: acquired},
		{Label: "grant message", Command: []any{"ZSCORE", "{s}:permits", name + ":1"},
			Then: func(c *explore.Ctx) string {
				if c.IsNil() {
					return "acquire"
				}
				// The grant lives min(TTL, waiter TTL) from when it was made,
				// after this call last queued: the lease counts from then, as
				// Client.leaseFromGrant does.
				c.AcquireUntil(time.Duration(c.Var("queued")-1)*time.Millisecond + min(mcTTL, mcWaitTTL))
				return "release"
			}},
		{Label: "release", Script: s.release, Keys: s.releaseKeys(), Args: s.releaseArgs(name),
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

// mcSemGrantModel: 4 calls on 2 permits, so that a release
// can find two waiters queued behind the other holder.
func mcSemGrantModel(name string, s semScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcSemGrantClient("a", s), mcSemGrantClient("b", s), mcSemGrantClient("c", s), mcSemGrantClient("d", s)},
		Invariants: []explore.Invariant{explore.AtMostHolders(2)},
		Progress:   []explore.Progress{{Name: "crashed holders give their permits back", Actor: mcSemClient("late", s), Within: 3}},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
	}
}

// The release hands permits over (sem.release): no more holders than
// permits, with the grant believed from the message, and beside a client
// that only looks again.
func TestModelSemaphoreGrant(t *testing.T) {
	v := mcV2Lookup(t, "sem.acquire@6", "sem.release@5")
	v6 := semScripts{acquire: v[0], release: v[1]}
	explore.Check(t, mcSemGrantModel("semaphore of 2 permits, 4 clients, grants", v6))

	mixed := mcSemGrantModel("semaphore of 2 permits, grants beside a client that looks again", v6)
	mixed.Actors[1] = mcSemClient("b", v6)
	explore.Check(t, mixed)

	broken := v6
	broken.release = mcBreak(t, v6.release, "elseif used + reserved + n > its_limit then", "elseif false then")
	mcMustFail(t, mcSemGrantModel("semaphore, a release grants what does not fit", broken), "at most 2 holders")

	broken = v6
	broken.acquire = mcBreak(t, v6.acquire, "if not redis.call('ZSCORE', queue, owner) and redis.call('ZSCORE', permits, owner .. ':1') then",
		"if not redis.call('ZSCORE', queue, owner) then")
	mcMustFail(t, mcSemGrantModel("semaphore, a caller claims permits no one handed it", broken), "at most 2 holders")
}

func TestModelMultiLock(t *testing.T) {
	v := mcV2Lookup(t, "multi.acquire@5", mcMutexIDs[1])
	explore.Check(t, mcMultiModel("multi-lock, two clients sharing one lock", v[0], v[1]))

	broken := mcBreak(t, v[0], "  if v[1] then", "  if v[1] and i < #KEYS then")
	mcMustFail(t, mcMultiModel("multi-lock, last lock unchecked", broken, v[1]), "mutual exclusion")
}
