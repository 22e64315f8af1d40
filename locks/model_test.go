package locks_test

import (
	"fmt"
	"os"
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

// mcScripts returns the repository's scripts by "name@version".
// mcExhaustive says whether the largest explorations run at their full
// size. The plain go test runs a smaller instance of each, with the same
// scripts, invariants and broken copies, so that the README's test command
// fits a busy 2-core machine; REDLUA_EXHAUSTIVE=1, which CI sets, runs the
// full ones (several minutes and gigabytes of states).
func mcExhaustive(t *testing.T) bool {
	t.Helper()
	switch v := os.Getenv("REDLUA_EXHAUSTIVE"); v {
	case "1":
		return true
	case "", "0":
		t.Logf("a smaller instance of this exploration; REDLUA_EXHAUSTIVE=1 runs the full one, as CI does")
		return false
	default:
		t.Fatalf("REDLUA_EXHAUSTIVE=%q: want 1 (the full explorations) or 0/unset (smaller ones)", v)
		return false
	}
}

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

// mcBreak returns a copy of s with one condition changed (explore.Mutate).
func mcBreak(t testing.TB, s *registry.Script, from, to string) *registry.Script {
	t.Helper()
	return explore.Mutate(t, s, from, to)
}

// mcMustFail explores m and fails the test unless property is violated
// (explore.CheckFails).
func mcMustFail(t *testing.T, m *explore.Model, property string) {
	t.Helper()
	explore.CheckFails(t, m, property)
}

// mcTaken reports whether a script's reply says "taken": {1, ...}, or (a
// Mutex's acquire) the fencing token alone, an integer.
func mcTaken(c *explore.Ctx) bool { return c.Reply.Kind == simulate.KindInt || c.Int() == 1 }

// mcToken is the fencing token of a reply that says "taken".
func mcToken(c *explore.Ctx) int64 {
	if c.Reply.Kind == simulate.KindInt {
		return c.Int()
	}
	return c.Elem(1)
}

// --- mutex -----------------------------------------------------------------

type mutexScripts struct{ acquire, release, undo *registry.Script }

// mcReentrantClient takes the mutex twice (reentrant) and releases it as
// many times, then starts over; "holds" counts the holds it believes it
// has. A hold taken after its own lease ran out starts the count again.
func mcReentrantClient(name string, s mutexScripts) explore.Actor {
	attempt := func(c *explore.Ctx, label string) string {
		return mcAttempt(fmt.Sprintf("%s-%d-%s", name, c.Var("round"), label), 0, "r")
	}
	acquire := func(label, next string) explore.Step {
		return explore.Step{Label: label, Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"),
			Call: func(c *explore.Ctx) []any { return mcAcquireArgs(name, attempt(c, label)) },
			Then: func(c *explore.Ctx) string {
				if !mcTaken(c) {
					return "acquire"
				}
				holds := c.Var("holds") + 1
				if c.Now().Milliseconds() >= c.Var("until") {
					holds = 1 // the earlier hold ran out with its lease: a new one
				}
				c.Acquire(mcTTL)
				c.SetVar("until", c.Now().Milliseconds()+mcTTL.Milliseconds())
				c.SetVar("holds", holds)
				return next
			}}
	}
	release := explore.Step{Label: "release", Script: s.release, Keys: mcKeysOf(s.release, "{m}"),
		Call: func(c *explore.Ctx) []any { return mcReleaseArgs(name, "") },
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
			c.SetVar("round", c.Var("round")+1)
			return "acquire"
		}}
	return explore.Actor{Name: name, Vars: []string{"holds", "until", "round"},
		Steps: []explore.Step{acquire("acquire", "reenter"), acquire("reenter", "release"), release}}
}

// mcHoldCount: an actor that believes it holds the lock has exactly the
// holds it counted on the server.
var mcHoldCount = explore.Invariant{Name: "hold count", Check: func(v *explore.View) error {
	h, ok := mcHold(v, "{m}")
	for _, name := range v.Holders() {
		if !ok || len(h) != 8 {
			return fmt.Errorf("%s believes it holds the lock but the server has none", name)
		}
		if h[6] != name || h[3] != fmt.Sprint(v.Var(name, "holds")) {
			return fmt.Errorf("%s believes it has %d holds, the server says owner %s count %s", name, v.Var(name, "holds"), h[6], h[3])
		}
	}
	return nil
}}

func mcReentrantModel(name string, s mutexScripts) *explore.Model {
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mcReentrantClient("a", s), mcReentrantClient("b", s)},
		Invariants: []explore.Invariant{explore.MutualExclusion(), mcHoldCount},
		Bounds:     explore.Bounds{MaxSteps: 5, MaxTicks: 2},
	}
}

func TestModelMutexReentrant(t *testing.T) {
	s := mcV2Scripts(t)
	explore.Check(t, mcReentrantModel("reentrant mutex", s))

	broken := s
	broken.release = mcBreak(t, s.release, "if count ~= '1' then", "if false then")
	mcMustFail(t, mcReentrantModel("reentrant mutex, first release frees", broken), "hold count")
}

// --- replica-acknowledged mutex ---------------------------------------------

// mcAckedClient takes the mutex, then sends WAIT 1 (as the locks package
// sends it in the acquire's pipeline) and believes it holds the lock only
// when a replica acknowledged; its lease runs from the acquire request.
func mcAckedClient(name string, s mutexScripts, waitForReplica bool) explore.Actor {
	attempt := func(c *explore.Ctx) string { return mcAttempt(fmt.Sprintf("%s-%d", name, c.Var("round")), 0, "-") }
	return explore.Actor{Name: name, Vars: []string{"sent", "round"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"),
			Call: func(c *explore.Ctx) []any { return mcAcquireArgs(name, attempt(c)) },
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
		{Label: "release", Script: s.release, Keys: mcKeysOf(s.release, "{m}"),
			Call: func(c *explore.Ctx) []any { return mcReleaseArgs(name, attempt(c)) },
			Then: func(c *explore.Ctx) string {
				c.Release()
				c.SetVar("round", c.Var("round")+1)
				return "acquire"
			}},
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
	s := mcV2Scripts(t)
	explore.Check(t, mcAckedModel("mutex + WAIT 1 on primary+replica", s, true))
	// Broken: believing the grant before the replica has it.
	mcMustFail(t, mcAckedModel("mutex without WAIT on primary+replica", s, false), "mutual exclusion")
}
