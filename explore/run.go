package explore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlua/redlua/simulate"
)

// Result is what one exploration found.
type Result struct {
	// Model is the model's name.
	Model string
	// States is the number of distinct states visited; Transitions the
	// number of steps and events tried from them (most lead to a state
	// already seen).
	States, Transitions int
	// Elapsed is the time the exploration took.
	Elapsed time.Duration
	// Violation is the first property found broken, with the shortest
	// trace that breaks it; nil when every property holds within the bounds.
	Violation *Violation
}

// StatesPerSecond is States divided by Elapsed.
func (r *Result) StatesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.States) / r.Elapsed.Seconds()
}

// String summarises the result in one line.
func (r *Result) String() string {
	verdict := "all properties hold"
	if r.Violation != nil {
		verdict = r.Violation.Property + " violated"
	}
	return fmt.Sprintf("model %q: %s; %d states, %d transitions in %v (%.0f states/s)",
		r.Model, verdict, r.States, r.Transitions, r.Elapsed.Round(time.Millisecond), r.StatesPerSecond())
}

// Run explores every interleaving of the model's actors and environment
// events within its bounds, breadth first, so the first violation found
// has a shortest trace. An error means the model itself is wrong (bad
// declarations, a step the simulator refuses, too many states), not that
// a property failed: that is Result.Violation.
func Run(m *Model) (*Result, error) { return RunContext(context.Background(), m) }

// RunContext is Run with a context that can stop a long exploration; the
// error then wraps ctx.Err().
func RunContext(ctx context.Context, m *Model) (*Result, error) {
	r, err := m.validate()
	if err != nil {
		return nil, err
	}
	e := newEngine(ctx, r)
	began := time.Now()
	res, err := e.explore()
	if res != nil {
		res.Elapsed = time.Since(began)
	}
	return res, err
}

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
}

// callResult is a memoised run: its reply and the keyspace after it.
type callResult struct {
	reply simulate.Reply
	after *simulate.Snapshot
}

// maxMemoCalls bounds the run memo; past it, runs are simply not remembered.
const maxMemoCalls = 1 << 20

func newEngine(ctx context.Context, r *resolved) *engine {
	clock := simulate.NewVirtualClock(startTime())
	return &engine{r: r, ctx: ctx, clock: clock, srv: simulate.New(simulate.WithClock(clock), simulate.WithTraceLimit(0))}
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

// explore is the breadth-first search.
func (e *engine) explore() (*Result, error) {
	res := &Result{Model: e.r.Name}
	root, err := e.initial()
	if err != nil {
		return nil, err
	}
	nodes := []*node{root}
	visited := map[string]int32{string(e.key(root)): 0}
	if v, err := e.checkState(nodes, 0); err != nil || v != nil {
		res.States, res.Violation = 1, v
		return res, err
	}
	var moves []move
	for qi := 0; qi < len(nodes); qi++ {
		if qi%256 == 0 {
			if err := e.ctx.Err(); err != nil {
				return nil, fmt.Errorf("explore: model %q stopped after %d states: %w", e.r.Name, len(nodes), err)
			}
		}
		n := nodes[qi]
		moves = e.moves(n, moves[:0], false)
		for _, mv := range moves {
			res.Transitions++
			child, err := e.apply(n, mv)
			if err != nil {
				return nil, e.modelError(nodes, int32(qi), mv, err)
			}
			child.parent, child.move = int32(qi), mv
			if v, err := e.checkStep(nodes, n, child); err != nil || v != nil {
				res.States, res.Violation = len(nodes), v
				return res, err
			}
			k := e.key(child)
			if _, seen := visited[string(k)]; seen {
				continue
			}
			visited[string(k)] = int32(len(nodes))
			nodes = append(nodes, child)
			if len(nodes) > e.r.bounds.MaxStates {
				return nil, fmt.Errorf("explore: model %q has more than %d states within its bounds; lower Bounds.MaxSteps or MaxTicks, or raise Bounds.MaxStates", e.r.Name, e.r.bounds.MaxStates)
			}
			if v, err := e.checkState(nodes, int32(len(nodes)-1)); err != nil || v != nil {
				res.States, res.Violation = len(nodes), v
				return res, err
			}
		}
	}
	res.States = len(nodes)
	return res, nil
}

// checkState checks the invariants and progress properties in nodes[i]
// and returns the violation with its trace.
func (e *engine) checkState(nodes []*node, i int32) (*Violation, error) {
	n := nodes[i]
	view := &View{r: e.r, n: n}
	for _, inv := range e.r.Invariants {
		if inv.Check == nil {
			continue
		}
		if err := safeCheck(inv.Check, view); err != nil {
			return e.violation(nodes, i, inv.Name, err.Error(), -1)
		}
	}
	for p := range e.r.probes {
		ok, err := e.progress(n, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			probe := e.r.probes[p]
			msg := fmt.Sprintf("if every actor stops here, %s cannot take the lock within %d steps (the clock may pass every deadline)", probe.Name, e.r.within[p])
			return e.violation(nodes, i, e.r.Progress[p].Name, msg, p)
		}
	}
	return nil, nil
}

// checkStep checks the Step invariants on the transition from n to child
// (child not yet in nodes); a violation's trace ends with that step.
func (e *engine) checkStep(nodes []*node, n, child *node) (*Violation, error) {
	for _, inv := range e.r.Invariants {
		if inv.Step == nil {
			continue
		}
		err := safeCheck(func(after *View) error { return inv.Step(&View{r: e.r, n: n}, after) }, &View{r: e.r, n: child})
		if err != nil {
			return e.violation(append(nodes[:len(nodes):len(nodes)], child), int32(len(nodes)), inv.Name, err.Error(), -1)
		}
	}
	return nil, nil
}

func safeCheck(f func(*View) error, v *View) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the invariant panicked: %v", p)
		}
	}()
	return f(v)
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

// errPrimaryDown is the reply to every call while no primary is up.
const errPrimaryDown = "ERR explore: the primary is down (it crashed and the replica is not promoted yet)"

// call runs one script or command on c's primary and records its writes
// for the replica.
func (e *engine) call(c *node, st *Step, args []any) (simulate.Reply, error) {
	if c.down {
		return simulate.Reply{Kind: simulate.KindError, Str: errPrimaryDown}, nil
	}
	cmd := st.Command
	if st.Script == nil && st.Call != nil {
		cmd = args
	}
	if st.Script == nil && len(cmd) > 0 {
		if name, ok := cmd[0].(string); ok && strings.EqualFold(name, "WAIT") {
			return e.wait(c), nil
		}
	}
	memo := e.callKey(c, st, args, cmd)
	hit, ok := e.calls[string(memo)]
	if !ok {
		e.srv.Restore(c.primary)
		e.clock.Set(time.UnixMilli(startMs + c.now))
		var err error
		if st.Script != nil {
			hit.reply, err = e.srv.RunReply(e.ctx, st.Script, st.Keys, args...)
		} else {
			hit.reply, err = e.srv.DoReply(e.ctx, cmd...)
		}
		if err != nil {
			return hit.reply, err
		}
		hit.after = e.srv.Snapshot()
		if e.calls == nil {
			e.calls = map[string]callResult{}
		}
		if len(e.calls) < maxMemoCalls {
			e.calls[string(memo)] = hit
		}
	}
	reply, after := hit.reply, hit.after
	if d := simulate.Diff(c.primary, after); !d.Empty() {
		c.primary = after
		if c.replica != nil {
			c.pending = append(append([]*simulate.Delta(nil), c.pending...), d)
		}
	}
	return reply, nil
}

// callKey encodes what a run depends on: the script (or command), its
// keys and arguments, the clock and the whole keyspace.
func (e *engine) callKey(c *node, st *Step, args, cmd []any) []byte {
	b := e.callBuf[:0]
	if st.Script != nil {
		b = append(b, st.Script.SHA1...)
		for _, k := range st.Keys {
			b = appendWord(b, k)
		}
		b = append(b, '|')
	} else {
		args = cmd
	}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			b = appendWord(b, v)
		case int:
			b = appendWord(b, strconv.Itoa(v))
		case int64:
			b = appendWord(b, strconv.FormatInt(v, 10))
		default:
			b = appendWord(b, fmt.Sprintf("%T:%v", v, v))
		}
	}
	b = appendInt(b, c.now)
	b = c.primary.AppendCanonical(b)
	e.callBuf = b
	return b
}

func appendWord(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// wait answers WAIT: with a replica, everything pending arrives and one
// replica acknowledges; without one, none does.
func (e *engine) wait(c *node) simulate.Reply {
	if c.replica == nil {
		return simulate.Reply{Kind: simulate.KindInt, Int: 0}
	}
	for _, d := range c.pending {
		c.replica = c.replica.Apply(d)
	}
	c.pending = nil
	return simulate.Reply{Kind: simulate.KindInt, Int: 1}
}

// key encodes everything about n that decides its future: the clock, the
// event counters, each actor's position, budget, belief and variables, and
// the keyspaces with the pending replication.
func (e *engine) key(n *node) []byte {
	b := e.buf[:0]
	b = appendInt(b, n.now)
	b = appendInt(b, int64(n.ticks)<<32|int64(n.pauses)<<16|int64(n.failover))
	if n.down {
		b = append(b, 'D')
	}
	for i := range n.actors {
		a := &n.actors[i]
		pc, steps := a.pc, a.steps
		if pc == endPC || int(steps) >= e.r.bounds.MaxSteps && e.probe == nil {
			pc, steps = endPC, 0 // a stopped actor's budget no longer matters
		}
		b = appendInt(b, int64(pc)<<32|int64(steps))
		if a.holds {
			b = appendInt(b, a.deadline)
		} else {
			b = append(b, '-')
		}
		for _, v := range a.vars {
			b = appendInt(b, v)
		}
		b = append(b, '|')
	}
	b = append(b, '#')
	b = n.primary.AppendCanonicalWithout(b, e.r.Unobserved)
	if n.replica != nil {
		b = append(b, '#')
		b = n.replica.AppendCanonicalWithout(b, e.r.Unobserved)
		for _, d := range n.pending {
			b = d.AppendCanonical(b)
		}
	}
	e.buf = b
	return b
}

func appendInt(b []byte, v int64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// progress reports whether the progress client p gets the lock from n with
// every model actor stopped: a small breadth-first search of its steps and
// clock jumps.
func (e *engine) progress(n *node, p int) (bool, error) {
	if e.progressSeen == nil {
		e.progressSeen = make([]map[string]bool, len(e.r.probes))
		for i := range e.progressSeen {
			e.progressSeen[i] = map[string]bool{}
		}
	}
	memo := e.progressKey(n)
	if ok, seen := e.progressSeen[p][string(memo)]; seen {
		return ok, nil
	}
	ok, err := e.probeFrom(n, p)
	if err == nil {
		e.progressSeen[p][string(memo)] = ok
	}
	return ok, err
}

// progressKey encodes what a progress probe from n depends on.
func (e *engine) progressKey(n *node) []byte {
	stopped := *n
	stopped.actors = make([]actorState, len(n.actors))
	for i, a := range n.actors {
		stopped.actors[i] = actorState{pc: endPC, holds: a.holds, deadline: a.deadline}
	}
	stopped.ticks, stopped.pauses, stopped.failover = 0, 0, 0
	return e.key(&stopped)
}

// probeFrom runs the search progress memoises.
func (e *engine) probeFrom(n *node, p int) (bool, error) {
	probe := e.r.probes[p]
	e.probe = &probe
	defer func() { e.probe = nil }()
	start := *n
	start.actors = append(append([]actorState(nil), n.actors...), actorState{vars: make([]int64, len(probe.Vars))})
	pi := len(start.actors) - 1
	level := []*node{&start}
	seen := map[string]bool{string(e.key(&start)): true}
	var moves []move
	for depth := 0; depth < e.r.within[p] && len(level) > 0; depth++ {
		var next []*node
		for _, s := range level {
			moves = e.moves(s, moves[:0], true)
			for _, mv := range moves {
				c, err := e.apply(s, mv)
				if err != nil {
					return false, fmt.Errorf("explore: model %q: progress client %q: %w", e.r.Name, probe.Name, err)
				}
				if c.actors[pi].valid(c.now) {
					return true, nil
				}
				if k := string(e.key(c)); !seen[k] {
					seen[k] = true
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return false, nil
}
