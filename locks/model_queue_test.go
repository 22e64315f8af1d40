package locks_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// Model checks of the mutex's queue, plain and fair (see model_test.go).

// --- the queue's invariants ------------------------------------------------

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
// mutex.acquire keeps those deadlines in the waiters hash.
func mcWaiterDeadlines(v *explore.View) []time.Duration {
	w, ok := v.Key("{m}:waiters")
	if !ok {
		return nil
	}
	var out []time.Duration
	for _, entry := range w.Value.(map[string]string) {
		// Every version's waiter entry starts with the deadline in ms.
		first := entry
		if i := strings.IndexAny(entry, " \t"); i >= 0 {
			first = entry[:i]
		}
		if deadline, err := strconv.ParseInt(first, 10, 64); err == nil {
			out = append(out, time.Duration(deadline-1_700_000_000_000)*time.Millisecond)
		}
	}
	return out
}

// --- the queueing mutex ---------------------------------------------------------

// mutex.acquire and mutex.release queue waiters in Redis in every mode,
// hand the lock over inside the release, and undo acquisitions whose
// caller gave up.

// mcKeysOf is a script's KEYS for the lock under key lock, from the names
// its header declares ("lock" is the lock itself, any other name a key
// beside it), as the locks package builds them.
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

// mcV2ReleaseArgs is mutex.release's ARGV for an Unlock (no attempt to
// undo) of the hold that leaseAttempt took.
func mcV2ReleaseArgs(release *registry.Script, owner, leaseAttempt string) []any {
	return mcFit(release, owner, "{m}:released", "{m}:grant:", "PUBLISH", "", 2*mcFairWaitTTL.Milliseconds(), leaseAttempt)
}

// mcGiveUpArgs is mutex.release's ARGV for undoing attempt.
func mcGiveUpArgs(release *registry.Script, owner, attempt string) []any {
	return mcFit(release, owner, "{m}:released", "{m}:grant:", "PUBLISH", attempt, 2*mcFairWaitTTL.Milliseconds(), "")
}

// mcFit cuts args to the number s declares: a later version of a script
// takes arguments the earlier ones do not.
func mcFit(s *registry.Script, args ...any) []any {
	return args[:min(len(args), len(s.Args))]
}

// withThen returns st with its Then set.
func withThen(st explore.Step, then func(*explore.Ctx) string) explore.Step {
	st.Then = then
	return st
}

// mcV2Lookup returns the scripts of lua/ by ID.
func mcV2Lookup(t testing.TB, ids ...string) []*registry.Script {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*registry.Script, len(ids))
	for i, id := range ids {
		if out[i], err = reg.Lookup(id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	return out
}

// mcQueueVersions are the versions of mutex.acquire the models check: the
// one the client runs (with mutex.release@5).
var mcQueueVersions = []string{"6"}

// mcV2Scripts is mutex.acquire@version with the release the client runs
// beside it.
func mcV2Scripts(t *testing.T, version string) mutexScripts {
	v := mcV2Lookup(t, "mutex.acquire@"+version, "mutex.release@5")
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
			c.SetVar("token", mcToken(c))
			return "release"
		}},
		{Label: "release", Script: s.release, Keys: mcKeysOf(s.release, "{m}"), Call: func(c *explore.Ctx) []any {
			return mcV2ReleaseArgs(s.release, name, fmt.Sprintf("%s-%d", name, c.Var("round")))
		},
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

// mcQueueExpiry: the queue
// keys expire, so a name whose holder and waiters all died leaves nothing
// behind, but never before a live waiter's deadline, and a live waiter
// stays in the queue a release walks.
var mcQueueExpiry = explore.Invariant{Name: "the queue expires after its last live waiter", Check: func(v *explore.View) error {
	q, queued := v.Key("{m}:queue")
	w, ok := v.Key("{m}:waiters")
	if queued && q.PTTL < 0 {
		return fmt.Errorf("{m}:queue never expires")
	}
	if !ok {
		return nil
	}
	if w.PTTL < 0 {
		return fmt.Errorf("{m}:waiters never expires")
	}
	now := 1_700_000_000_000 + v.Now().Milliseconds()
	for waiter, entry := range w.Value.(map[string]string) {
		var deadline int64
		if _, err := fmt.Sscanf(entry, "%d", &deadline); err != nil || deadline <= now {
			continue
		}
		if w.PTTL < deadline-now {
			return fmt.Errorf("{m}:waiters expires in %d ms, before %s's deadline in %d ms", w.PTTL, waiter, deadline-now)
		}
		inQueue := false
		if queued {
			for _, m := range q.Value.([]simulate.ZMember) {
				inQueue = inQueue || m.Member == waiter
			}
		}
		if !inQueue {
			return fmt.Errorf("%s waits (entry %q) but is not in {m}:queue", waiter, entry)
		}
		if q.PTTL < deadline-now {
			return fmt.Errorf("{m}:queue expires in %d ms, before %s's deadline in %d ms", q.PTTL, waiter, deadline-now)
		}
	}
	return nil
}}

func mcV2Model(name string, s mutexScripts, fair bool) *explore.Model {
	invariants := []explore.Invariant{explore.MutualExclusion(), mcV2Fencing, mcFairOrder}
	if fair {
		invariants = append(invariants, mcFairFIFO)
	}
	invariants = append(invariants, mcQueueExpiry)
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
		// A release skips the queue unless a waiter marked the hash; a
		// waiter that was not marked would be served only by its own
		// refresh (mcHandOver).
		plain := mcV2Model(name, s, false)
		plain.Invariants = append(plain.Invariants, mcHandOver)
		explore.Check(t, plain)
		explore.Check(t, mcV2Model(name+", fair", s, true))

		broken := s
		broken.release = mcBreak(t, s.release, "if holder ~= owner then", "if false then")
		// The release also checks the hold's attempt, which no other owner has.
		broken.release = mcBreak(t, broken.release, mcLeaseAttemptCheck, "if false then")
		mcMustFail(t, mcV2Model(name+", release ignores the owner", broken, false), "mutual exclusion")
		broken = s
		broken.acquire = mcBreak(t, s.acquire, "if fair == '1' then", "if false then")
		mcMustFail(t, mcV2Model(name+" fair, newcomers barge in", broken, true), "first come, first served")
		broken = s
		broken.release = mcBreak(t, s.release, "if deadline and tonumber(deadline) > now then", "if deadline then")
		mcMustFail(t, mcV2Model(name+" fair, hands over to dead waiters", broken, true), "first come, first served")
	}
	// A release keeps the last token in the released lock's hash; without
	// it, a grant in the same microsecond (the model's clock stands still
	// between steps) repeats the token.
	s := mcV2Scripts(t, "6")
	s.release = mcBreak(t, s.release, "redis.call('HDEL', lock, 'owner', 'count', 'meta', 'kind', 'attempt', 'granted', 'waiting')", "redis.call('DEL', lock)")
	mcMustFail(t, mcV2Model("mutex@6, release forgets the last token", s, false), "fencing token")
	s = mcV2Scripts(t, "6")
	s.acquire = mcBreak(t, s.acquire, "redis.call('HSET', lock, 'waiting', '1')", "redis.call('HSET', lock, 'waiting', '0')")
	m := mcV2Model("mutex@6, waiters never marked", s, false)
	m.Invariants = append(m.Invariants, mcHandOver)
	mcMustFail(t, m, "a release hands over to a live waiter")
	// The fast path keeps tokens above the last one kept in the hash.
	broken := mcV2Scripts(t, "6")
	broken.acquire = mcBreak(t, broken.acquire, "if held_fence and held_fence + 1 > token then", "if false then")
	mcMustFail(t, mcV2Model("mutex@6 whose fast path forgets the last token", broken, false), mcV2Fencing.Name)

	// A Client's keeper refreshes its waiters with mutex.keepqueued@2 at any
	// moment between the other scripts; it must break none of the above. A
	// copy that also writes an entry for an owner that is not queued leaves
	// a live waiter that no release can see (the queue does not have it).
	// Entries end with the queued call's attempt, which the keeper keeps as
	// it is.
	keep := mcV2Lookup(t, "mutex.keepqueued@2")[0]
	for _, fair := range []bool{false, true} {
		m = mcV2Model(fmt.Sprintf("mutex@6 with the keeper, fair %v", fair), mcV2Scripts(t, "6"), fair)
		m.Actors = append(m.Actors, mcKeeper(keep))
		m.Invariants = append(m.Invariants, mcHandOver)
		explore.Check(t, m)
	}
	// mcQueueExpiry sees the entry outside the queue at once; without it,
	// a release hands over past the live waiter.
	queuesAnyone := mcBreak(t, keep, "  if entry then", "  entry = entry or '0 100 100 client-x '\n  if entry then")
	m = mcV2Model("mutex@6 with a keeper that queues anyone", mcV2Scripts(t, "6"), false)
	m.Actors = append(m.Actors, mcKeeper(queuesAnyone))
	mcMustFail(t, m, mcQueueExpiry.Name)
	m = mcV2Model("mutex@6 with a keeper that queues anyone, seen by releases", mcV2Scripts(t, "6"), false)
	m.Actors = append(m.Actors, mcKeeper(queuesAnyone))
	m.Invariants = append(slices.DeleteFunc(m.Invariants, func(i explore.Invariant) bool { return i.Name == mcQueueExpiry.Name }), mcHandOver)
	mcMustFail(t, m, "a release hands over to a live waiter")

	// mutex.acquire gives both queue keys an expiry and keepqueued moves it
	// with the deadlines. A copy that forgets the queue key leaves
	// it forever; one that sets half the waiter TTL, or a keeper that moves
	// only the deadlines, lets the keys expire under a live waiter.
	s = mcV2Scripts(t, "6")
	s.acquire = mcBreak(t, s.acquire, "for _, key in ipairs({queue, waiters}) do", "for _, key in ipairs({waiters}) do")
	mcMustFail(t, mcV2Model("mutex@6, the queue key never expires", s, false), mcQueueExpiry.Name)
	s = mcV2Scripts(t, "6")
	s.acquire = mcBreak(t, s.acquire, "redis.call('PEXPIRE', key, waiter_ttl)", "redis.call('PEXPIRE', key, math.floor(waiter_ttl / 2))")
	mcMustFail(t, mcV2Model("mutex@6, the queue expires after half a waiter TTL", s, false), mcQueueExpiry.Name)
	m = mcV2Model("mutex@6 with a keeper that leaves the queue's expiry", mcV2Scripts(t, "6"), false)
	m.Actors = append(m.Actors, mcKeeper(mcBreak(t, keep, "redis.call('PEXPIRE', key, longest)", "")))
	mcMustFail(t, m, mcQueueExpiry.Name)
}

// mcKeeper refreshes the places of a, b and c, as one Client's keeper
// would if all three were its waiters, once, at any point of the run (more
// refreshes multiply the states without reaching new kinds of them: a
// refresh only moves deadlines forward).
func mcKeeper(keep *registry.Script) explore.Actor {
	return explore.Actor{Name: "keeper", Steps: []explore.Step{
		{Label: "keep", Script: keep, Keys: mcKeysOf(keep, "{m}"), Args: []any{"a", "b", "c"},
			Then: func(*explore.Ctx) string { return explore.End }},
	}}
}

// A client whose Lock call failed with a timeout undoes the attempt
// (mutex.release with its attempt id) while the attempt itself may still
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
		{Label: "give up", Script: s.release, Keys: mcKeysOf(s.release, "{m}"), Args: mcGiveUpArgs(s.release, "a", attempt),
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
	// The fast path does not ask the gone hash about the attempt:
	// it is taken only while no gone hash exists. A fast path that ignores
	// the gone hash lets the late attempt take a free lock.
	broken := mcV2Scripts(t, "6")
	broken.acquire = mcBreak(t, broken.acquire, "redis.call('EXISTS', queue, readers, permits, gone) == 0", "redis.call('EXISTS', queue, readers, permits) == 0")
	mcMustFail(t, mcV2GiveUpModel("mutex@6, the fast path ignores the gone hash", broken), "abandoned attempts take nothing")
}

// --- two calls of one owner ---------------------------------------------------

// Calls that share an owner (WithOwner, not reentrant) are separate
// holders, and the queue keeps one entry per owner. A Lock call learns of
// a hand-over from the grant message, without a round trip; mcGrantSeen
// stands for that message: a step that reads the lock hash and finds the
// grant the release made, at any point while it is still there. The grant
// names the call (attempt), and a call takes only its own.
func mcGrantSeen(mine func(attempt, self string) bool, self string) explore.Step {
	return explore.Step{Label: "grant message", Command: []any{"HMGET", "{m}", "owner", "granted", "attempt"},
		Then: func(c *explore.Ctx) string {
			field := func(i int) string {
				if c.Reply.Kind == simulate.KindArray && i < len(c.Reply.Elems) {
					return c.Reply.Elems[i].Str
				}
				return ""
			}
			if field(0) != "a" || field(1) != "1" || !mine(field(2), self) {
				return "acquire" // not handed to this call: look again (refresh)
			}
			// The grant lives min(TTL, waiter TTL) from when it was made,
			// which is after this call last queued: the lease counts from
			// then, as Mutex.handedOver does.
			c.AcquireUntil(time.Duration(c.Var("queued")-1)*time.Millisecond + min(mcTTL, mcFairWaitTTL))
			return "release"
		}}
}

// mcSameOwnerCall is one Lock call of owner "a" under the actor's name as
// its attempt id: it queues, then either gives up (undo: a release with
// its attempt id) or waits for a grant and releases.
func mcSameOwnerCall(self string, s mutexScripts, givesUp bool, mine func(attempt, self string) bool) explore.Actor {
	next := "grant message"
	if givesUp {
		next = "give up"
	}
	return explore.Actor{Name: self, Vars: []string{"queued"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"),
			Args: []any{"a", mcTTL.Milliseconds(), "0", "", mcFairWaitTTL.Milliseconds(), "0", "client-a", self},
			Then: func(c *explore.Ctx) string {
				if mcTaken(c) {
					c.Acquire(mcTTL)
					return "release"
				}
				c.SetVar("queued", c.Now().Milliseconds()+1)
				return next
			}},
		mcGrantSeen(mine, self),
		{Label: "give up", Script: s.release, Keys: mcKeysOf(s.release, "{m}"),
			Args: mcGiveUpArgs(s.release, "a", self),
			Then: func(*explore.Ctx) string { return explore.End }},
		{Label: "release", Script: s.release, Keys: mcKeysOf(s.release, "{m}"), Args: mcV2ReleaseArgs(s.release, "a", self),
			Then: func(c *explore.Ctx) string { c.Release(); return explore.End }},
	}}
}

func mcSameOwnerModel(name string, s mutexScripts, mine func(attempt, self string) bool) *explore.Model {
	return &explore.Model{
		Name: name,
		Actors: []explore.Actor{
			mcV2Client("b", s, false),
			mcSameOwnerCall("a-1", s, true, mine),
			mcSameOwnerCall("a-2", s, false, mine),
		},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Deadlines:  mcWaiterDeadlines,
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2},
	}
}

// byAttempt is how a client routes a grant: to the call named in it.
// byOwner routes it to any call of the owner, a broken client.
func byAttempt(attempt, self string) bool { return attempt == self }
func byOwner(string, string) bool         { return true }

// mcLeaseAttemptCheck is how mutex.release tests the hold's attempt.
const mcLeaseAttemptCheck = "if lease_attempt ~= '' and held_attempt and held_attempt ~= '' and held_attempt ~= lease_attempt then"

func TestModelMutexSameOwnerCalls(t *testing.T) {
	explore.Check(t, mcSameOwnerModel("mutex@6, two calls of one owner, one gives up", mcV2Scripts(t, "6"), byAttempt))
	// The keeper rewrites a's entry at any point; the attempt at its end
	// must survive.
	m := mcSameOwnerModel("mutex@6, two calls of one owner, with the keeper", mcV2Scripts(t, "6"), byAttempt)
	m.Actors = append(m.Actors, mcKeeper(mcV2Lookup(t, "mutex.keepqueued@2")[0]))
	explore.Check(t, m)
	// A client that routed a grant to any call of the owner would let two
	// calls hold at once.
	mcMustFail(t, mcSameOwnerModel("mutex@6, a grant routed to any call of the owner", mcV2Scripts(t, "6"), byOwner), "mutual exclusion")
	// An undo releases only a hold its own attempt took.
	broken := mcV2Scripts(t, "6")
	broken.release = mcBreak(t, broken.release, "if attempt ~= '' and held_attempt ~= attempt and not (granted == '1' and held_attempt == '') then",
		"if attempt ~= '' and held_attempt ~= attempt and granted ~= '1' then")
	mcMustFail(t, mcSameOwnerModel("mutex@6, an undo releases any grant", broken, byAttempt), "mutual exclusion")
	// And an Unlock whose lease ran out leaves alone the hold another call
	// of the owner took since.
	broken = mcV2Scripts(t, "6")
	broken.release = mcBreak(t, broken.release, mcLeaseAttemptCheck, "if false then")
	mcMustFail(t, mcSameOwnerModel("mutex@6, an Unlock releases any hold of the owner", broken, byAttempt), "mutual exclusion")
}
