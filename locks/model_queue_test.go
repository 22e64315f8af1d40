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

// --- the layout --------------------------------------------------------------

// mcNow is the model's server time in ms (the simulator's clock starts there).
func mcNow(v *explore.View) int64 { return 1_700_000_000_000 + v.Now().Milliseconds() }

// mcHold is a live hold h of lock hash key (mutex.acquire@14's layout: kind,
// until, state, count, client, attempt, owner, meta); ok is false when
// there is none, or its time passed.
func mcHold(v *explore.View, key string) (h []string, ok bool) {
	d, found := v.Key(key)
	if !found {
		return nil, false
	}
	h = strings.SplitN(d.Value.(map[string]string)["h"], "\t", 8)
	if len(h) < 3 {
		return nil, false
	}
	until, _ := strconv.ParseInt(h[1], 10, 64)
	return h, until > mcNow(v)
}

// mcOwner is the owner of the live mutex hold of key, or "".
func mcOwner(v *explore.View, key string) string {
	if h, ok := mcHold(v, key); ok && len(h) == 8 {
		return h[6]
	}
	return ""
}

// mcWaiters are the waiter entries (w:<owner> of the lock hash) by owner.
func mcWaiters(v *explore.View) map[string]string {
	out := map[string]string{}
	if d, ok := v.Key("{m}"); ok {
		for field, entry := range d.Value.(map[string]string) {
			if owner, found := strings.CutPrefix(field, "w:"); found {
				out[owner] = entry
			}
		}
	}
	return out
}

// mcDeadline is a waiter entry's deadline (its first field).
func mcDeadline(entry string) int64 {
	first, _, _ := strings.Cut(entry, "\t")
	n, _ := strconv.ParseInt(first, 10, 64)
	return n
}

// --- the queue's invariants ------------------------------------------------

// mcFairOrder: the owner of the lock (taken or handed over) has left the
// queue, so it cannot be handed the lock a second time.
var mcFairOrder = explore.Invariant{Name: "holder not queued", Check: func(v *explore.View) error {
	owner := mcOwner(v, "{m}")
	q, ok := v.Key("{m}:queue")
	if owner == "" || !ok {
		return nil
	}
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
	next := mcOwner(after, "{m}")
	if next == "" || next == mcOwner(before, "{m}") {
		return nil
	}
	q, ok := before.Key("{m}:queue")
	if !ok {
		return nil
	}
	waiters := mcWaiters(before)
	now := mcNow(after)
	for _, z := range q.Value.([]simulate.ZMember) { // in arrival order
		if mcDeadline(waiters[z.Member]) <= now {
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
// mutex.acquire keeps those deadlines in the waiter entries.
func mcWaiterDeadlines(v *explore.View) []time.Duration {
	var out []time.Duration
	for _, entry := range mcWaiters(v) {
		if deadline := mcDeadline(entry); deadline > 0 {
			out = append(out, time.Duration(deadline-1_700_000_000_000)*time.Millisecond)
		}
	}
	return out
}

// --- the queueing mutex ---------------------------------------------------------

// mutex.acquire and mutex.release queue waiters in Redis in every mode,
// hand the lock over inside the release, and mutex.undo undoes
// acquisitions whose caller gave up.

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

// mcV2ReleaseArgs is the ARGV of a release in the order rw.unlock@1 takes
// them, for an Unlock (no attempt to undo) of the hold that leaseAttempt
// took.
func mcV2ReleaseArgs(release *registry.Script, owner, leaseAttempt string) []any {
	return mcFit(release, owner, "{m}:released", "{m}:grant:", "PUBLISH", "", 2*mcFairWaitTTL.Milliseconds(), leaseAttempt)
}

// mcFit cuts args to the number s declares: a later version of a script
// takes arguments the earlier ones do not.
func mcFit(s *registry.Script, args ...any) []any {
	return args[:min(len(args), len(s.Args))]
}

// mcAttempt is the attempt id of a Mutex call: id, then the call's waiter
// TTL and flags, as the locks package makes it (mutexAttempt).
func mcAttempt(id string, waiterTTL time.Duration, flags string) string {
	return fmt.Sprintf("%s/%d/%s", id, waiterTTL.Milliseconds(), flags)
}

// mcAcquireArgs is mutex.acquire's ARGV for a call of owner with attempt id
// attempt (from mcAttempt), whose client is "client-<owner>".
// The hold record's end holds the attempt's bare id and an empty meta, as
// the locks package sends them (mutex.acquire@14).
func mcAcquireArgs(owner, attempt string) []any {
	return []any{mcTTL.Milliseconds(), "g:" + attempt, "client-" + owner + "\t" + mcID(attempt) + "\t" + owner + "\t"}
}

// mcID is an attempt's bare id (the part before its mode), as a Mutex's
// hold records it from mutex.acquire@14 on.
func mcID(attempt string) string {
	id, _, _ := strings.Cut(attempt, "/")
	return id
}

// mcReleaseArgs is mutex.release's ARGV for an Unlock of the hold that
// leaseAttempt took ("": any hold of the owner).
func mcReleaseArgs(owner, leaseAttempt string) []any {
	return []any{"\t" + mcID(leaseAttempt) + "\t" + owner + "\t"}
}

// mcUndoArgs is mutex.undo's ARGV for undoing attempt.
func mcUndoArgs(owner, attempt string) []any {
	return []any{owner, attempt, 2 * mcFairWaitTTL.Milliseconds(), "PUBLISH"}
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

// mcMutexIDs are the scripts the client runs for a Mutex.
var mcMutexIDs = []string{"mutex.acquire@14", "mutex.release@11", "mutex.undo@6", "mutex.keepqueued@6"}

// mcV2Scripts is the Mutex's scripts the client runs.
func mcV2Scripts(t *testing.T) mutexScripts {
	v := mcV2Lookup(t, mcMutexIDs...)
	return mutexScripts{acquire: v[0], release: v[1], undo: v[2]}
}

// mcV2Client locks (queueing, as Lock does) with one attempt id per round,
// then unlocks; a waiter the release handed the lock to claims it on its
// next call.
func mcV2Client(name string, s mutexScripts, fair bool) explore.Actor {
	flags := "-"
	if fair {
		flags = "f"
	}
	attempt := func(c *explore.Ctx) string {
		return mcAttempt(fmt.Sprintf("%s-%d", name, c.Var("round")), mcFairWaitTTL, flags)
	}
	return explore.Actor{Name: name, Vars: []string{"round", "token", "freed"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"), Call: func(c *explore.Ctx) []any {
			return mcAcquireArgs(name, attempt(c))
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
			return mcReleaseArgs(name, attempt(c))
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

// mcHandOver: a release that frees the lock (reply 1) leaves no live
// waiter behind a free lock: it hands the lock to the oldest live one
// (reply 3) instead. mcV2Client records the reply of its last release in
// "freed" (the time, plus one) until its next acquire; a lock freed later
// by its lease running out is not the release's doing.
var mcHandOver = explore.Invariant{Name: "a release hands over to a live waiter", Check: func(v *explore.View) error {
	if mcOwner(v, "{m}") != "" {
		return nil // taken since
	}
	for _, who := range []string{"a", "b", "c"} {
		if v.Var(who, "freed") != v.Now().Milliseconds()+1 {
			continue
		}
		for waiter, entry := range mcWaiters(v) {
			if mcDeadline(entry) > mcNow(v) {
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

// mcQueueExpiry: the queue key and the waiter entries expire, so a name
// whose holder and waiters all died leaves nothing behind, but never
// before a live waiter's deadline; a live waiter stays in the queue a
// release walks, and q (which tells a release to walk it) lasts at least
// until its deadline.
var mcQueueExpiry = explore.Invariant{Name: "the queue expires after its last live waiter", Check: func(v *explore.View) error {
	q, queued := v.Key("{m}:queue")
	if queued && q.PTTL < 0 {
		return fmt.Errorf("{m}:queue never expires")
	}
	lock, ok := v.Key("{m}")
	if !ok {
		return nil
	}
	if lock.PTTL < 0 {
		return fmt.Errorf("{m} never expires")
	}
	now := mcNow(v)
	until, _ := strconv.ParseInt(lock.Value.(map[string]string)["q"], 10, 64)
	for waiter, entry := range mcWaiters(v) {
		deadline := mcDeadline(entry)
		if deadline <= now {
			continue
		}
		if lock.PTTL < deadline-now {
			return fmt.Errorf("{m} expires in %d ms, before %s's deadline in %d ms", lock.PTTL, waiter, deadline-now)
		}
		if until < deadline {
			return fmt.Errorf("%s waits until %d, but q says until %d", waiter, deadline, until)
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

// mcOwnerCheck is how mutex.release tests, off its fast path, whose hold it is.
const mcOwnerCheck = "if kind ~= 'mutex' or holder ~= owner then"

// mcFastFind is the release's fast path: the hold named by attempt and owner.
const mcFastFind = "if h and not q and string.find(h, hold, 7, true) then"

func TestModelMutexV2(t *testing.T) {
	s := mcV2Scripts(t)
	const name = "mutex@10"
	// A release skips the queue unless q says someone waits; a waiter that
	// q did not cover would be served only by its own refresh (mcHandOver).
	plain := mcV2Model(name, s, false)
	plain.Invariants = append(plain.Invariants, mcHandOver)
	explore.Check(t, plain)
	explore.Check(t, mcV2Model(name+", fair", s, true))

	broken := s
	broken.release = mcBreak(t, s.release, mcFastFind, "if h and not q then")
	broken.release = mcBreak(t, broken.release, mcOwnerCheck, "if false then")
	// The release also checks the hold's attempt, which no other owner has.
	broken.release = mcBreak(t, broken.release, mcLeaseAttemptCheck, "if false then")
	mcMustFail(t, mcV2Model(name+", release ignores the owner", broken, false), "mutual exclusion")
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "if fair and waiting then", "if false then")
	mcMustFail(t, mcV2Model(name+" fair, newcomers barge in", broken, true), "first come, first served")
	broken = s
	broken.release = mcBreak(t, s.release, "return deadline ~= nil and deadline > now", "return deadline ~= nil")
	mcMustFail(t, mcV2Model(name+" fair, hands over to dead waiters", broken, true), "first come, first served")

	// A release keeps the last token in the released lock's hash; without
	// it, a grant in the same microsecond (the model's clock stands still
	// between steps) repeats the token.
	broken = s
	broken.release = mcBreak(t, s.release, "redis.call('HDEL', lock, 'h')", "redis.call('DEL', lock)")
	mcMustFail(t, mcV2Model(name+", release forgets the last token", broken, false), "fencing token")
	// A waiter that queues without setting q is not seen by the release.
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "redis.call('HSET', lock, 'w:' .. owner, entry, 'q', string.format('%d', deadline))",
		"redis.call('HSET', lock, 'w:' .. owner, entry)")
	m := mcV2Model(name+", waiters never set q", broken, false)
	m.Invariants = append(slices.DeleteFunc(m.Invariants, func(i explore.Invariant) bool { return i.Name == mcQueueExpiry.Name }), mcHandOver)
	mcMustFail(t, m, "a release hands over to a live waiter")
	mcMustFail(t, mcV2Model(name+", waiters never set q", broken, false), mcQueueExpiry.Name)
	// The fast path keeps tokens above the last one kept in the hash.
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "if v[2] and v[2] + 0 >= token then", "if false then")
	mcMustFail(t, mcV2Model(name+" whose fast path forgets the last token", broken, false), mcV2Fencing.Name)

	// A Client's keeper refreshes its waiters with mutex.keepqueued at any
	// moment between the other scripts; it must break none of the above. A
	// copy that also writes an entry for an owner that is not queued leaves
	// a live waiter that no release can see (the queue does not have it).
	// Entries end with the queued call's attempt and meta, which the keeper
	// keeps as they are.
	keep := mcV2Lookup(t, mcMutexIDs[3])[0]
	for _, fair := range []bool{false, true} {
		m = mcV2Model(fmt.Sprintf("%s with the keeper, fair %v", name, fair), mcV2Scripts(t), fair)
		m.Actors = append(m.Actors, mcKeeper(keep))
		m.Invariants = append(m.Invariants, mcHandOver)
		explore.Check(t, m)
	}
	// mcQueueExpiry sees the entry outside the queue at once; without it,
	// a release hands over past the live waiter.
	queuesAnyone := mcBreak(t, keep, "  if entry then", "  entry = entry or '0\\t100\\t100\\tclient-x\\tx/100/-\\t'\n  if entry then")
	m = mcV2Model(name+" with a keeper that queues anyone", mcV2Scripts(t), false)
	m.Actors = append(m.Actors, mcKeeper(queuesAnyone))
	mcMustFail(t, m, mcQueueExpiry.Name)
	m = mcV2Model(name+" with a keeper that queues anyone, seen by releases", mcV2Scripts(t), false)
	m.Actors = append(m.Actors, mcKeeper(queuesAnyone))
	m.Invariants = append(slices.DeleteFunc(m.Invariants, func(i explore.Invariant) bool { return i.Name == mcQueueExpiry.Name }), mcHandOver)
	mcMustFail(t, m, "a release hands over to a live waiter")

	// mutex.acquire gives the queue key and the hash an expiry of at least
	// the waiter TTL, and keepqueued moves it with the deadlines. A copy
	// that forgets the queue key leaves it forever; one that sets half the
	// waiter TTL, or a keeper that moves only the deadlines, lets the keys
	// expire under a live waiter.
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "  redis.call('PEXPIRE', queue, life)\n", "")
	mcMustFail(t, mcV2Model(name+", the queue key never expires", broken, false), mcQueueExpiry.Name)
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "redis.call('PEXPIRE', queue, life)", "redis.call('PEXPIRE', queue, math.floor(waiter_ttl / 2))")
	mcMustFail(t, mcV2Model(name+", the queue expires after half a waiter TTL", broken, false), mcQueueExpiry.Name)
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "keep_for(waiter_ttl)", "keep_for(math.floor(waiter_ttl / 2))")
	mcMustFail(t, mcV2Model(name+", the hash expires after half a waiter TTL", broken, false), mcQueueExpiry.Name)
	m = mcV2Model(name+" with a keeper that leaves the queue's expiry", mcV2Scripts(t), false)
	m.Actors = append(m.Actors, mcKeeper(mcBreak(t, keep, "redis.call('PEXPIRE', queue, life)", "")))
	mcMustFail(t, m, mcQueueExpiry.Name)
	m = mcV2Model(name+" with a keeper that leaves q", mcV2Scripts(t), false)
	m.Actors = append(m.Actors, mcKeeper(mcBreak(t, keep, "fresh[#fresh + 1] = 'q'", "fresh[#fresh + 1] = 'x'")))
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
// (mutex.undo with its attempt id) while the attempt itself may still be
// on its way and reach the server later ("late"). Whatever the order, an
// abandoned attempt that arrives within gone_ttl of the give-up must not
// end up holding the lock or waiting for it. (One that arrives later still
// takes the lock, for one lease that no one believes in: the checker found
// that trace when the property had no time bound.)
func mcV2GiveUpModel(name string, s mutexScripts) *explore.Model {
	attempt := mcAttempt("a-1", mcFairWaitTTL, "-")
	goneTTL := 2 * mcFairWaitTTL.Milliseconds() // as the locks package sets it: twice the longer lease
	late := explore.Actor{Name: "late", Steps: []explore.Step{
		{Label: "acquire arrives", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"), Args: mcAcquireArgs("a", attempt)},
	}}
	gaveUp := explore.Actor{Name: "a", Vars: []string{"gave-up", "at"}, Steps: []explore.Step{
		{Label: "give up", Script: s.undo, Keys: mcKeysOf(s.undo, "{m}"), Args: mcUndoArgs("a", attempt),
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
		if h, ok := mcHold(v, "{m}"); ok && len(h) == 8 && h[6] == "a" {
			return fmt.Errorf("a gave up, yet the lock is held for a (%q)", h)
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

// mcGoneCheck is how mutex.acquire, off its fast path, refuses a given-up attempt.
const mcGoneCheck = "if gone and tonumber(gone) > now then"

func TestModelMutexV2GiveUp(t *testing.T) {
	s := mcV2Scripts(t)
	explore.Check(t, mcV2GiveUpModel("mutex@10, a given-up attempt arriving late", s))

	broken := s
	broken.acquire = mcBreak(t, s.acquire, mcGoneCheck, "if false then")
	mcMustFail(t, mcV2GiveUpModel("mutex@10, gone attempts not checked", broken), "abandoned attempts take nothing")
	// The fast path reads the attempt's record in its HMGET; one that
	// ignores it lets the late attempt take a free lock.
	broken = s
	broken.acquire = mcBreak(t, s.acquire, "if not (v[3] or v[4] or h", "if not (v[3] or h")
	mcMustFail(t, mcV2GiveUpModel("mutex@10, the fast path ignores the record", broken), "abandoned attempts take nothing")
	// The undo records the attempt.
	broken = s
	broken.undo = mcBreak(t, s.undo, mcUndoRecord, "-- not recorded")
	mcMustFail(t, mcV2GiveUpModel("mutex@10, the undo records nothing", broken), "abandoned attempts take nothing")
}

// mcUndoRecord is the line of mutex.undo that records the attempt.
const mcUndoRecord = "redis.call('HSET', lock, field, until_text)"

// --- two calls of one owner ---------------------------------------------------

// Calls that share an owner (WithOwner, not reentrant) are separate
// holders, and the queue keeps one entry per owner. A Lock call learns of
// a hand-over from the grant message, without a round trip; mcGrantSeen
// stands for that message: a step that reads the lock hash and finds the
// grant the release made, at any point while it is still there. The grant
// names the call (attempt), and a call takes only its own.
func mcGrantSeen(mine func(attempt, self string) bool, self string) explore.Step {
	return explore.Step{Label: "grant message", Command: []any{"HGET", "{m}", "h"},
		Then: func(c *explore.Ctx) string {
			h := strings.Split(c.Reply.Str, "\t")
			if len(h) != 8 || h[2] != "g" || h[6] != "a" || !mine(h[5], self) {
				return "acquire" // not handed to this call: look again (refresh)
			}
			// The grant lives min(TTL, waiter TTL) from when it was made,
			// which is after this call last queued: the lease counts from
			// then, as serverWay.handedOver does.
			c.AcquireUntil(time.Duration(c.Var("queued")-1)*time.Millisecond + min(mcTTL, mcFairWaitTTL))
			return "release"
		}}
}

// mcSameOwnerAttempt is the attempt id of owner a's call self.
func mcSameOwnerAttempt(self string) string { return mcAttempt(self, mcFairWaitTTL, "-") }

// mcSameOwnerCall is one Lock call of owner "a" under the actor's name as
// its attempt id: it queues, then either gives up (mutex.undo with its
// attempt id) or waits for a grant and releases.
func mcSameOwnerCall(self string, s mutexScripts, givesUp bool, mine func(attempt, self string) bool) explore.Actor {
	next := "grant message"
	if givesUp {
		next = "give up"
	}
	attempt := mcSameOwnerAttempt(self)
	return explore.Actor{Name: self, Vars: []string{"queued"}, Steps: []explore.Step{
		{Label: "acquire", Script: s.acquire, Keys: mcKeysOf(s.acquire, "{m}"), Args: mcAcquireArgs("a", attempt),
			Then: func(c *explore.Ctx) string {
				if mcTaken(c) {
					c.Acquire(mcTTL)
					return "release"
				}
				c.SetVar("queued", c.Now().Milliseconds()+1)
				return next
			}},
		mcGrantSeen(mine, self),
		{Label: "give up", Script: s.undo, Keys: mcKeysOf(s.undo, "{m}"), Args: mcUndoArgs("a", attempt),
			Then: func(*explore.Ctx) string { return explore.End }},
		{Label: "release", Script: s.release, Keys: mcKeysOf(s.release, "{m}"), Args: mcReleaseArgs("a", attempt),
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
// A hold records the bare id (the grant message carries the attempt with
// its mode): ids compare.
func byAttempt(attempt, self string) bool { return mcID(attempt) == mcID(mcSameOwnerAttempt(self)) }
func byOwner(string, string) bool         { return true }

// mcLeaseAttemptCheck is how mutex.release, off its fast path, tests the hold's attempt.
const mcLeaseAttemptCheck = "if lease_attempt ~= '' and string.match(held_attempt, '^[^/]*') ~= string.match(lease_attempt, '^[^/]*') then"

func TestModelMutexSameOwnerCalls(t *testing.T) {
	explore.Check(t, mcSameOwnerModel("mutex@10, two calls of one owner, one gives up", mcV2Scripts(t), byAttempt))
	// The keeper rewrites a's entry at any point; the attempt in it must
	// survive.
	m := mcSameOwnerModel("mutex@10, two calls of one owner, with the keeper", mcV2Scripts(t), byAttempt)
	m.Actors = append(m.Actors, mcKeeper(mcV2Lookup(t, mcMutexIDs[3])[0]))
	explore.Check(t, m)
	// A client that routed a grant to any call of the owner would let two
	// calls hold at once.
	mcMustFail(t, mcSameOwnerModel("mutex@10, a grant routed to any call of the owner", mcV2Scripts(t), byOwner), "mutual exclusion")
	// An undo releases only a hold its own attempt took.
	broken := mcV2Scripts(t)
	broken.undo = mcBreak(t, broken.undo, "if held_attempt ~= id then", "if false then")
	mcMustFail(t, mcSameOwnerModel("mutex@10, an undo releases any hold of the owner", broken, byAttempt), "mutual exclusion")
	// And an Unlock whose lease ran out leaves alone the hold another call
	// of the owner took since: the fast path finds the attempt and the
	// owner together, the slow path compares the attempt.
	broken = mcV2Scripts(t)
	broken.release = mcBreak(t, broken.release, mcFastFind, "if h and not q and string.find(h, string.match(hold, '\\t[^\\t]*\\t$'), 7, true) then")
	broken.release = mcBreak(t, broken.release, mcLeaseAttemptCheck, "if false then")
	mcMustFail(t, mcSameOwnerModel("mutex@10, an Unlock releases any hold of the owner", broken, byAttempt), "mutual exclusion")
}
