package explore

import (
	"context"
	"errors"
	"fmt"
	"time"
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
	// Reduced says States counts one state per class of states that differ
	// only by a permutation of the Model's Symmetric actors.
	Reduced bool
	// FullStates is the number of states the classes visited hold: as
	// many as the search without the reduction visits (States when not
	// Reduced).
	FullStates int
}

// StatesPerSecond is States divided by Elapsed.
func (r *Result) StatesPerSecond() float64 {
	if r == nil || r.Elapsed <= 0 {
		return 0
	}
	return float64(r.States) / r.Elapsed.Seconds()
}

// String summarises the result in one line.
func (r *Result) String() string {
	if r == nil {
		return "explore: no result"
	}
	verdict := "all properties hold"
	if r.Violation != nil {
		verdict = r.Violation.Property + " violated"
	}
	states := "states"
	if r.Reduced {
		states = fmt.Sprintf("states up to symmetry (%d in all)", r.FullStates)
	}
	return fmt.Sprintf("model %q: %s; %d %s, %d transitions in %v (%.0f states/s)",
		r.Model, verdict, r.States, states, r.Transitions, r.Elapsed.Round(time.Millisecond), r.StatesPerSecond())
}

// Run explores every interleaving of the model's actors and environment
// events within its bounds, breadth first, so the first violation found
// has a shortest trace. An error means the model itself is wrong (bad
// declarations, a step the simulator refuses, too many states), not that
// a property failed: that is Result.Violation.
func Run(m *Model) (*Result, error) { return RunContext(context.Background(), m) }

// RunContext is Run with a context that can stop a long exploration; the
// error then wraps ctx.Err().
func RunContext(ctx context.Context, m *Model) (res *Result, err error) {
	if ctx == nil {
		return nil, errors.New("explore: RunContext: nil context: pass context.Background() or a context with a deadline")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("explore: RunContext: %w", err)
	}
	r, err := m.validate()
	if err != nil {
		return nil, err
	}
	defer func() {
		// Steps, invariants and Call recover on their own and say where;
		// this catches the rest (Deadlines), so user code never crashes a test binary.
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("explore: model %q: a function of the model panicked: %v", m.Name, p)
		}
	}()
	e := newEngine(ctx, r)
	began := time.Now()
	res, err = e.explore()
	if res != nil {
		res.Elapsed = time.Since(began)
	}
	return res, err
}

// explore is the breadth-first search.
func (e *engine) explore() (*Result, error) {
	res := &Result{Model: e.r.Name, Reduced: e.reduce}
	root, err := e.initial()
	if err != nil {
		return nil, err
	}
	if e.sym != nil {
		if err := e.checkSymmetricStart(root); err != nil {
			return nil, err
		}
	}
	nodes := []*node{root}
	visited := map[string]int32{string(e.key(root)): 0}
	res.FullStates = e.class
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
			res.FullStates += e.class
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
		bad, err := e.safeCheck(inv.Name, inv.Check, view)
		if err != nil {
			return nil, err
		}
		if bad != nil {
			return e.violation(nodes, i, inv.Name, bad.Error(), -1)
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
		bad, err := e.safeCheck(inv.Name, func(after *View) error { return inv.Step(&View{r: e.r, n: n}, after) }, &View{r: e.r, n: child})
		if err != nil {
			return nil, err
		}
		if bad != nil {
			return e.violation(append(nodes[:len(nodes):len(nodes)], child), int32(len(nodes)), inv.Name, bad.Error(), -1)
		}
	}
	return nil, nil
}

// safeCheck runs one invariant: bad is its verdict, err a panic in it
// (a bug in the model, reported as such rather than as a violation).
func (e *engine) safeCheck(name string, f func(*View) error, v *View) (bad, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("explore: model %q: invariant %q panicked: %v", e.r.Name, name, p)
		}
	}()
	return f(v), nil
}
