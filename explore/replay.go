package explore

import (
	"fmt"
	"strings"
	"time"
)

// violation replays the path to nodes[i] with recording on and returns the
// report; probe is the index of the progress property broken, or -1.
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
