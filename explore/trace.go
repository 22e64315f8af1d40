package explore

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redlua/redlua/simulate"
)

// Violation is a property found broken, with the shortest sequence of
// steps and events that breaks it.
type Violation struct {
	// Model and Property name what was checked; Message says what is wrong
	// in the last state of Trace.
	Model, Property, Message string
	// Trace leads from the initial state to the violating one.
	Trace []TraceStep
	// Attempt is, for a progress property, one try of its client from the
	// last state with every actor stopped (ticking whenever it can): what
	// it runs into. Every other try within the bound fails as well.
	Attempt []TraceStep
}

// TraceStep is one step of a counterexample.
type TraceStep struct {
	// At is the virtual time after the step.
	At time.Duration
	// Actor is the actor that stepped, or "env" for an environment event.
	Actor string
	// Label is the step's label, or the event's name (tick, pause,
	// replicate, crash, promote).
	Label string
	// Call is the script or command with its arguments, or what the event did.
	Call string
	// Reply is the call's reply ("" for events and local steps).
	Reply string
	// Notes are what changed: the actor's beliefs and variables, then the
	// keyspace diff ("+ key = value", "~ key = new value", "- key").
	Notes []string
}

// Error makes a Violation usable as an error; it is the full report.
func (v *Violation) Error() string { return v.String() }

// String renders the violation as a readable trace: a headline, then one
// numbered line per step (time, actor, label, call -> reply) with what the
// step changed indented below it.
func (v *Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %q: %s violated after %s: %s\n", v.Model, v.Property, plural(len(v.Trace), "step"), v.Message)
	wt, wa := 0, 0
	for _, s := range v.Trace {
		wt = max(wt, len(fmtTime(s.At.Milliseconds())))
		wa = max(wa, len(s.Actor))
	}
	for _, s := range v.Attempt {
		wt = max(wt, len(fmtTime(s.At.Milliseconds())))
		wa = max(wa, len(s.Actor))
	}
	writeSteps(&b, v.Trace, "", wt, wa)
	if len(v.Attempt) > 0 {
		fmt.Fprintf(&b, "then, with every actor stopped, one try of %s:\n", v.Attempt[0].Actor)
		writeSteps(&b, v.Attempt, "+", wt, wa)
	}
	return b.String()
}

func writeSteps(b *strings.Builder, steps []TraceStep, mark string, wt, wa int) {
	for i, s := range steps {
		line := fmt.Sprintf("%3s  %-*s  %-*s  %s: %s", mark+strconv.Itoa(i+1), wt, fmtTime(s.At.Milliseconds()), wa, s.Actor, s.Label, s.Call)
		if s.Reply != "" {
			line += " -> " + s.Reply
		}
		b.WriteString(strings.TrimRight(line, " :") + "\n")
		pad := strings.Repeat(" ", 3+2+wt+2+wa+2+2)
		for _, n := range s.Notes {
			b.WriteString(pad + n + "\n")
		}
	}
}

// violation replays the path to nodes[i] with recording on and returns the
// report.
// probe is the index of the progress property broken, or -1.
func (e *engine) violation(nodes []*node, i int32, property, msg string, probe int) (*Violation, error) {
	trace, err := e.replay(nodes, i)
	if err != nil {
		return nil, err
	}
	v := &Violation{Model: e.r.Name, Property: property, Message: msg, Trace: trace}
	if probe >= 0 {
		if v.Attempt, err = e.attempt(nodes[i], probe); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// attempt records one try of progress client p from n: a clock jump
// whenever one is possible and the last move was not one, its own step
// otherwise.
func (e *engine) attempt(n *node, p int) ([]TraceStep, error) {
	probe := e.r.probes[p]
	e.probe = &probe
	defer func() { e.probe, e.rec = nil, nil }()
	cur := *n
	cur.actors = append(append([]actorState(nil), n.actors...), actorState{vars: make([]int64, len(probe.Vars))})
	var out []TraceStep
	var moves []move
	ticked := false
	for len(out) < e.r.within[p] {
		moves = e.moves(&cur, moves[:0], true)
		if len(moves) == 0 {
			break
		}
		mv := moves[0]
		for _, m := range moves {
			if m.kind != moveActor && !ticked {
				mv = m
			}
		}
		ticked = mv.kind != moveActor
		rec := &TraceStep{}
		e.rec = rec
		c, err := e.apply(&cur, mv)
		if err != nil {
			return nil, err
		}
		e.describe(rec, &cur, c, mv)
		out = append(out, *rec)
		cur = *c
	}
	return out, nil
}

// path returns the moves from the initial state to nodes[i].
func path(nodes []*node, i int32) []move {
	var out []move
	for ; nodes[i].parent >= 0; i = nodes[i].parent {
		out = append(out, nodes[i].move)
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// replay runs the path to nodes[i] again from the initial state (every
// step is deterministic), recording each step.
func (e *engine) replay(nodes []*node, i int32) ([]TraceStep, error) {
	defer func() { e.rec = nil }()
	n, err := e.initial()
	if err != nil {
		return nil, err
	}
	var out []TraceStep
	for _, mv := range path(nodes, i) {
		rec := &TraceStep{}
		e.rec = rec
		c, err := e.apply(n, mv)
		if err != nil {
			return nil, err
		}
		e.describe(rec, n, c, mv)
		out = append(out, *rec)
		n = c
	}
	return out, nil
}

// describe fills in who moved and what changed from n to c.
func (e *engine) describe(rec *TraceStep, n, c *node, mv move) {
	rec.At = time.Duration(c.now) * time.Millisecond
	rec.Actor = "env"
	switch mv.kind {
	case moveActor:
		ca := e.actor(int(mv.actor))
		before, after := &n.actors[mv.actor], &c.actors[mv.actor]
		rec.Actor, rec.Label = ca.Name, ca.names[before.pc]
		if rec.Call == "" {
			rec.Call = "(local step)"
		}
		rec.Notes = append(rec.Notes, beliefNotes(ca, before, after)...)
	case moveTick:
		rec.Label = "tick"
	case movePause:
		rec.Label = "pause " + e.actor(int(mv.actor)).Name
	case moveReplicate:
		rec.Label = "replicate"
	case moveCrash:
		rec.Label = "crash"
	case movePromote:
		rec.Label = "promote"
	}
	if mv.kind == moveTick || mv.kind == movePause {
		for i := range c.actors {
			if n.actors[i].valid(n.now) && !c.actors[i].valid(c.now) {
				rec.Notes = append(rec.Notes, e.actor(i).Name+"'s lease has run out")
			}
		}
	}
	if mv.kind == movePromote {
		rec.Notes = append(rec.Notes, "the primary's keyspace is now the replica's")
	}
	rec.Notes = append(rec.Notes, keyDiff("", n.primary, n.now, c.primary, c.now)...)
	if n.replica != nil && c.replica != nil {
		rec.Notes = append(rec.Notes, keyDiff("replica: ", n.replica, n.now, c.replica, c.now)...)
	}
}

func beliefNotes(ca *compiledActor, before, after *actorState) []string {
	var out []string
	switch {
	case after.holds && (!before.holds || before.deadline != after.deadline):
		if after.deadline == noDeadline {
			out = append(out, ca.Name+" believes it holds the lock (no deadline)")
		} else {
			out = append(out, fmt.Sprintf("%s believes it holds the lock until %s", ca.Name, fmtTime(after.deadline)))
		}
	case before.holds && !after.holds:
		out = append(out, ca.Name+" no longer believes it holds the lock")
	}
	for i, name := range ca.Vars {
		if before.vars[i] != after.vars[i] {
			out = append(out, fmt.Sprintf("%s.%s = %d", ca.Name, name, after.vars[i]))
		}
	}
	return out
}

// keyDiff lists the keys that appear, change or disappear from one
// keyspace to the next.
func keyDiff(prefix string, a *simulate.Snapshot, aNow int64, b *simulate.Snapshot, bNow int64) []string {
	before := map[string]string{}
	for _, d := range a.Dump(time.UnixMilli(startMs + aNow)) {
		before[d.Key] = fmtValue(d, aNow)
	}
	var out []string
	seen := map[string]bool{}
	for _, d := range b.Dump(time.UnixMilli(startMs + bNow)) {
		seen[d.Key] = true
		v := fmtValue(d, bNow)
		old, ok := before[d.Key]
		switch {
		case !ok:
			out = append(out, prefix+"+ "+d.Key+" = "+v)
		case old != v:
			out = append(out, prefix+"~ "+d.Key+" = "+v)
		}
	}
	var gone []string
	for k := range before {
		if !seen[k] {
			gone = append(gone, prefix+"- "+k)
		}
	}
	sort.Strings(gone)
	return append(out, gone...)
}

// fmtValue renders a key's value compactly; sorted-set scores that look
// like instants of the model's clock show as times.
func fmtValue(d simulate.KeyDump, now int64) string {
	var s string
	switch v := d.Value.(type) {
	case string:
		s = strconv.Quote(v)
	case map[string]string:
		fields := make([]string, 0, len(v))
		for f := range v {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for i, f := range fields {
			fields[i] = f + ": " + quoteIfNeeded(v[f])
		}
		s = "{" + strings.Join(fields, ", ") + "}"
	case []simulate.ZMember:
		parts := make([]string, len(v))
		for i, z := range v {
			parts[i] = quoteIfNeeded(z.Member) + " " + fmtScore(z.Score)
		}
		s = "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = quoteIfNeeded(x)
		}
		s = "[" + strings.Join(parts, " ") + "]"
	default:
		s = fmt.Sprint(v)
	}
	if d.PTTL >= 0 {
		s += " (expires " + fmtTime(now+d.PTTL) + ")"
	}
	return s
}

func fmtScore(f float64) string {
	if f >= startMs && f < startMs+1e9 && f == float64(int64(f)) {
		return "@" + fmtTime(int64(f)-startMs)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func fmtTime(ms int64) string { return "t=" + strconv.FormatInt(ms, 10) + "ms" }

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"{}[],:") {
		return strconv.Quote(s)
	}
	return s
}

// callText renders a call: "SET lock a NX PX 100", or for a script
// "mutex.acquire@1 KEYS[lock fence] ARGV[a 100 0 \"\"]".
func callText(st *Step, args []any) string {
	words := func(xs []any) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = quoteIfNeeded(fmt.Sprint(x))
		}
		return strings.Join(parts, " ")
	}
	if st.Script != nil {
		keys := make([]any, len(st.Keys))
		for i, k := range st.Keys {
			keys[i] = k
		}
		return st.Script.ID() + " KEYS[" + words(keys) + "] ARGV[" + words(args) + "]"
	}
	if st.Call != nil {
		return words(args)
	}
	return words(st.Command)
}

// replyText renders a reply as redis-cli would, on one line.
func replyText(r simulate.Reply) string {
	switch r.Kind {
	case simulate.KindNil:
		return "(nil)"
	case simulate.KindStatus:
		return r.Str
	case simulate.KindError:
		return "(error) " + r.Str
	case simulate.KindInt, simulate.KindBool:
		return strconv.FormatInt(r.Int, 10)
	case simulate.KindBulk, simulate.KindVerbatim, simulate.KindBigNumber:
		return strconv.Quote(r.Str)
	case simulate.KindDouble:
		return strconv.FormatFloat(r.Float, 'g', -1, 64)
	}
	parts := make([]string, len(r.Elems))
	for i, el := range r.Elems {
		parts[i] = replyText(el)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// modelError reports a step the model could not take, with the path to it.
func (e *engine) modelError(nodes []*node, from int32, mv move, err error) error {
	var steps []string
	for _, m := range append(path(nodes, from), mv) {
		switch m.kind {
		case moveActor:
			steps = append(steps, e.actor(int(m.actor)).Name)
		default:
			steps = append(steps, [...]string{"", "tick", "pause", "replicate", "crash", "promote"}[m.kind])
		}
	}
	return fmt.Errorf("explore: model %q: %w (after: %s)", e.r.Name, err, strings.Join(steps, ", "))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
