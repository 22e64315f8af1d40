package locks_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// The lock scripts of lua/, model checked with package explore: every
// interleaving of a few clients calling them as the locks package does
// (same KEYS order and ARGV), with leases running out (clock ticks), and
// for the replica-acknowledged mutex a primary crash and promotion. Each
// model also runs on a copy of one script with one condition broken, and
// must then fail: that is what shows the model checks something.
//
// Bounds are in each model (steps per actor, ticks); docs/modelcheck.md
// lists them with the number of states.

const (
	mcTTL     = 100 * time.Millisecond
	mcWaitTTL = 30 * time.Millisecond // the rw lock's waiting writers' lease
	// The fair queue's waiter lease is longer than the lock's, so that a
	// waiter can outlive a holder's lease without refreshing: the clock only
	// stops at deadlines, and this puts "lock free, waiter still queued"
	// within two ticks, where barging would show.
	mcFairWaitTTL = 150 * time.Millisecond
)

var (
	mcMutexKeys = []string{"{m}", "{m}:fence"}
	mcFairKeys  = []string{"{m}", "{m}:fence", "{m}:queue", "{m}:waiters"}
	mcRWKeys    = []string{"{m}", "{m}:readers", "{m}:rholds", "{m}:wwait", "{m}:fence"}
	mcSemKeys   = []string{"{s}:permits", "{s}:limit", "{s}:fence"}
)

// mcScripts returns the repository's scripts by "name@version".
func mcScripts(t testing.TB) func(id string) *registry.Script {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	return func(id string) *registry.Script {
		s, err := reg.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// mcBreak returns a copy of s with the first occurrence of from replaced
// by to (one condition changed), failing the test if from is absent.
func mcBreak(t testing.TB, s *registry.Script, from, to string) *registry.Script {
	t.Helper()
	if !strings.Contains(s.Source, from) {
		t.Fatalf("%s no longer contains %q; update the mutation", s.ID(), from)
	}
	b, err := registry.ParseScript(s.ID()+".broken.lua", []byte(strings.Replace(s.Source, from, to, 1)))
	if err != nil || b.SHA1 == s.SHA1 {
		t.Fatalf("could not break %s: %v", s.ID(), err)
	}
	return b
}

// mcMustFail explores m and fails the test unless a property is violated.
func mcMustFail(t *testing.T, m *explore.Model, property string) {
	t.Helper()
	res, err := explore.Run(m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Violation == nil {
		t.Fatalf("the broken copy passed: %s", res)
	}
	if res.Violation.Property != property {
		t.Fatalf("the broken copy failed %q, want %q:\n%s", res.Violation.Property, property, res.Violation)
	}
	t.Logf("the broken copy fails as it should: a %d-step trace (%d states)", len(res.Violation.Trace), res.States)
}

// mcTaken reports whether a script's reply says "taken" ({1, ...}).
func mcTaken(c *explore.Ctx) bool { return c.Int() == 1 }

// --- mutex -----------------------------------------------------------------

type mutexScripts struct{ acquire, release *registry.Script }

// mcMutexClient takes the mutex (reentrant: twice) and releases it as many
// times, then starts over; "holds" counts the holds it believes it has.
func mcMutexClient(name string, s mutexScripts, reentrant bool) explore.Actor {
	re := "0"
	if reentrant {
		re = "1"
	}
	acquire := func(label, next string) explore.Step {
		return explore.Step{Label: label, Script: s.acquire, Keys: mcMutexKeys, Args: []any{name, mcTTL.Milliseconds(), re, ""},
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				c.Acquire(mcTTL)
				c.SetVar("holds", c.Elem(2))
				c.SetVar("token", c.Elem(1))
				return next
			}}
	}
	release := func(label string) explore.Step {
		return explore.Step{Label: label, Script: s.release, Keys: mcMutexKeys[:1], Args: []any{name, "{m}:released"},
			Then: func(c *explore.Ctx) string {
				// 1 or 2: this hold is given back; the client still has the
				// others it took (each is its own Lease in the locks package).
				if n := c.Int(); n == 1 || n == 2 {
					c.SetVar("holds", c.Var("holds")-1)
					if c.Var("holds") > 0 {
						return "release"
					}
				}
				c.Release()
				c.SetVar("holds", 0)
				return "acquire"
			}}
	}
	steps := []explore.Step{acquire("acquire", "release"), release("release")}
	if reentrant {
		steps = []explore.Step{acquire("acquire", "reenter"), acquire("reenter", "release"), release("release")}
	}
	return explore.Actor{Name: name, Steps: steps, Vars: []string{"holds", "token"}}
}

// mcHoldCount: an actor that believes it holds the lock has exactly the
// holds it counted on the server.
var mcHoldCount = explore.Invariant{Name: "hold count", Check: func(v *explore.View) error {
	d, ok := v.Key("{m}")
	for _, name := range v.Holders() {
		if !ok {
			return fmt.Errorf("%s believes it holds the lock but the server has none", name)
		}
		h := d.Value.(map[string]string)
		if h["owner"] != name || h["count"] != fmt.Sprint(v.Var(name, "holds")) {
			return fmt.Errorf("%s believes it has %d holds, the server says owner %s count %s", name, v.Var(name, "holds"), h["owner"], h["count"])
		}
	}
	return nil
}}

// mcFencing: a holder's fencing token is the one the lock carries, and
// every token another actor was given earlier is smaller (tokens only
// grow, so a resource that checks them refuses the older holder).
var mcFencing = explore.Invariant{Name: "fencing token", Check: func(v *explore.View) error {
	for _, h := range v.Holders() {
		token := v.Var(h, "token")
		if d, ok := v.Key("{m}"); ok && d.Value.(map[string]string)["fence"] != fmt.Sprint(token) {
			return fmt.Errorf("%s holds token %d, the lock carries %s", h, token, d.Value.(map[string]string)["fence"])
		}
		for _, other := range []string{"a", "b"} {
			if t := v.Var(other, "token"); other != h && t != 0 && t >= token {
				return fmt.Errorf("%s holds token %d, but %s was given %d before it", h, token, other, t)
			}
		}
	}
	return nil
}}

func mcMutexModel(name string, s mutexScripts, reentrant bool) *explore.Model {
	invariants := []explore.Invariant{explore.MutualExclusion(), mcFencing}
	if reentrant {
		invariants = append(invariants, mcHoldCount)
	}
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcMutexClient("a", s, reentrant), mcMutexClient("b", s, reentrant)},
		Invariants: invariants,
		Progress:   []explore.Progress{{Name: "a crashed holder does not block", Actor: mcMutexClient("late", s, false), Within: 3}},
		Bounds:     explore.Bounds{MaxSteps: 5, MaxTicks: 2},
	}
}

func TestModelMutex(t *testing.T) {
	get := mcScripts(t)
	s := mutexScripts{acquire: get("mutex.acquire@1"), release: get("mutex.release@1")}
	explore.Check(t, mcMutexModel("mutex", s, false))

	broken := s
	broken.acquire = mcBreak(t, s.acquire, "if not holder then", "if true then")
	mcMustFail(t, mcMutexModel("mutex, acquire ignores the holder", broken, false), "mutual exclusion")
	broken = s
	broken.release = mcBreak(t, s.release, "if holder ~= owner then", "if false then")
	mcMustFail(t, mcMutexModel("mutex, release ignores the owner", broken, false), "mutual exclusion")
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "local token = redis.call('INCR', fence)", "local token = redis.call('INCRBY', fence, 0) + 1")
	mcMustFail(t, mcMutexModel("mutex, stale fencing token", broken, false), "fencing token")
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "redis.call('PEXPIRE', lock, ttl)", "-- no lease")
	mcMustFail(t, mcMutexModel("mutex without a lease", broken, false), "a crashed holder does not block")
}

func TestModelMutexReentrant(t *testing.T) {
	get := mcScripts(t)
	s := mutexScripts{acquire: get("mutex.acquire@1"), release: get("mutex.release@1")}
	explore.Check(t, mcMutexModel("reentrant mutex", s, true))

	broken := s
	broken.release = mcBreak(t, s.release, "'count', -1) > 0 then", "'count', -1) > 1 then")
	mcMustFail(t, mcMutexModel("reentrant mutex, first release frees", broken, true), "hold count")
}

// --- replica-acknowledged mutex ---------------------------------------------

// mcAckedClient takes the mutex, then sends WAIT 1 (as the locks package
// sends it in the acquire's pipeline) and believes it holds the lock only
// when a replica acknowledged; its lease runs from the acquire request.
func mcAckedClient(name string, s mutexScripts, waitForReplica bool) explore.Actor {
	return explore.Actor{Name: name, Vars: []string{"sent"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcMutexKeys, Args: []any{name, mcTTL.Milliseconds(), "0", ""},
			Then: func(c *explore.Ctx) string {
				c.SetVar("sent", c.Now().Milliseconds())
				switch {
				case !mcTaken(c):
					return "acquire"
				case !waitForReplica:
					c.Acquire(mcTTL)
					return "release"
				}
				return "wait"
			}},
		{Label: "wait", Command: []any{"WAIT", 1, 50}, Then: func(c *explore.Ctx) string {
			if c.Int() >= 1 {
				c.AcquireUntil(time.Duration(c.Var("sent"))*time.Millisecond + mcTTL)
			}
			return "release" // release either way: unacknowledged, it must not be used
		}},
		{Label: "release", Script: s.release, Keys: mcMutexKeys[:1], Args: []any{name, "{m}:released"},
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

func mcAckedModel(name string, s mutexScripts, waitForReplica bool) *explore.Model {
	return &explore.Model{
		Name:       name,
		Replica:    true,
		Actors:     []explore.Actor{mcAckedClient("a", s, waitForReplica), mcAckedClient("b", s, waitForReplica)},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 1, MaxFailovers: 1},
	}
}

func TestModelMutexReplicaAcknowledged(t *testing.T) {
	get := mcScripts(t)
	s := mutexScripts{acquire: get("mutex.acquire@1"), release: get("mutex.release@1")}
	explore.Check(t, mcAckedModel("mutex + WAIT 1 on primary+replica", s, true))
	// Broken: believing the grant before the replica has it.
	mcMustFail(t, mcAckedModel("mutex without WAIT on primary+replica", s, false), "mutual exclusion")
}

// --- fair mutex --------------------------------------------------------------

type fairScripts struct{ acquire, release *registry.Script }

// mcFairClient calls fair.acquire until it holds (each call also refreshes
// its place in the queue), then releases, which may hand the lock to the
// next live waiter; that waiter learns it on its next call.
func mcFairClient(name string, s fairScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcFairKeys, Args: []any{name, mcTTL.Milliseconds(), mcFairWaitTTL.Milliseconds(), "0", ""},
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				c.Acquire(mcTTL)
				return "release"
			}},
		{Label: "release", Script: s.release, Keys: mcFairKeys, Args: []any{name, "{m}:released"},
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

// mcFairOrder: the owner of the lock (taken or handed over) has left the
// queue, so it cannot be handed the lock a second time.
var mcFairOrder = explore.Invariant{Name: "holder not queued", Check: func(v *explore.View) error {
	lock, ok := v.Key("{m}")
	if !ok {
		return nil
	}
	q, ok := v.Key("{m}:queue")
	if !ok {
		return nil
	}
	owner := lock.Value.(map[string]string)["owner"]
	for _, z := range q.Value.([]simulate.ZMember) {
		if z.Member == owner {
			return fmt.Errorf("%s holds the lock and is still queued", owner)
		}
	}
	return nil
}}

// mcFairFIFO: whenever the lock gets a new owner (taken, or handed over
// by a release), that owner is the first waiter in the queue whose waiter
// lease is still live; with no live waiter, anyone may take it.
var mcFairFIFO = explore.Invariant{Name: "first come, first served", Step: func(before, after *explore.View) error {
	owner := func(v *explore.View) string {
		if d, ok := v.Key("{m}"); ok {
			return d.Value.(map[string]string)["owner"]
		}
		return ""
	}
	next := owner(after)
	if next == "" || next == owner(before) {
		return nil
	}
	q, ok := before.Key("{m}:queue")
	if !ok {
		return nil
	}
	waiters := map[string]string{}
	if w, ok := before.Key("{m}:waiters"); ok {
		waiters = w.Value.(map[string]string)
	}
	now := 1_700_000_000_000 + after.Now().Milliseconds()
	for _, z := range q.Value.([]simulate.ZMember) { // in arrival order
		var deadline int64
		fmt.Sscan(waiters[z.Member], &deadline)
		if deadline <= now {
			continue // its waiter lease ran out: it may be passed over
		}
		if z.Member != next {
			return fmt.Errorf("the lock went to %s while %s waited ahead of it", next, z.Member)
		}
		return nil
	}
	return nil
}}

// mcWaiterDeadlines lets the clock stop when a waiter's lease runs out:
// fair.acquire keeps those deadlines in the waiters hash.
func mcWaiterDeadlines(v *explore.View) []time.Duration {
	w, ok := v.Key("{m}:waiters")
	if !ok {
		return nil
	}
	var out []time.Duration
	for _, entry := range w.Value.(map[string]string) {
		var deadline int64
		if _, err := fmt.Sscan(entry, &deadline); err == nil {
			out = append(out, time.Duration(deadline-1_700_000_000_000)*time.Millisecond)
		}
	}
	return out
}

func mcFairModel(name string, s fairScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcFairClient("a", s), mcFairClient("b", s), mcFairClient("c", s)},
		Invariants: []explore.Invariant{explore.MutualExclusion(), mcFairOrder, mcFairFIFO},
		Deadlines:  mcWaiterDeadlines,
		Unobserved: []string{"{m}:fence"},
		Progress:   []explore.Progress{{Name: "dead holders and waiters do not block", Actor: mcFairClient("late", s), Within: 6}},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
	}
}

func TestModelFairMutex(t *testing.T) {
	get := mcScripts(t)
	s := fairScripts{acquire: get("fair.acquire@1"), release: get("fair.release@1")}
	explore.Check(t, mcFairModel("fair mutex", s))

	broken := s
	broken.release = mcBreak(t, s.release, "if holder ~= owner then", "if false then")
	mcMustFail(t, mcFairModel("fair mutex, release ignores the owner", broken), "mutual exclusion")
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "if head == nil or head == owner then", "if true then")
	mcMustFail(t, mcFairModel("fair mutex, newcomers barge in", broken), "first come, first served")
	broken = s
	broken.release = mcBreak(t, s.release, "if tonumber(deadline) > now then", "if true then")
	mcMustFail(t, mcFairModel("fair mutex, hands over to dead waiters", broken), "first come, first served")
}

// --- read-write lock ----------------------------------------------------------

type rwScripts struct {
	rlock, runlock, wlock, wunlock *registry.Script
	v2                             bool // version 2's keys and arguments
}

// keys is what rw.rlock and rw.lock take (version 2 adds the permits key,
// to refuse a name a semaphore holds).
func (s rwScripts) keys() []string {
	if s.v2 {
		return append(append([]string(nil), mcRWKeys...), "{m}:permits")
	}
	return mcRWKeys
}

func (s rwScripts) runlockArgs(name string) []any {
	if s.v2 {
		return []any{name, "{m}:released", "PUBLISH"}
	}
	return []any{name, "{m}:released"}
}

// unlock is the writer's release: mutex.release, with version 2's keys
// and arguments when the scripts are version 2.
func (s rwScripts) unlock(name string) explore.Step {
	st := explore.Step{Label: "unlock", Script: s.wunlock, Keys: mcRWKeys[:1], Args: []any{name, "{m}:released"}}
	if s.v2 {
		st.Keys, st.Args = mcKeysOf(s.wunlock, "{m}"), mcV2ReleaseArgs(name)
	}
	return st
}

func mcReader(name string, s rwScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "rlock", Script: s.rlock, Keys: s.keys(), Args: []any{name, mcTTL.Milliseconds(), "1"},
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "rlock"
				}
				c.Acquire(mcTTL)
				return "runlock"
			}},
		{Label: "runlock", Script: s.runlock, Keys: mcRWKeys[1:3], Args: s.runlockArgs(name),
			Then: func(c *explore.Ctx) string { c.Release(); return "rlock" }},
	}}
}

func mcWriter(name string, s rwScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "lock", Script: s.wlock, Keys: s.keys(), Args: []any{name, mcTTL.Milliseconds(), mcWaitTTL.Milliseconds(), ""},
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
		return append(append([]string(nil), mcSemKeys...), "{s}", "{s}:readers")
	}
	return mcSemKeys
}

func (s semScripts) releaseArgs(name string) []any {
	if s.v2 {
		return []any{name, 1, "{s}:released", "PUBLISH"}
	}
	return []any{name, 1, "{s}:released"}
}

func mcSemClient(name string, s semScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: s.keys(), Args: []any{name, 1, mcTTL.Milliseconds(), 2},
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				c.Acquire(mcTTL)
				return "release"
			}},
		{Label: "release", Script: s.release, Keys: mcSemKeys[:1], Args: s.releaseArgs(name),
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
	releaseOf := func(lock string) explore.Step {
		if v2 {
			return explore.Step{Label: "release " + lock, Script: release, Keys: mcKeysOf(release, lock), Args: mcV2ReleaseArgs(name)}
		}
		return explore.Step{Label: "release " + lock, Script: release, Keys: []string{lock}, Args: []any{name, "{g}:released"}}
	}
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: acquire, Keys: keys, Args: []any{name, mcTTL.Milliseconds(), ""},
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

// --- mutex, version 2 -----------------------------------------------------------

// Version 2 of mutex.acquire/release queues waiters in Redis in every mode,
// hands the lock over inside the release, and undoes acquisitions whose
// caller gave up. These models run once lua/ has version 2 (the lead adds
// it in parallel); until then they skip, saying so.

// mcKeysOf is a script's KEYS for the lock under key lock, from the names
// its header declares ("lock" is the lock itself, any other name a key
// beside it), as the locks package builds them. Versions 2 and 3 of the
// mutex scripts differ in their keys; the models run both.
func mcKeysOf(s *registry.Script, lock string) []string {
	keys := make([]string, len(s.Keys))
	for i, name := range s.Keys {
		keys[i] = lock
		if name != "lock" {
			keys[i] = lock + ":" + name
		}
	}
	return keys
}

// mcV2ReleaseArgs is mutex.release@2's ARGV for an Unlock (no attempt to undo).
func mcV2ReleaseArgs(owner string) []any {
	return []any{owner, "{m}:released", "{m}:grant:", "PUBLISH", "", 2 * mcFairWaitTTL.Milliseconds()}
}

// withThen returns st with its Then set.
func withThen(st explore.Step, then func(*explore.Ctx) string) explore.Step {
	st.Then = then
	return st
}

// mcV2Lookup returns the scripts by ID, skipping the test while lua/ has
// no version 2 yet.
func mcV2Lookup(t *testing.T, ids ...string) []*registry.Script {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*registry.Script, len(ids))
	for i, id := range ids {
		if out[i], err = reg.Lookup(id); err != nil {
			t.Skipf("%s is not in lua/ yet: %v", id, err)
		}
	}
	return out
}

// mcQueueVersions are the versions of the queueing mutex scripts
// (mutex.acquire and mutex.release from version 2 on) the models check.
var mcQueueVersions = []string{"2", "3"}

func mcV2Scripts(t *testing.T, version string) mutexScripts {
	v := mcV2Lookup(t, "mutex.acquire@"+version, "mutex.release@"+version)
	return mutexScripts{acquire: v[0], release: v[1]}
}

// mcV2Client locks (queueing, as Lock does) with one attempt id per round,
// then unlocks; a waiter the release handed the lock to claims it on its
// next call.
func mcV2Client(name string, s mutexScripts, fair bool) explore.Actor {
	return explore.Actor{Name: name, Vars: []string{"round", "token", "freed"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"), Call: func(c *explore.Ctx) []any {
			return []any{name, mcTTL.Milliseconds(), "0", "", mcFairWaitTTL.Milliseconds(), boolFlag(fair), "client-" + name, fmt.Sprintf("%s-%d", name, c.Var("round"))}
		}, Then: func(c *explore.Ctx) string {
			c.SetVar("freed", 0)
			if !mcTaken(c) {
				return "acquire"
			}
			c.Acquire(mcTTL)
			c.SetVar("token", c.Elem(1))
			return "release"
		}},
		{Label: "release", Script: s.release, Keys: mcKeysOf(s.release, "{m}"), Args: []any{name, "{m}:released", "{m}:grant:", "PUBLISH", "", 2 * mcFairWaitTTL.Milliseconds()},
			Then: func(c *explore.Ctx) string {
				c.Release()
				c.SetVar("round", c.Var("round")+1)
				if c.Int() == 1 {
					c.SetVar("freed", c.Now().Milliseconds()+1) // when, plus one: 0 means "not freed"
				}
				return "acquire"
			}},
	}}
}

func boolFlag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// mcHandOver: a release that frees the lock (reply 1) leaves no live
// waiter behind a free lock: it hands the lock to the oldest live one
// (reply 3) instead. mcV2Client records the reply of its last release in
// "freed" (the time, plus one) until its next acquire; a lock freed later
// by its lease running out is not the release's doing.
var mcHandOver = explore.Invariant{Name: "a release hands over to a live waiter", Check: func(v *explore.View) error {
	if l, ok := v.Key("{m}"); ok && l.Value.(map[string]string)["owner"] != "" {
		return nil // taken since
	}
	for _, who := range []string{"a", "b", "c"} {
		if v.Var(who, "freed") != v.Now().Milliseconds()+1 {
			continue
		}
		w, ok := v.Key("{m}:waiters")
		if !ok {
			return nil
		}
		now := 1_700_000_000_000 + v.Now().Milliseconds()
		for waiter, entry := range w.Value.(map[string]string) {
			var deadline int64
			if _, err := fmt.Sscanf(entry, "%d", &deadline); err == nil && deadline > now {
				return fmt.Errorf("%s's release freed the lock while %s waits (entry %q)", who, waiter, entry)
			}
		}
	}
	return nil
}}

// mcV2Fencing: tokens only grow from holder to holder.
var mcV2Fencing = explore.Invariant{Name: "fencing token", Check: func(v *explore.View) error {
	for _, h := range v.Holders() {
		for _, other := range []string{"a", "b", "c"} {
			if t := v.Var(other, "token"); other != h && t != 0 && t >= v.Var(h, "token") {
				return fmt.Errorf("%s holds token %d, but %s was given %d before it", h, v.Var(h, "token"), other, t)
			}
		}
	}
	return nil
}}

func mcV2Model(name string, s mutexScripts, fair bool) *explore.Model {
	invariants := []explore.Invariant{explore.MutualExclusion(), mcV2Fencing, mcFairOrder}
	if fair {
		invariants = append(invariants, mcFairFIFO)
	}
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcV2Client("a", s, fair), mcV2Client("b", s, fair), mcV2Client("c", s, fair)},
		Invariants: invariants,
		Deadlines:  mcWaiterDeadlines,
		Progress:   []explore.Progress{{Name: "dead holders and waiters do not block", Actor: mcV2Client("late", s, fair), Within: 4}},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
	}
}

func TestModelMutexV2(t *testing.T) {
	for _, version := range mcQueueVersions {
		s := mcV2Scripts(t, version)
		name := "mutex@" + version
		explore.Check(t, mcV2Model(name, s, false))
		explore.Check(t, mcV2Model(name+", fair", s, true))

		broken := s
		broken.release = mcBreak(t, s.release, "if holder ~= owner then", "if false then")
		mcMustFail(t, mcV2Model(name+", release ignores the owner", broken, false), "mutual exclusion")
		broken = s
		broken.acquire = mcBreak(t, s.acquire, "if fair == '1' then", "if false then")
		mcMustFail(t, mcV2Model(name+" fair, newcomers barge in", broken, true), "first come, first served")
	}
	// Version 3 keeps the last token in the released lock's hash; without
	// it, a grant in the same microsecond (the model's clock stands still
	// between steps) repeats the token.
	s := mcV2Scripts(t, "3")
	s.release = mcBreak(t, s.release, "redis.call('HDEL', lock, 'owner', 'count', 'meta', 'kind', 'attempt', 'granted', 'waiting')", "redis.call('DEL', lock)")
	mcMustFail(t, mcV2Model("mutex@3, release forgets the last token", s, false), "fencing token")
	// Version 3's release skips the queue unless a waiter marked the hash;
	// a waiter that was not marked is served only by its own refresh.
	s = mcV2Scripts(t, "3")
	m := mcV2Model("mutex@3", s, false)
	m.Invariants = append(m.Invariants, mcHandOver)
	explore.Check(t, m)
	s.acquire = mcBreak(t, s.acquire, "redis.call('HSET', lock, 'waiting', '1')", "redis.call('HSET', lock, 'waiting', '0')")
	m = mcV2Model("mutex@3, waiters never marked", s, false)
	m.Invariants = append(m.Invariants, mcHandOver)
	mcMustFail(t, m, "a release hands over to a live waiter")
}

// A client whose Lock call failed with a timeout undoes the attempt
// (mutex.release@2 with its attempt id) while the attempt itself may still
// be on its way and reach the server later ("late"). Whatever the order,
// an abandoned attempt that arrives within gone_ttl of the give-up must
// not end up holding the lock or waiting for it. (One that arrives later
// still takes the lock, for one lease that no one believes in: the checker
// found that trace when the property had no time bound.)
func mcV2GiveUpModel(name string, s mutexScripts) *explore.Model {
	const attempt = "a-1"
	goneTTL := 2 * mcFairWaitTTL.Milliseconds() // as the locks package sets it: twice the longer lease
	late := explore.Actor{Name: "late", Steps: []explore.Step{
		{Label: "acquire arrives", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"),
			Args: []any{"a", mcTTL.Milliseconds(), "0", "", mcFairWaitTTL.Milliseconds(), "0", "client-a", attempt}},
	}}
	gaveUp := explore.Actor{Name: "a", Vars: []string{"gave-up", "at"}, Steps: []explore.Step{
		{Label: "give up", Script: s.release, Keys: mcKeysOf(s.release, "{m}"), Args: []any{"a", "{m}:released", "{m}:grant:", "PUBLISH", attempt, goneTTL},
			Then: func(c *explore.Ctx) string {
				c.SetVar("gave-up", 1)
				c.SetVar("at", c.Now().Milliseconds())
				return explore.End
			}},
	}}
	abandoned := explore.Invariant{Name: "abandoned attempts take nothing", Check: func(v *explore.View) error {
		if v.Var("a", "gave-up") == 0 || v.Now().Milliseconds() >= v.Var("a", "at")+goneTTL {
			return nil
		}
		if d, ok := v.Key("{m}"); ok && d.Value.(map[string]string)["owner"] == "a" {
			return fmt.Errorf("a gave up, yet the lock is held for a (%v)", d.Value)
		}
		if d, ok := v.Key("{m}:queue"); ok {
			for _, z := range d.Value.([]simulate.ZMember) {
				if z.Member == "a" {
					return fmt.Errorf("a gave up, yet it waits in the queue")
				}
			}
		}
		return nil
	}}
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{gaveUp, late, mcV2Client("b", s, false)},
		Invariants: []explore.Invariant{explore.MutualExclusion(), abandoned},
		Deadlines:  mcWaiterDeadlines,
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
	}
}

func TestModelMutexV2GiveUp(t *testing.T) {
	for _, version := range mcQueueVersions {
		s := mcV2Scripts(t, version)
		explore.Check(t, mcV2GiveUpModel("mutex@"+version+", a given-up attempt arriving late", s))

		broken := s
		broken.acquire = mcBreak(t, s.acquire, "if redis.call('HEXISTS', gone, attempt) == 1 then", "if false then")
		mcMustFail(t, mcV2GiveUpModel("mutex@"+version+", gone attempts not checked", broken), "abandoned attempts take nothing")
	}
}

// --- rw lock, semaphore and multi-lock, version 2 ------------------------------

func TestModelRWMutexV2(t *testing.T) {
	v := mcV2Lookup(t, "rw.rlock@2", "rw.runlock@2", "rw.lock@2", "mutex.release@3")
	s := rwScripts{rlock: v[0], runlock: v[1], wlock: v[2], wunlock: v[3], v2: true}
	explore.Check(t, mcRWModel("rw lock@2, 2 readers + 1 writer", s))

	broken := s
	broken.rlock = mcBreak(t, s.rlock, "if holder and holder ~= owner then", "if false then")
	mcMustFail(t, mcRWModel("rw lock@2, rlock ignores the writer", broken), "server: no writer with live readers")
}

func TestModelSemaphoreV2(t *testing.T) {
	v := mcV2Lookup(t, "sem.acquire@3", "sem.release@2")
	s := semScripts{acquire: v[0], release: v[1], v2: true}
	explore.Check(t, mcSemModel("semaphore@2 of 2 permits, 3 clients", s))

	broken := s
	broken.acquire = mcBreak(t, s.acquire, "if used + count > limit then", "if used + count > limit + 1 then")
	mcMustFail(t, mcSemModel("semaphore@2, off by one", broken), "at most 2 holders")
}

func TestModelMultiLockV2(t *testing.T) {
	v := mcV2Lookup(t, "multi.acquire@2", "mutex.release@3")
	explore.Check(t, mcMultiModel("multi-lock@2, two clients sharing one lock", v[0], v[1], true))

	broken := mcBreak(t, v[0], "for i = 1, #KEYS, 2 do\n  if", "for i = 1, #KEYS - 2, 2 do\n  if")
	mcMustFail(t, mcMultiModel("multi-lock@2, last lock unchecked", broken, v[1], true), "mutual exclusion")
}
