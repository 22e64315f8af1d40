package explore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redlua/redlua/simulate"
)

// Ctx is what a step's Call and Then see: the actor's clock, its local
// variables and beliefs, and (in Then) the reply of the step's call.
type Ctx struct {
	// Reply is the call's reply (in Then; the zero Reply, a nil, in Call
	// and after a local step). A script's error is a KindError reply.
	Reply simulate.Reply

	actor *compiledActor
	state *actorState
	now   int64 // ms since the model's start
	err   error // the first misuse, reported by the engine
}

// Now returns the virtual time since the model started. An actor's own
// clock reads the same time as the server's.
func (c *Ctx) Now() time.Duration { return time.Duration(c.now) * time.Millisecond }

// UnixMilli returns the virtual time as Unix milliseconds, for client-side
// timestamps a design stores in Redis.
func (c *Ctx) UnixMilli() int64 { return startMs + c.now }

// Acquire records that the actor now believes it holds the lock for ttl
// (0: with no deadline). Invariants see the belief until the deadline
// passes, the actor releases it, or it believes again.
func (c *Ctx) Acquire(ttl time.Duration) {
	c.state.holds = true
	c.state.deadline = noDeadline
	if ttl > 0 {
		c.state.deadline = c.now + ttl.Milliseconds()
	}
}

// AcquireUntil records that the actor believes it holds the lock until
// the virtual time deadline (since the model's start): for a lease that
// began at an earlier step, such as the acquire request before a WAIT.
func (c *Ctx) AcquireUntil(deadline time.Duration) {
	c.state.holds = true
	c.state.deadline = deadline.Milliseconds()
}

// Release records that the actor no longer believes it holds anything.
func (c *Ctx) Release() { c.state.holds, c.state.deadline = false, 0 }

// Holds reports whether the actor believes it holds the lock and its lease
// has not run out by its own clock (what a careful client checks before
// using the resource).
func (c *Ctx) Holds() bool { return c.state.holds && c.now < c.state.deadline }

// Var returns the actor's local variable name.
func (c *Ctx) Var(name string) int64 {
	if i := c.varIndex(name); i >= 0 {
		return c.state.vars[i]
	}
	return 0
}

// SetVar sets the actor's local variable name.
func (c *Ctx) SetVar(name string, v int64) {
	if i := c.varIndex(name); i >= 0 {
		c.state.vars[i] = v
	}
}

func (c *Ctx) varIndex(name string) int {
	for i, v := range c.actor.Vars {
		if v == name {
			return i
		}
	}
	if c.err == nil {
		c.err = fmt.Errorf("actor %q uses variable %q, which its Vars do not declare; add it to Actor.Vars", c.actor.Name, name)
	}
	return -1
}

// Int returns the reply as an integer: an integer reply, a bulk string
// holding one, or for an array the first element (the convention of this
// repository's scripts: {1, token, ...} or {0, hint}). Anything else is 0.
func (c *Ctx) Int() int64 { return Int(c.Reply) }

// Elem returns element i (from 0) of an array reply as an integer, 0 when
// there is none.
func (c *Ctx) Elem(i int) int64 {
	if c.Reply.Kind == simulate.KindArray && i < len(c.Reply.Elems) {
		return Int(c.Reply.Elems[i])
	}
	return 0
}

// Str returns a bulk or status reply's text ("" otherwise).
func (c *Ctx) Str() string {
	switch c.Reply.Kind {
	case simulate.KindBulk, simulate.KindStatus, simulate.KindVerbatim:
		return c.Reply.Str
	}
	return ""
}

// IsNil reports a nil reply.
func (c *Ctx) IsNil() bool { return c.Reply.Kind == simulate.KindNil }

// IsError reports an error reply (a failed script, a refused command, a
// crashed primary).
func (c *Ctx) IsError() bool { return c.Reply.Kind == simulate.KindError }

// OK reports the status reply OK.
func (c *Ctx) OK() bool { return c.Reply.Kind == simulate.KindStatus && c.Reply.Str == "OK" }

// Int returns r as an integer as Ctx.Int does.
func Int(r simulate.Reply) int64 {
	switch r.Kind {
	case simulate.KindInt, simulate.KindBool:
		return r.Int
	case simulate.KindBulk, simulate.KindStatus:
		n, _ := strconv.ParseInt(r.Str, 10, 64)
		return n
	case simulate.KindArray:
		if len(r.Elems) > 0 {
			return Int(r.Elems[0])
		}
	}
	return 0
}

// View is one reachable state as invariants see it: the clock, the
// actors' beliefs and variables, and the primary's keyspace.
type View struct {
	r    *resolved
	n    *node
	keys []simulate.KeyDump // loaded on first use
}

// Now returns the virtual time since the model started.
func (v *View) Now() time.Duration { return time.Duration(v.n.now) * time.Millisecond }

// Holds reports whether the named actor believes it holds the lock with
// an unexpired lease.
func (v *View) Holds(actor string) bool {
	i := v.actorIndex(actor)
	return i >= 0 && v.n.actors[i].valid(v.n.now)
}

// Holders returns the names of the actors that believe they hold the lock
// with an unexpired lease, in declaration order.
func (v *View) Holders() []string {
	var out []string
	for i := range v.n.actors {
		if v.n.actors[i].valid(v.n.now) {
			out = append(out, v.r.actors[i].Name)
		}
	}
	return out
}

// Var returns an actor's local variable (0 for unknown names).
func (v *View) Var(actor, name string) int64 {
	i := v.actorIndex(actor)
	if i < 0 {
		return 0
	}
	for j, n := range v.r.actors[i].Vars {
		if n == name {
			return v.n.actors[i].vars[j]
		}
	}
	return 0
}

// At returns the label of the step the actor runs next ("end" once it
// stopped).
func (v *View) At(actor string) string {
	i := v.actorIndex(actor)
	if i < 0 {
		return ""
	}
	return v.r.actors[i].label(int(v.n.actors[i].pc))
}

// Keys returns the primary's live keys, sorted by name.
func (v *View) Keys() []simulate.KeyDump {
	if v.keys == nil {
		v.keys = v.n.primary.Dump(time.UnixMilli(startMs + v.n.now))
	}
	return v.keys
}

// ReplicaKeys returns the replica's live keys (none without a replica, or
// after it was promoted).
func (v *View) ReplicaKeys() []simulate.KeyDump {
	if v.n.replica == nil {
		return nil
	}
	return v.n.replica.Dump(time.UnixMilli(startMs + v.n.now))
}

// PrimaryDown reports whether the primary crashed and no replica is
// promoted yet (Keys then shows what the dead primary held).
func (v *View) PrimaryDown() bool { return v.n.down }

// Key returns one live key of the primary.
func (v *View) Key(name string) (simulate.KeyDump, bool) {
	return v.n.primary.Lookup(name, time.UnixMilli(startMs+v.n.now))
}

func (v *View) actorIndex(name string) int {
	for i := range v.r.actors {
		if v.r.actors[i].Name == name {
			return i
		}
	}
	return -1
}

// MutualExclusion is the invariant that at most one actor believes it
// holds the lock with an unexpired lease.
func MutualExclusion() Invariant { return AtMostHolders(1) }

// AtMostHolders is the invariant that at most n actors believe at once
// that they hold (a semaphore of n permits, one permit each).
func AtMostHolders(n int) Invariant {
	name := "mutual exclusion"
	if n != 1 {
		name = fmt.Sprintf("at most %d holders", n)
	}
	return Invariant{Name: name, Check: func(v *View) error {
		if h := v.Holders(); len(h) > n {
			return fmt.Errorf("%s believe they hold the lock at once", joinNames(h))
		}
		return nil
	}}
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "no one"
	case 1:
		return names[0]
	}
	s := names[0]
	for _, n := range names[1 : len(names)-1] {
		s += ", " + n
	}
	return s + " and " + names[len(names)-1]
}
