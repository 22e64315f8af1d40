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
	v2                             bool // version 2's keys and arguments
}

// keys is what rw.rlock and rw.lock take (version 2 adds the permits key,
// to refuse a name a semaphore holds; version 3 the gone key, to refuse an
// attempt given up on).
func (s rwScripts) keys() []string {
	if s.v2 {
		keys := append(append([]string(nil), mcRWKeys...), "{m}:permits")
		if len(s.rlock.Keys) > len(keys) {
			keys = append(keys, "{m}:gone")
		}
		return keys
	}
	return mcRWKeys
}

// wlockKeys is what rw.lock takes: keys(), and from version 4 the hash of
// waiting writers' clients.
func (s rwScripts) wlockKeys() []string {
	keys := s.keys()
	if len(s.wlock.Keys) > len(keys) {
		keys = append(keys, "{m}:wclients")
	}
	return keys
}

func (s rwScripts) runlockArgs(name string) []any {
	if s.v2 {
		// version 3 adds the attempt to undo ("" for an RUnlock) and
		// gone_ttl_ms, version 4 the prefix of the writers' wake-up channels
		return mcFit(s.runlock, name, "{m}:released", "PUBLISH", "", 2*mcFairWaitTTL.Milliseconds(), "{m}:grant:")
	}
	return []any{name, "{m}:released"}
}

// runlockKeys is what rw.runlock takes (version 3 adds the gone key,
// version 4 the waiting writers and their clients).
func (s rwScripts) runlockKeys() []string {
	keys := append([]string(nil), mcRWKeys[1:3]...)
	if len(s.runlock.Keys) > len(keys) {
		keys = append(keys, "{m}:gone")
	}
	if len(s.runlock.Keys) > len(keys) {
		keys = append(keys, "{m}:wwait", "{m}:wclients")
	}
	return keys
}

// unlock is the writer's release: mutex.release (with version 2's keys and
// arguments when the scripts are version 2), or rw.unlock.
func (s rwScripts) unlock(name string) explore.Step {
	st := explore.Step{Label: "unlock", Script: s.wunlock, Keys: mcRWKeys[:1], Args: []any{name, "{m}:released"}}
	switch {
	case s.wunlock.Name == "rw.unlock":
		st.Keys, st.Args = []string{"{m}", "{m}:gone", "{m}:wwait", "{m}:wclients"}, mcV2ReleaseArgs(s.wunlock, name, "")
	case s.v2:
		st.Keys, st.Args = mcKeysOf(s.wunlock, "{m}"), mcV2ReleaseArgs(s.wunlock, name, "")
	}
	return st
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
		// A writer holds the hash's owner field; since mutex.release@3 a
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

func rwScriptsOf(t testing.TB) rwScripts {
	get := mcScripts(t)
	return rwScripts{rlock: get("rw.rlock@1"), runlock: get("rw.runlock@1"), wlock: get("rw.lock@1"), wunlock: get("mutex.release@1")}
}

func TestModelRWMutex(t *testing.T) {
	s := rwScriptsOf(t)
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
}

// --- semaphore ----------------------------------------------------------------

type semScripts struct {
	acquire, release *registry.Script
	v2               bool // version 2's keys and arguments
}

// keys is what sem.acquire takes (version 2 adds the lock and readers keys,
// to refuse a name a mutex or rw lock holds).
func (s semScripts) keys() []string {
	if s.v2 {
		keys := append(append([]string(nil), mcSemKeys...), "{s}", "{s}:readers")
		if len(s.acquire.Keys) > len(keys) {
			keys = append(keys, "{s}:gone") // version 4
		}
		if len(s.acquire.Keys) > len(keys) {
			keys = append(keys, "{s}:squeue", "{s}:swaiters") // version 5
		}
		if len(s.acquire.Keys) > len(keys) {
			keys = append(keys, "{s}:soffers") // version 6
		}
		return keys
	}
	return mcSemKeys
}

func (s semScripts) releaseArgs(name string) []any {
	if s.v2 {
		// version 3 adds the attempt to undo ("" for an Unlock) and gone_ttl_ms,
		// version 4 the prefix of the channels that wake queued waiters
		return mcFit(s.release, name, 1, "{s}:released", "PUBLISH", "", 2*mcFairWaitTTL.Milliseconds(), "{s}:grant:")
	}
	return []any{name, 1, "{s}:released"}
}

// releaseKeys is what sem.release takes (version 3 adds the gone key,
// version 4 the limit and the queue).
func (s semScripts) releaseKeys() []string {
	if len(s.release.Keys) > 5 { // version 5 hands permits over
		return []string{mcSemKeys[0], "{s}:gone", mcSemKeys[1], "{s}:squeue", "{s}:swaiters", mcSemKeys[2], "{s}:soffers"}
	}
	if len(s.release.Keys) > 2 {
		return []string{mcSemKeys[0], "{s}:gone", mcSemKeys[1], "{s}:squeue", "{s}:swaiters"}
	}
	if len(s.release.Keys) > 1 {
		return []string{mcSemKeys[0], "{s}:gone"}
	}
	return mcSemKeys[:1]
}

func mcSemClient(name string, s semScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		// Version 5 queues a waiter (waiter TTL, its client, the wake-up prefix).
		{Label: "acquire", Script: s.acquire, Keys: s.keys(),
			Args: mcFit(s.acquire, name, 1, mcTTL.Milliseconds(), 2, name+"-attempt", mcWaitTTL.Milliseconds(), name, "{s}:grant:", "PUBLISH"),
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

func TestModelSemaphore(t *testing.T) {
	get := mcScripts(t)
	s := semScripts{acquire: get("sem.acquire@1"), release: get("sem.release@1")}
	explore.Check(t, mcSemModel("semaphore of 2 permits, 3 clients", s))

	broken := s
	broken.acquire = mcBreak(t, s.acquire, "if used + count > limit then", "if used + count > limit + 1 then")
	mcMustFail(t, mcSemModel("semaphore, off by one", broken), "at most 2 holders")
}

// --- multi-lock -----------------------------------------------------------------

// mcMultiClient takes two locks of one slot at once with multi.acquire,
// then releases them one by one with mutex.release.
func mcMultiClient(name string, acquire, release *registry.Script, a, b string, v2 bool) explore.Actor {
	keys := []string{a, a + ":fence", b, b + ":fence"}
	if acquire.Keys[0] == "gone" {
		// version 3: the gone key, then lock, readers, permits per lock
		keys = []string{a + ":gone", a, a + ":readers", a + ":permits", b, b + ":readers", b + ":permits"}
	}
	releaseOf := func(lock string) explore.Step {
		if v2 {
			return explore.Step{Label: "release " + lock, Script: release, Keys: mcKeysOf(release, lock), Args: mcV2ReleaseArgs(release, name, "")}
		}
		return explore.Step{Label: "release " + lock, Script: release, Keys: []string{lock}, Args: []any{name, "{g}:released"}}
	}
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: acquire, Keys: keys, Args: mcFit(acquire, name, mcTTL.Milliseconds(), "", name+"-attempt"),
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

func mcMultiModel(name string, acquire, release *registry.Script, v2 bool) *explore.Model {
	return &explore.Model{
		Name: name,
		// x and y share lock b.
		Actors: []explore.Actor{
			mcMultiClient("x", acquire, release, "{g}:a", "{g}:b", v2),
			mcMultiClient("y", acquire, release, "{g}:b", "{g}:c", v2),
		},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

func TestModelMultiLock(t *testing.T) {
	get := mcScripts(t)
	explore.Check(t, mcMultiModel("multi-lock, two clients sharing one lock", get("multi.acquire@1"), get("mutex.release@1"), false))

	broken := mcBreak(t, get("multi.acquire@1"), "for i = 1, #KEYS, 2 do\n  if", "for i = 1, #KEYS - 2, 2 do\n  if")
	mcMustFail(t, mcMultiModel("multi-lock, last lock unchecked", broken, get("mutex.release@1"), false), "mutual exclusion")
}

// --- rw lock, semaphore and multi-lock, version 2 ------------------------------

func TestModelRWMutexV2(t *testing.T) {
	// Version 4 is the set the client runs: rw.rlock@3 with rw.runlock@4,
	// rw.lock@4 and rw.unlock@1.
	for _, version := range [][4]string{
		{"2", "rw.rlock@2", "rw.runlock@2", "rw.lock@2"},
		{"3", "rw.rlock@3", "rw.runlock@3", "rw.lock@3"},
		{"4", "rw.rlock@3", "rw.runlock@4", "rw.lock@4"},
	} {
		unlock := "mutex.release@5"
		if version[0] == "4" {
			unlock = "rw.unlock@1"
		}
		v := mcV2Lookup(t, version[1], version[2], version[3], unlock)
		s := rwScripts{rlock: v[0], runlock: v[1], wlock: v[2], wunlock: v[3], v2: true}
		res := explore.Check(t, mcRWModel("rw lock@"+version[0]+", 2 readers + 1 writer", s))
		if res != nil && res.States < 1000 {
			t.Fatalf("rw lock@%s: only %d states: the model explores too little to mean anything", version[0], res.States)
		}

		broken := s
		broken.rlock = mcBreak(t, s.rlock, "if holder and holder ~= owner then", "if false then")
		mcMustFail(t, mcRWModel("rw lock@"+version[0]+", rlock ignores the writer", broken), "server: no writer with live readers")
		broken = s
		broken.wlock = mcBreak(t, s.wlock, "if not holder and others == 0 then", "if not holder then")
		mcMustFail(t, mcRWModel("rw lock@"+version[0]+", writer ignores readers", broken), "server: no writer with live readers")
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

// A rolling deploy: a writer of the release before (rw.lock@3, released by
// mutex.release@5) and one of this release (rw.lock@4, rw.unlock@1) beside
// a reader of this release. Exclusion holds across the versions; only who
// is woken differs, and the model does not depend on wake-ups.
func mcRWMixedModel(name string, v3, v4 rwScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcReader("r", v4), mcWriter("old", v3), mcWriter("w", v4)},
		Invariants: []explore.Invariant{mcRWServer, mcRWWritersAlone("old", "w")},
		Unobserved: []string{"{m}:fence"},
		Progress:   []explore.Progress{{Name: "a writer gets in", Actor: mcWriter("late-writer", v4), Within: 4}},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

func TestModelRWMutexMixedV3V4(t *testing.T) {
	v := mcV2Lookup(t, "rw.rlock@3", "rw.runlock@3", "rw.lock@3", "mutex.release@5", "rw.runlock@4", "rw.lock@4", "rw.unlock@1")
	v3 := rwScripts{rlock: v[0], runlock: v[1], wlock: v[2], wunlock: v[3], v2: true}
	v4 := rwScripts{rlock: v[0], runlock: v[4], wlock: v[5], wunlock: v[6], v2: true}
	res := explore.Check(t, mcRWMixedModel("rw lock@3 and @4 writers side by side", v3, v4))
	if res != nil && res.States < 1000 {
		t.Fatalf("only %d states: the model explores too little to mean anything", res.States)
	}

	broken := v4
	broken.wunlock = mcBreak(t, v4.wunlock, "if holder ~= owner then", "if false then")
	mcMustFail(t, mcRWMixedModel("rw.unlock@1 drops another writer's hold", v3, broken), "beliefs: writers hold alone")
	broken = v4
	broken.wlock = mcBreak(t, v4.wlock, "if not holder and others == 0 then", "if others == 0 then")
	mcMustFail(t, mcRWMixedModel("rw.lock@4 ignores the version-3 writer", v3, broken), "beliefs: writers hold alone")
}

func TestModelSemaphoreV2(t *testing.T) {
	for _, version := range [][2]string{{"3", "2"}, {"4", "3"}, {"5", "4"}} {
		v := mcV2Lookup(t, "sem.acquire@"+version[0], "sem.release@"+version[1])
		s := semScripts{acquire: v[0], release: v[1], v2: true}
		explore.Check(t, mcSemModel("semaphore@"+version[0]+" of 2 permits, 3 clients", s))

		broken := s
		if version[0] == "5" {
			broken.acquire = mcBreak(t, s.acquire, "local owed, fits, i = 0, used + count <= limit, 0",
				"local owed, fits, i = 0, used + count <= limit + 1, 0")
		} else {
			broken.acquire = mcBreak(t, s.acquire, "if used + count > limit then", "if used + count > limit + 1 then")
		}
		mcMustFail(t, mcSemModel("semaphore@"+version[0]+", off by one", broken), "at most 2 holders")
	}

	// A mixed deploy: clients of version 4 do not queue and may take permits
	// ahead of queued waiters of version 5, but never more than the count.
	v := mcV2Lookup(t, "sem.acquire@4", "sem.release@3", "sem.acquire@5", "sem.release@4")
	v4, v5 := semScripts{acquire: v[0], release: v[1], v2: true}, semScripts{acquire: v[2], release: v[3], v2: true}
	mixed := mcSemModel("semaphore@4 and @5 side by side, 2 permits", v5)
	mixed.Actors[1] = mcSemClient("b", v4)
	explore.Check(t, mixed)
}

// mcSemGrantClient is a Semaphore call of version 6: it queues, then
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

// mcSemGrantModel: 4 calls of version 6 on 2 permits, so that a release
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

// Version 6 hands permits over in the release (sem.release@5): no more
// holders than permits, with the grant believed from the message, and
// beside a version-5 client that is only woken.
func TestModelSemaphoreGrant(t *testing.T) {
	v := mcV2Lookup(t, "sem.acquire@6", "sem.release@5", "sem.acquire@5", "sem.release@4")
	v6, v5 := semScripts{acquire: v[0], release: v[1], v2: true}, semScripts{acquire: v[2], release: v[3], v2: true}
	explore.Check(t, mcSemGrantModel("semaphore@6 of 2 permits, 4 clients, grants", v6))

	mixed := mcSemGrantModel("semaphore@6 beside a version-5 client, 2 permits", v6)
	mixed.Actors[1] = mcSemClient("b", v5)
	explore.Check(t, mixed)

	broken := v6
	broken.release = mcBreak(t, v6.release, "elseif used + reserved + n > its_limit then", "elseif false then")
	mcMustFail(t, mcSemGrantModel("semaphore@6, a release grants what does not fit", broken), "at most 2 holders")

	broken = v6
	broken.acquire = mcBreak(t, v6.acquire, "if not redis.call('ZSCORE', queue, owner) and redis.call('ZSCORE', permits, owner .. ':1') then",
		"if not redis.call('ZSCORE', queue, owner) then")
	mcMustFail(t, mcSemGrantModel("semaphore@6, a caller claims permits no one handed it", broken), "at most 2 holders")
}

func TestModelMultiLockV2(t *testing.T) {
	v := mcV2Lookup(t, "multi.acquire@2", "mutex.release@4")
	explore.Check(t, mcMultiModel("multi-lock@2, two clients sharing one lock", v[0], v[1], true))

	broken := mcBreak(t, v[0], "for i = 1, #KEYS, 2 do\n  if", "for i = 1, #KEYS - 2, 2 do\n  if")
	mcMustFail(t, mcMultiModel("multi-lock@2, last lock unchecked", broken, v[1], true), "mutual exclusion")

	v = mcV2Lookup(t, "multi.acquire@3", "mutex.release@5")
	explore.Check(t, mcMultiModel("multi-lock@3, two clients sharing one lock", v[0], v[1], true))

	broken = mcBreak(t, v[0], "  if held[1] then", "  if held[1] and i < #KEYS - 2 then")
	mcMustFail(t, mcMultiModel("multi-lock@3, last lock unchecked", broken, v[1], true), "mutual exclusion")
}
