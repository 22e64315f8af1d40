package locks_test

import (
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/registry"
)

// Model checks of the Semaphore and MultiLock scripts (see model_test.go;
// the RWMutex's are in model_rwwake_test.go).

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
	// The gone key, then lock, readers and permits per lock.
	keys := []string{a + ":gone", a, a + ":readers", a + ":permits", b, b + ":readers", b + ":permits"}
	releaseOf := func(lock string) explore.Step {
		return explore.Step{Label: "release " + lock, Script: release, Keys: mcKeysOf(release, lock), Args: mcV2ReleaseArgs(release, name, "")}
	}
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: acquire, Keys: keys, Args: []any{name, mcTTL.Milliseconds(), "", name + "-attempt"},
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
	v := mcV2Lookup(t, "multi.acquire@3", "mutex.release@5")
	explore.Check(t, mcMultiModel("multi-lock, two clients sharing one lock", v[0], v[1]))

	broken := mcBreak(t, v[0], "  if held[1] then", "  if held[1] and i < #KEYS - 2 then")
	mcMustFail(t, mcMultiModel("multi-lock, last lock unchecked", broken, v[1]), "mutual exclusion")
}
