package locks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/registry"
)

// Model checks of the Semaphore and MultiLock scripts (see model_test.go;
// the RWMutex's are in model_rwwake_test.go).

// --- semaphore ----------------------------------------------------------------

type semScripts struct{ acquire, release, undo *registry.Script }

// keys is what every sem script takes.
func (s semScripts) keys() []string { return []string{"{s}", "{s}:squeue", "{s}:sem"} }

// acquireArgs is an Acquire call's ARGV: owner (its token, and so its
// attempt id) asks for one permit of limit, queueing as a waiter.
func (s semScripts) acquireArgs(owner string, limit int) []any {
	return []any{owner, 1, mcTTL.Milliseconds(), limit, "client-" + owner + "\t" + owner + "\t{}",
		fmt.Sprintf("%d PUBLISH", mcWaitTTL.Milliseconds())}
}

func mcSemClient(name string, s semScripts) explore.Actor {
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: s.keys(), Args: s.acquireArgs(name, 2),
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				c.Acquire(mcTTL)
				return "release"
			}},
		{Label: "release", Script: s.release, Keys: s.keys(), Args: []any{name},
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

func TestModelSemaphore(t *testing.T) {
	v := mcV2Lookup(t, "sem.acquire@11", "sem.release@11")
	s := semScripts{acquire: v[0], release: v[1]}
	explore.Check(t, mcSemModel("semaphore of 2 permits, 3 clients", s))

	broken := s
	broken.acquire = mcBreak(t, s.acquire, "if not h and not got[3] and not rec and count <= limit then",
		"if not got[3] and not rec and count <= limit then")
	mcMustFail(t, mcSemModel("semaphore, the fast path ignores the holders", broken), "at most 2 holders")
}

// mcSemGrantClient is a Semaphore call: it queues, then
// learns of a hand-over from the grant message, without a round trip.
// "grant message" stands for that message, as mcGrantSeen does for the
// Mutex: a step that finds its record in the lock hash at any point while
// it is there. A call that finds none looks again (acquire), which also
// claims a grant made since.
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
		{Label: "acquire", Script: s.acquire, Keys: s.keys(), Args: s.acquireArgs(name, 2), Then: acquired},
		{Label: "grant message", Command: []any{"HGET", "{s}", "p:" + name},
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
		{Label: "release", Script: s.release, Keys: s.keys(), Args: []any{name},
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

// mcSemGrantModel: 4 calls on 2 permits, so that a release
// can find two waiters queued behind the other holder. The calls differ
// only by their names, which the scripts never compare but for equality
// (the queue orders by arrival, ties in the index by score alone matter):
// the search merges states that differ by a permutation of them.
func mcSemGrantModel(name string, s semScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcSemGrantClient("a", s), mcSemGrantClient("b", s), mcSemGrantClient("c", s), mcSemGrantClient("d", s)},
		Invariants: []explore.Invariant{explore.AtMostHolders(2)},
		Progress:   []explore.Progress{{Name: "crashed holders give their permits back", Actor: mcSemClient("late", s), Within: 3}},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2},
		Symmetric:  [][]string{{"a", "b", "c", "d"}},
	}
}

// mcSemMixedModel is mcSemGrantModel with b a client that looks again
// instead of hearing its grant: a, c and d stay interchangeable.
func mcSemMixedModel(name string, s semScripts) *explore.Model {
	m := mcSemGrantModel(name, s)
	m.Actors[1] = mcSemClient("b", s)
	m.Symmetric = [][]string{{"a", "c", "d"}}
	return m
}

// The release hands permits over (sem.release): no more holders than
// permits, with the grant believed from the message, and beside a client
// that only looks again.
func TestModelSemaphoreGrant(t *testing.T) {
	v := mcV2Lookup(t, "sem.acquire@11", "sem.release@11")
	s := semScripts{acquire: v[0], release: v[1]}
	// The two explorations are the package's largest and share nothing:
	// they run side by side. Each merges the states that differ by a
	// permutation of its interchangeable calls (Model.Symmetric: a, b, c
	// and d; a, c and d beside the client that looks again), a declaration
	// CheckSymmetry verifies first on two steps, where it explores every
	// state with its twins. The smaller instance gives each call two steps
	// instead of three: two holders, two queued waiters and a release that
	// hands over to one of them are still reachable, a second round of
	// each call is not. The full one (REDLUA_EXHAUSTIVE=1) gives three
	// steps and two clock ticks: 45,458 and 201,440 states up to symmetry,
	// standing for 1,022,065 and 1,172,124 states, in about half a minute
	// and 2 GB on two idle cores.
	steps := 2
	if mcExhaustive(t) {
		steps = 3
	}
	t.Run("explore", func(t *testing.T) {
		t.Run("grants", func(t *testing.T) {
			t.Parallel()
			m := mcSemGrantModel("semaphore of 2 permits, 4 clients, grants", s)
			small := *m
			small.Bounds.MaxSteps = 2
			explore.CheckSymmetry(t, &small)
			m.Bounds.MaxSteps = steps
			explore.Check(t, m)
		})
		t.Run("beside a client that looks again", func(t *testing.T) {
			t.Parallel()
			mixed := mcSemMixedModel("semaphore of 2 permits, grants beside a client that looks again", s)
			small := *mixed
			small.Bounds.MaxSteps = 2
			explore.CheckSymmetry(t, &small)
			mixed.Bounds.MaxSteps = steps
			explore.Check(t, mixed)
		})
	})

	broken := s
	broken.release = mcBreak(t, s.release, "    elseif n > its_limit - used then\n      break", "    elseif false then\n      break")
	mcMustFail(t, mcSemGrantModel("semaphore, a release grants what does not fit", broken), "at most 2 holders")

	broken = s
	broken.acquire = mcBreak(t, s.acquire, "    elseif n > its_limit - used then\n      blocked = true",
		"    elseif n > its_limit - used and who ~= owner then\n      blocked = true")
	mcMustFail(t, mcSemGrantModel("semaphore, a queued caller takes permits that do not fit", broken), "at most 2 holders")
}

func TestModelMultiLock(t *testing.T) {
	v := mcV2Lookup(t, "multi.acquire@6", mcMutexIDs[1])
	explore.Check(t, mcMultiModel("multi-lock, two clients sharing one lock", v[0], v[1]))

	broken := mcBreak(t, v[0], "  if v[1] then", "  if v[1] and i < #KEYS then")
	mcMustFail(t, mcMultiModel("multi-lock, last lock unchecked", broken, v[1]), "mutual exclusion")
}
