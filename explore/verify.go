package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// VerifySymmetry checks a model's Symmetric declaration on the model as
// given (give it bounds small enough to explore without the reduction).
// It explores every state without merging any, and beside each one keeps
// its twins: for each pair of neighbouring actors of a group, the state
// the same moves reach with those two actors' roles traded. On every
// transition it checks that the twins stay twins: the traded move is
// possible, the state it reaches is the other's with the two actors'
// positions, budgets, beliefs and variables swapped and their names
// swapped wherever they stand in the keyspace, and every invariant and
// progress property gives the same verdict in both. Such pairs generate
// every permutation of a group, so when the check holds, the reduction
// Run applies merges only states with the same future. A keyspace the
// reduction cannot rename (a stream) is an error here.
//
// The error says which actors are told apart, after which moves, and how;
// it is nil when the declaration holds within the bounds. Properties are
// compared, not reported: the Result's Violation is always nil. Run finds
// the violations.
func VerifySymmetry(m *Model) (res *Result, err error) {
	r, err := m.validate()
	if err != nil {
		return nil, err
	}
	if r.sym == nil {
		return nil, fmt.Errorf("explore: model %q declares no Symmetric actors; there is no symmetry to verify", m.Name)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("explore: model %q: a function of the model panicked: %v", m.Name, p)
		}
	}()
	e := newEngine(context.Background(), r)
	e.reduce = false
	began := time.Now()
	res, err = e.verifySymmetry()
	if res != nil {
		res.Elapsed = time.Since(began)
	}
	return res, err
}

// verifySymmetry is VerifySymmetry's search.
func (e *engine) verifySymmetry() (*Result, error) {
	res := &Result{Model: e.r.Name}
	gens := e.sym.generators()
	root, err := e.initial()
	if err != nil {
		return nil, err
	}
	if _, err := e.readKeyspaces(root); err != nil {
		return nil, fmt.Errorf("explore: model %q: %w", e.r.Name, err)
	}
	if err := e.checkSymmetricStart(root); err != nil {
		return nil, err
	}
	nodes := []*node{root}
	twins := [][]*node{slices.Repeat([]*node{root}, len(gens))}
	visited := map[string]int32{string(e.rawKey(root)): 0}
	var moves, twinMoves, traded []move
	for qi := 0; qi < len(nodes); qi++ {
		n, tw := nodes[qi], twins[qi]
		moves = e.moves(n, moves[:0], false)
		for gi, g := range gens {
			traded = traded[:0]
			for _, mv := range moves {
				traded = append(traded, tradeMove(mv, g))
			}
			twinMoves = e.moves(tw[gi], twinMoves[:0], false)
			if !sameMoves(traded, twinMoves) {
				return nil, e.asymmetry(nodes, int32(qi), g, "the moves possible differ")
			}
		}
		for _, mv := range moves {
			res.Transitions++
			c, err := e.apply(n, mv)
			if err != nil {
				return nil, e.modelError(nodes, int32(qi), mv, err)
			}
			c.parent, c.move = int32(qi), mv
			withC := append(nodes[:len(nodes):len(nodes)], c)
			ci := int32(len(nodes))
			ctw := make([]*node, len(gens))
			for gi, g := range gens {
				t, err := e.apply(tw[gi], tradeMove(mv, g))
				if err != nil {
					return nil, e.modelError(nodes, int32(qi), mv, fmt.Errorf("the twin trading %s: %w", e.pairText(g), err))
				}
				if msg, err := e.compareTwins(c, t, g); err != nil || msg != "" {
					if err != nil {
						return nil, fmt.Errorf("explore: model %q: %w", e.r.Name, err)
					}
					return nil, e.asymmetry(withC, ci, g, msg)
				}
				if msg, err := e.compareVerdicts(n, c, tw[gi], t); err != nil || msg != "" {
					if err != nil {
						return nil, err
					}
					return nil, e.asymmetry(withC, ci, g, msg)
				}
				ctw[gi] = t
			}
			k := string(e.rawKey(c))
			if _, seen := visited[k]; seen {
				continue
			}
			visited[k] = ci
			nodes, twins = append(nodes, c), append(twins, ctw)
			if len(nodes) > e.r.bounds.MaxStates {
				return nil, fmt.Errorf("explore: model %q has more than %d states within its bounds; verify the symmetry on smaller bounds, or raise Bounds.MaxStates", e.r.Name, e.r.bounds.MaxStates)
			}
			for gi, g := range gens {
				for p := range e.r.probes {
					a, err := e.progress(c, p)
					if err != nil {
						return nil, err
					}
					b, err := e.progress(ctw[gi], p)
					if err != nil {
						return nil, err
					}
					if a != b {
						return nil, e.asymmetry(nodes, ci, g, fmt.Sprintf("progress %q holds in one state and not in its twin", e.r.Progress[p].Name))
					}
				}
			}
		}
	}
	res.States, res.FullStates = len(nodes), len(nodes)
	return res, nil
}

// tradeMove is mv with the actor it names traded by g.
func tradeMove(mv move, g []int32) move {
	if mv.kind == moveActor || mv.kind == movePause {
		mv.actor = int16(g[mv.actor])
	}
	return mv
}

func sameMoves(a, b []move) bool {
	if len(a) != len(b) {
		return false
	}
	cmp := func(x, y move) int {
		if x.kind != y.kind {
			return int(x.kind) - int(y.kind)
		}
		return int(x.actor) - int(y.actor)
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}

// compareTwins says how t differs from c with the actors g trades
// traded ("" when it does not).
func (e *engine) compareTwins(c, t *node, g []int32) (string, error) {
	if _, err := e.readKeyspaces(c); err != nil {
		return "", err
	}
	want := string(e.permKey(nil, c, g))
	if _, err := e.readKeyspaces(t); err != nil {
		return "", err
	}
	id := identity(len(t.actors))
	if want == string(e.permKey(nil, t, id)) {
		return "", nil
	}
	gotText := e.stateText(t, id)
	_, _ = e.readKeyspaces(c) // it was read above
	wantText := e.stateText(c, g)
	return "the twin state differs from the state with the actors traded:\n" + lineDiff(wantText, gotText), nil
}

// compareVerdicts says which invariant judges the transition n -> c and
// its twin tn -> tc differently.
func (e *engine) compareVerdicts(n, c, tn, tc *node) (string, error) {
	for _, inv := range e.r.Invariants {
		if inv.Check != nil {
			a, err := e.safeCheck(inv.Name, inv.Check, &View{r: e.r, n: c})
			if err != nil {
				return "", err
			}
			b, err := e.safeCheck(inv.Name, inv.Check, &View{r: e.r, n: tc})
			if err != nil {
				return "", err
			}
			if (a == nil) != (b == nil) {
				return fmt.Sprintf("invariant %q holds in one state and not in its twin (%v / %v)", inv.Name, a, b), nil
			}
		}
		if inv.Step != nil {
			step := func(before *node) func(*View) error {
				return func(after *View) error { return inv.Step(&View{r: e.r, n: before}, after) }
			}
			a, err := e.safeCheck(inv.Name, step(n), &View{r: e.r, n: c})
			if err != nil {
				return "", err
			}
			b, err := e.safeCheck(inv.Name, step(tn), &View{r: e.r, n: tc})
			if err != nil {
				return "", err
			}
			if (a == nil) != (b == nil) {
				return fmt.Sprintf("step invariant %q holds on one step and not on its twin (%v / %v)", inv.Name, a, b), nil
			}
		}
	}
	return "", nil
}

// asymmetry reports a twin that is not one, after the moves to nodes[i].
func (e *engine) asymmetry(nodes []*node, i int32, g []int32, what string) error {
	var steps []string
	for _, m := range path(nodes, i) {
		steps = append(steps, e.moveText(m))
	}
	after := "in the initial state"
	if len(steps) > 0 {
		after = "after the moves " + strings.Join(steps, ", ") + " (and the same moves with their roles traded)"
	}
	return fmt.Errorf("explore: model %q: the actors %s are not interchangeable: %s, %s",
		e.r.Name, e.pairText(g), after, what)
}

func (e *engine) moveText(m move) string {
	switch m.kind {
	case moveActor:
		return e.actor(int(m.actor)).Name
	case movePause:
		return "pause " + e.actor(int(m.actor)).Name
	}
	return [...]string{"", "tick", "pause", "replicate", "crash", "promote"}[m.kind]
}

func (e *engine) pairText(g []int32) string {
	a, b := e.swapped(g)
	return fmt.Sprintf("%q and %q", a, b)
}

// stateText renders n with each actor i in the place and under the name
// of actor perm[i], one line per actor and per key; s.parts must hold n's
// keyspaces.
func (e *engine) stateText(n *node, perm []int32) []string {
	s := e.sym
	var out []string
	for slot := range n.actors {
		for i := range n.actors {
			if int(perm[i]) != slot {
				continue
			}
			a, ca := &n.actors[i], e.actor(slot)
			line := fmt.Sprintf("actor %s at %q after %d steps", ca.Name, ca.label(int(a.pc)), a.steps)
			switch {
			case a.holds && a.deadline == noDeadline:
				line += ", believes it holds (no deadline)"
			case a.holds:
				line += ", believes it holds until " + fmtTime(a.deadline)
			}
			if len(a.vars) > 0 {
				line += fmt.Sprintf(", vars %v", a.vars)
			}
			out = append(out, line)
		}
	}
	for pi, p := range s.parts {
		where := "primary"
		if pi == 1 {
			where = "replica"
		} else if pi > 1 {
			where = "pending write"
		}
		for _, v := range p.entries {
			line := fmt.Sprintf("%s %q %s", where, s.renamed(v.key, perm), v.head)
			for i, t := range v.items {
				line += fmt.Sprintf(" %q", s.renamed(t, perm))
				if v.layout == layoutZSet {
					line += "@" + v.scores[i]
				}
			}
			out = append(out, line)
		}
	}
	return out
}

// lineDiff lists the lines only one of want and got has.
func lineDiff(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "  want %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "  got  %s\n", l)
		}
	}
	if b.Len() == 0 {
		b.WriteString("  (the same lines in another order)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
