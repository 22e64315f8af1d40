package explore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlua/redlua/registry"
)

// End is the label a step's Then returns to stop its actor: the actor
// takes no more steps (it finished, gave up, or crashed; the model
// cannot tell, and neither can Redis).
const End = "end"

// Model is what Run explores: actors running small programs of Redis
// calls against one simulated server (or a primary and its replica), the
// environment moving the clock and failing over, and the properties that
// must hold in every reachable state.
type Model struct {
	// Name names the model in reports.
	Name string
	// Actors are the clients. Each runs its own program; Run interleaves
	// their steps in every possible order.
	Actors []Actor
	// Setup are commands run on the primary before exploring (each a
	// command name and its arguments), to seed the keyspace.
	Setup [][]any
	// Invariants must hold in every reachable state (safety).
	Invariants []Invariant
	// Progress properties must hold from every reachable state (liveness
	// under crashes: see Progress).
	Progress []Progress
	// Bounds limit the exploration; see Bounds for the defaults.
	Bounds Bounds
	// Deadlines, when set, lists further instants (since the model's
	// start) a tick may stop at: deadlines a script keeps inside values,
	// such as waiter leases in a hash or sorted-set scores, which the
	// checker cannot tell from other data. Key expiries and the leases
	// actors believe in are always considered.
	Deadlines func(v *View) []time.Duration
	// Unobserved names keys left out of the memoisation key: counters that
	// only grow and that no step branches on, such as a fencing counter.
	// States that differ only in them are explored once; traces are still
	// replayed exactly. Naming a key a step does branch on can hide
	// violations.
	Unobserved []string
	// Symmetric lists groups of interchangeable actors, by name: actors
	// that run the same program but for their names, where nothing else in
	// the model tells them apart (Setup, invariants, progress clients and
	// Deadlines treat them alike, and no script breaks a tie by their
	// names). Run then explores one state of each class of states that
	// differ only by a permutation of the actors within a group: their
	// positions, budgets, beliefs and variables, and every place their
	// names stand in the keyspace as words (key names, hash fields and
	// values, set and sorted-set members, list elements, strings, pending
	// replication). A group of k actors can cut the states up to k! times;
	// the traces are still real runs. Names of symmetric actors consist of
	// letters, digits and underscores, and must not stand as a word in data
	// for another reason (a key "{a}" while an actor is named a). A wrong
	// declaration can hide violations: VerifySymmetry (CheckSymmetry in a
	// test) checks one on a small instance of the model.
	Symmetric [][]string
	// Replica runs the model on a primary with one replica that receives
	// each script's writes asynchronously: the environment may deliver
	// them one by one, crash the primary (losing what it had not
	// delivered) and promote the replica. WAIT delivers everything pending.
	Replica bool
}

// Actor is one client: a program of steps and a few local integer
// variables. It starts at its first step with every variable 0 and no
// belief of holding anything.
type Actor struct {
	// Name names the actor in traces and invariants; names are unique.
	Name string
	// Steps is the program. After a step runs, its Then picks the next
	// step by label; without Then the next step in order follows, and
	// after the last one the actor ends.
	Steps []Step
	// Vars names the actor's local variables (Ctx.Var, Ctx.SetVar), for
	// state such as a reentrant hold count or a token read earlier. They
	// are part of the state the checker memoises.
	Vars []string
}

// Step is one atomic action of an actor: a registry script call, a plain
// command, or (with neither) a local decision. Arguments are converted as
// go-redis converts them; pass times as integer milliseconds, not as
// time.Duration (which go-redis sends as nanoseconds).
type Step struct {
	// Label names the step in traces and is what Then returns to jump here
	// (default "step N", N counting from 1).
	Label string
	// Script, when set, is run with Keys as KEYS and Args as ARGV.
	Script *registry.Script
	Keys   []string
	Args   []any
	// Command, when set, is a plain command: its name then its arguments.
	// WAIT is answered by the model: with a replica it delivers every
	// pending write and replies 1; without one it replies 0.
	Command []any
	// Call, when set, computes the arguments at run time (the actor's
	// clock, its variables): Args for a script, the whole Command for a
	// command step.
	Call func(c *Ctx) []any
	// Then runs after the call with its reply in c; it updates the actor's
	// beliefs and variables and returns the label of the next step ("" for
	// the next in order, End to stop).
	Then func(c *Ctx) string
}

// Bounds limit the exploration. Zero fields take the defaults noted.
type Bounds struct {
	// MaxSteps is the number of steps each actor may take (default 6).
	MaxSteps int
	// MaxTicks is how often the clock may jump to the nearest deadline: a
	// key's expiry or a lease an actor believes in (default 2; -1: never).
	MaxTicks int
	// MaxPauses is how often a process pause may happen: the clock jumps
	// past one actor's believed lease while it stands still (default 0).
	MaxPauses int
	// MaxFailovers is how often the primary may crash (only with Replica;
	// default 1, and a promoted replica has no replica of its own).
	MaxFailovers int
	// MaxStates stops a model that grows too large (default 1,000,000);
	// reaching it is an error, not a pass.
	MaxStates int
}

// Invariant is a safety property checked in every reachable state.
type Invariant struct {
	// Name names the property in the violation report.
	Name string
	// Check returns an error saying what is wrong in the state v, or nil.
	Check func(v *View) error
	// Step, when set, is checked on every transition, from the state
	// before to the state after: for properties of what a step does, such
	// as "the lock is only granted to the head of the queue". Check may
	// then be nil.
	Step func(before, after *View) error
}

// Progress says that from every reachable state, if every actor stopped
// there for good (crashed, as a process can), a fresh client running
// Actor still comes to believe it holds the lock within Within of its own
// steps, the clock jumping past deadlines as needed. It catches locks
// that a dead holder blocks forever.
type Progress struct {
	// Name names the property in the violation report.
	Name string
	// Actor is the client that must get through; its name must differ
	// from the model's actors'.
	Actor Actor
	// Within bounds the client's steps plus clock jumps (default 4).
	Within int
}

// resolved is a model checked and with defaults applied, ready to run.
type resolved struct {
	*Model
	bounds  Bounds
	actors  []compiledActor
	probes  []compiledActor // one per Progress
	within  []int
	maxVars int
	sym     *symmetry // nil without Symmetric groups
}

type compiledActor struct {
	*Actor
	labels map[string]int
	names  []string // step labels, defaults filled in
}

// validate checks the model and fills in defaults; every error names the
// field at fault and how to fix it.
func (m *Model) validate() (*resolved, error) {
	if m == nil {
		return nil, errors.New("explore: the model is nil; build an explore.Model with at least one actor")
	}
	if len(m.Actors) == 0 {
		return nil, fmt.Errorf("explore: model %q has no actors; add at least one explore.Actor with steps", m.Name)
	}
	r := &resolved{Model: m, bounds: m.Bounds}
	b := &r.bounds
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"MaxSteps", &b.MaxSteps, 6}, {"MaxTicks", &b.MaxTicks, 2}, {"MaxPauses", &b.MaxPauses, 0}, {"MaxFailovers", &b.MaxFailovers, 1}, {"MaxStates", &b.MaxStates, 1_000_000}} {
		switch {
		case *f.v < -1 || (*f.v == -1 && f.name != "MaxTicks"):
			return nil, fmt.Errorf("explore: model %q: Bounds.%s is %d; use a positive number, or 0 for the default", m.Name, f.name, *f.v)
		case *f.v == -1:
			*f.v = 0
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if !m.Replica {
		b.MaxFailovers = 0
	}
	if b.MaxSteps > 1000 || b.MaxTicks > 100 || b.MaxPauses > 100 || b.MaxFailovers > 100 {
		return nil, fmt.Errorf("explore: model %q: bounds %+v are far too large to explore; keep steps per actor under 1000 and events under 100", m.Name, *b)
	}
	seen := map[string]bool{}
	for i := range m.Actors {
		a, err := compileActor(m.Name, &m.Actors[i], seen)
		if err != nil {
			return nil, err
		}
		r.actors = append(r.actors, a)
		r.maxVars = max(r.maxVars, len(a.Vars))
	}
	for i, inv := range m.Invariants {
		if inv.Check == nil && inv.Step == nil {
			return nil, fmt.Errorf("explore: model %q: invariant %d (%q) has no Check or Step function", m.Name, i+1, inv.Name)
		}
	}
	for i := range m.Progress {
		p := &m.Progress[i]
		a, err := compileActor(m.Name, &p.Actor, seen)
		if err != nil {
			return nil, fmt.Errorf("%w (in progress property %q)", err, p.Name)
		}
		within := p.Within
		if within < 0 {
			return nil, fmt.Errorf("explore: model %q: progress %q has Within %d; use a positive number of steps", m.Name, p.Name, within)
		}
		if within == 0 {
			within = 4
		}
		r.probes = append(r.probes, a)
		r.within = append(r.within, within)
	}
	sym, err := compileSymmetry(m, r.actors)
	if err != nil {
		return nil, err
	}
	r.sym = sym
	for i, cmd := range m.Setup {
		if len(cmd) == 0 {
			return nil, fmt.Errorf("explore: model %q: Setup command %d is empty; give a command name and its arguments", m.Name, i+1)
		}
	}
	return r, nil
}

func compileActor(model string, a *Actor, seen map[string]bool) (compiledActor, error) {
	switch {
	case a.Name == "":
		return compiledActor{}, fmt.Errorf("explore: model %q: an actor has no Name; name every actor", model)
	case seen[a.Name]:
		return compiledActor{}, fmt.Errorf("explore: model %q: two actors are named %q; actor names must be unique", model, a.Name)
	case len(a.Steps) == 0:
		return compiledActor{}, fmt.Errorf("explore: model %q: actor %q has no steps", model, a.Name)
	case len(a.Steps) > 30000:
		return compiledActor{}, fmt.Errorf("explore: model %q: actor %q has %d steps; keep programs small", model, a.Name, len(a.Steps))
	}
	seen[a.Name] = true
	c := compiledActor{Actor: a, labels: map[string]int{}}
	for i, s := range a.Steps {
		label := s.Label
		if label == "" {
			label = fmt.Sprintf("step %d", i+1)
		}
		if label == End {
			return c, fmt.Errorf("explore: model %q: actor %q: step %d is labelled %q, which is reserved for ending; choose another label", model, a.Name, i+1, End)
		}
		if _, dup := c.labels[label]; dup {
			return c, fmt.Errorf("explore: model %q: actor %q has two steps labelled %q; labels must be unique", model, a.Name, label)
		}
		if s.Script != nil && len(s.Command) > 0 {
			return c, fmt.Errorf("explore: model %q: actor %q step %q has both Script and Command; a step makes one call", model, a.Name, label)
		}
		if s.Script != nil && s.Call == nil {
			if err := s.Script.CheckCall(len(s.Keys), len(s.Args)); err != nil {
				return c, fmt.Errorf("explore: model %q: actor %q step %q: %w", model, a.Name, label, err)
			}
		}
		if s.Script == nil && len(s.Command) == 0 && s.Call != nil {
			return c, fmt.Errorf("explore: model %q: actor %q step %q has Call but neither Script nor Command; set Command to the command's name (Call then computes the whole command)", model, a.Name, label)
		}
		c.labels[label] = i
		c.names = append(c.names, label)
	}
	for i, v := range a.Vars {
		if v == "" || strings.ContainsAny(v, " \t") {
			return c, fmt.Errorf("explore: model %q: actor %q: variable %d is named %q; use a non-empty name without spaces", model, a.Name, i+1, v)
		}
	}
	return c, nil
}

// startMs is the virtual instant (Unix milliseconds) every model begins
// at; traces show times relative to it ("t=100ms").
const startMs = 1_700_000_000_000

func startTime() time.Time { return time.UnixMilli(startMs) }

// label names the step at pc (End once the actor stopped).
func (c *compiledActor) label(pc int) string {
	if pc == endPC || pc >= len(c.names) {
		return End
	}
	return c.names[pc]
}
