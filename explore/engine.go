package explore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlua/redlua/simulate"
)

// noDeadline is a belief without a lease: it never runs out.
const noDeadline = int64(1) << 62

// endPC is the program counter of an actor that stopped.
const endPC = -1

// actorState is one actor's position and beliefs in one state. vars is
// shared between states until a step changes it (copy on write).
type actorState struct {
	pc       int32
	steps    int32
	holds    bool
	deadline int64 // ms since start, or noDeadline
	vars     []int64
}

func (a *actorState) valid(now int64) bool { return a.holds && now < a.deadline }

// node is one explored state, with the way it was first reached.
type node struct {
	primary  *simulate.Snapshot
	replica  *simulate.Snapshot // nil: no replica (none modelled, or promoted)
	pending  []*simulate.Delta  // writes the replica has not received, oldest first
	down     bool               // the primary crashed and no replica is promoted yet
	actors   []actorState
	now      int64 // ms since start
	ticks    int16
	pauses   int16
	failover int16
	parent   int32
	move     move
	// deadline caches nextDeadline (a function of the state, asked for
	// by moves and again by a tick).
	deadline      int64
	deadlineKnown bool
}

type moveKind uint8

const (
	moveActor moveKind = iota
	moveTick
	movePause
	moveReplicate
	moveCrash
	movePromote
)

// move is one transition: an actor's step, or an environment event.
type move struct {
	kind  moveKind
	actor int16
}

// engine runs a resolved model on one simulated server, restoring each
// state's keyspace into it before trying a transition.
type engine struct {
	r     *resolved
	ctx   context.Context
	srv   *simulate.Server
	clock *simulate.VirtualClock
	buf   []byte
	probe *compiledActor // the progress client being tried, as actor len(r.actors)
	// progressSeen memoises progress results by what a probe depends on:
	// the keyspaces, the clock and the deadlines of the stopped actors'
	// beliefs (their positions and variables do not matter once stopped).
	progressSeen []map[string]bool
	rec          *TraceStep // filled while replaying a trace
	// calls memoises script and command runs: a run depends only on the
	// keyspace, the clock and its arguments, and many states share those
	// while their actors stand at different steps.
	calls   map[string]callResult
	callBuf []byte
	// sym is the model's Symmetric groups with this engine's caches;
	// reduce says whether key merges symmetric states (VerifySymmetry
	// explores without).
	sym    *symmetry
	reduce bool
	class  int // set by key
}

func newEngine(ctx context.Context, r *resolved) *engine {
	clock := simulate.NewVirtualClock(startTime())
	return &engine{r: r, ctx: ctx, clock: clock, srv: simulate.New(simulate.WithClock(clock), simulate.WithTraceLimit(0)),
		sym: r.sym.engineCopy(), reduce: r.sym != nil}
}

// initial builds the first state: the setup commands run on an empty primary.
func (e *engine) initial() (*node, error) {
	e.srv.Restore(&simulate.Snapshot{})
	e.clock.Set(startTime())
	for i, cmd := range e.r.Setup {
		reply, err := e.srv.DoReply(e.ctx, cmd...)
		if err == nil && reply.Kind == simulate.KindError {
			err = errors.New(reply.Str)
		}
		if err != nil {
			return nil, fmt.Errorf("explore: model %q: Setup command %d (%v): %w", e.r.Name, i+1, cmd, err)
		}
	}
	n := &node{primary: e.srv.Snapshot(), parent: -1}
	if e.r.Replica {
		n.replica = n.primary
	}
	n.actors = make([]actorState, len(e.r.actors))
	for i := range n.actors {
		n.actors[i].vars = make([]int64, len(e.r.actors[i].Vars))
	}
	return n, nil
}

// actor returns actor i's program: a model actor, or the progress client.
func (e *engine) actor(i int) *compiledActor {
	if i < len(e.r.actors) {
		return &e.r.actors[i]
	}
	return e.probe
}

// moves lists the transitions enabled in n, in a fixed order (actors in
// declaration order, then the environment) so traces are reproducible.
// For a progress probe only the probe client and the clock move.
func (e *engine) moves(n *node, out []move, probing bool) []move {
	b := e.r.bounds
	for i := range n.actors {
		if probing && i < len(e.r.actors) {
			continue
		}
		a := &n.actors[i]
		if a.pc != endPC && (probing || int(a.steps) < b.MaxSteps) {
			out = append(out, move{kind: moveActor, actor: int16(i)})
		}
	}
	if (probing || int(n.ticks) < b.MaxTicks) && e.nextDeadline(n) > n.now {
		out = append(out, move{kind: moveTick})
	}
	if probing {
		if n.down {
			out = append(out, move{kind: movePromote})
		}
		return out
	}
	if int(n.pauses) < b.MaxPauses {
		for i := range n.actors {
			if a := &n.actors[i]; a.holds && a.deadline != noDeadline && a.deadline > n.now {
				out = append(out, move{kind: movePause, actor: int16(i)})
			}
		}
	}
	if e.r.Replica {
		if !n.down && n.replica != nil && len(n.pending) > 0 {
			out = append(out, move{kind: moveReplicate})
		}
		if !n.down && n.replica != nil && int(n.failover) < b.MaxFailovers {
			out = append(out, move{kind: moveCrash})
		}
		if n.down {
			out = append(out, move{kind: movePromote})
		}
	}
	return out
}

// nextDeadline returns the nearest instant after now at which a key
// expires or an actor's believed lease runs out (n.now when none).
func (e *engine) nextDeadline(n *node) int64 {
	if !n.deadlineKnown {
		n.deadline, n.deadlineKnown = e.findDeadline(n), true
	}
	return n.deadline
}

// findDeadline computes what nextDeadline caches in the node.
func (e *engine) findDeadline(n *node) int64 {
	best := int64(-1)
	consider := func(t int64) {
		if t > n.now && (best < 0 || t < best) {
			best = t
		}
	}
	now := time.UnixMilli(startMs + n.now)
	if t, ok := n.primary.NextExpiry(now); ok && !n.down {
		consider(t.UnixMilli() - startMs)
	}
	if n.replica != nil {
		if t, ok := n.replica.NextExpiry(now); ok {
			consider(t.UnixMilli() - startMs)
		}
	}
	for i := range n.actors {
		if a := &n.actors[i]; a.holds && a.deadline != noDeadline {
			consider(a.deadline)
		}
	}
	if e.r.Deadlines != nil {
		for _, d := range e.r.Deadlines(&View{r: e.r, n: n}) {
			consider(d.Milliseconds())
		}
	}
	if best < 0 {
		return n.now
	}
	return best
}

// apply returns the state mv leads to from n; n is not changed.
func (e *engine) apply(n *node, mv move) (*node, error) {
	c := *n
	c.deadlineKnown = false
	c.actors = append([]actorState(nil), n.actors...)
	switch mv.kind {
	case moveActor:
		return &c, e.step(&c, int(mv.actor))
	case moveTick:
		c.ticks++
		e.advance(&c, e.nextDeadline(n))
	case movePause:
		c.pauses++
		e.advance(&c, n.actors[mv.actor].deadline)
	case moveReplicate:
		c.replica = c.replica.Apply(c.pending[0]).Live(time.UnixMilli(startMs + c.now))
		c.pending = c.pending[1:]
		if e.rec != nil {
			e.rec.Call = "replica receives the oldest pending write"
		}
	case moveCrash:
		c.failover++
		c.down = true
		if e.rec != nil {
			e.rec.Call = fmt.Sprintf("primary crashes (%s lost)", plural(len(c.pending), "undelivered write"))
		}
		c.pending = nil
	case movePromote:
		c.primary, c.replica, c.down = c.replica, nil, false
		if e.rec != nil {
			e.rec.Call = "replica promoted to primary"
		}
	}
	return &c, nil
}

// advance moves the clock of c to t, dropping keys that expire by then.
func (e *engine) advance(c *node, t int64) {
	if e.rec != nil {
		e.rec.Call = fmt.Sprintf("clock jumps %s -> %s", fmtTime(c.now), fmtTime(t))
	}
	c.now = t
	now := time.UnixMilli(startMs + t)
	c.primary = c.primary.Live(now)
	if c.replica != nil {
		c.replica = c.replica.Live(now)
	}
}

// step runs actor i's next step in c.
func (e *engine) step(c *node, i int) (err error) {
	ca := e.actor(i)
	a := &c.actors[i]
	a.vars = append([]int64(nil), a.vars...)
	st := &ca.Steps[a.pc]
	ctx := &Ctx{actor: ca, state: a, now: c.now}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("actor %q step %q panicked: %v", ca.Name, ca.names[a.pc], p)
		}
	}()
	args := st.Args
	if st.Call != nil {
		args = st.Call(ctx)
	}
	var reply simulate.Reply
	if st.Script != nil || len(st.Command) > 0 {
		if e.rec != nil {
			e.rec.Call = callText(st, args)
		}
		reply, err = e.call(c, st, args)
		if err != nil {
			return err
		}
		if e.rec != nil {
			e.rec.Reply = replyText(reply)
		}
	}
	ctx.Reply = reply
	next := ""
	if st.Then != nil {
		next = st.Then(ctx)
	}
	if ctx.err != nil {
		return ctx.err
	}
	a.steps++
	switch next {
	case "":
		a.pc++
		if int(a.pc) >= len(ca.Steps) {
			a.pc = endPC
		}
	case End:
		a.pc = endPC
	default:
		pc, ok := ca.labels[next]
		if !ok {
			return fmt.Errorf("actor %q step %q: Then returned %q, which labels no step; return a step's Label, \"\" for the next step or explore.End", ca.Name, ca.names[a.pc], next)
		}
		a.pc = int32(pc)
	}
	return nil
}
