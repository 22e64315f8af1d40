package explore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
)

// withSymmetry returns a copy of m with its actors declared interchangeable.
func withSymmetry(m *explore.Model, groups ...[]string) *explore.Model {
	c := *m
	c.Symmetric = groups
	return &c
}

// hashLockClient takes the reentrant hash lock of the seeds (one hash
// field per owner) on a primary with a replica, believes it at once, and
// releases it.
func hashLockClient(name string) explore.Actor {
	const ttl = 100 * time.Millisecond
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: seed("hashlock.acquire@1"), Keys: []string{"{lock}"}, Args: []any{name, ttl.Milliseconds()},
			Then: func(c *explore.Ctx) string {
				if !c.IsNil() {
					return "acquire"
				}
				c.Acquire(ttl)
				return "release"
			}},
		{Label: "release", Script: seed("hashlock.release@1"), Keys: []string{"{lock}"}, Args: []any{name},
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

// The reduced search finds the violation the full one finds, with a trace
// as short, in fewer states; and passes what the full one passes.
func TestSymmetryFindsTheSameViolations(t *testing.T) {
	abc := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name string
		m    *explore.Model
		want string // the property broken, "" for none
	}{
		{"SET NX PX + DEL", &explore.Model{Name: "SET NX PX + DEL",
			Actors:     []explore.Actor{setDelClient("a"), setDelClient("b"), setDelClient("c")},
			Invariants: []explore.Invariant{explore.MutualExclusion()},
			Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 1}}, "mutual exclusion"},
		{"hash lock on a replica", &explore.Model{Name: "hash lock, async replica", Replica: true,
			Actors:     []explore.Actor{hashLockClient("a"), hashLockClient("b"), hashLockClient("c")},
			Invariants: []explore.Invariant{explore.MutualExclusion()},
			Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 1}}, "mutual exclusion"},
		{"fixture mutex, a late client", &explore.Model{Name: "fixture mutex",
			Actors:     []explore.Actor{benchMutexClient(t, "a"), benchMutexClient(t, "b"), benchMutexClient(t, "c")},
			Invariants: []explore.Invariant{explore.MutualExclusion()},
			Progress:   []explore.Progress{{Name: "a late client gets in", Actor: benchMutexClient(t, "late"), Within: 3}},
			Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 2}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := explore.Run(withSymmetry(tc.m))
			if err != nil {
				t.Fatal(err)
			}
			groups := [][]string{abc[:len(tc.m.Actors)]}
			reduced, err := explore.Run(withSymmetry(tc.m, groups...))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("full: %s\nreduced: %s", full, reduced)
			if !reduced.Reduced || full.Reduced || reduced.States >= full.States {
				t.Fatalf("the reduction did not reduce: %d states, %d without", reduced.States, full.States)
			}
			if !strings.Contains(reduced.String(), "states up to symmetry") {
				t.Errorf("the summary does not say the states are counted up to symmetry: %s", reduced)
			}
			switch {
			case tc.want == "" && (full.Violation != nil || reduced.Violation != nil):
				t.Fatalf("violations: %v / %v", full.Violation, reduced.Violation)
			case tc.want == "" && (reduced.FullStates != full.States || full.FullStates != full.States):
				t.Fatalf("the reduced search stands for %d states, the full one visited %d", reduced.FullStates, full.States)
			case tc.want == "":
			case full.Violation == nil || reduced.Violation == nil:
				t.Fatalf("want %q broken by both, got %v / %v", tc.want, full.Violation, reduced.Violation)
			case full.Violation.Property != tc.want || reduced.Violation.Property != tc.want:
				t.Fatalf("want %q broken, got %q / %q", tc.want, full.Violation.Property, reduced.Violation.Property)
			case len(full.Violation.Trace) != len(reduced.Violation.Trace):
				t.Fatalf("the reduced search's trace has %d steps, the full one's %d:\n%s\n%s",
					len(reduced.Violation.Trace), len(full.Violation.Trace), reduced.Violation, full.Violation)
			}
			small := withSymmetry(tc.m, groups...)
			small.Bounds.MaxSteps = 2
			explore.CheckSymmetry(t, small)
		})
	}
}

// A declaration the model does not bear out is caught by VerifySymmetry,
// with the actors and the moves that tell them apart.
func TestVerifySymmetryCatchesWrongDeclarations(t *testing.T) {
	owned := func(name string) explore.Actor {
		a := setDelClient(name)
		a.Steps[1].Command = nil
		a.Steps[1].Script, a.Steps[1].Keys, a.Steps[1].Args = seed("owned.release@1"), []string{"lock"}, []any{name}
		return a
	}
	// zFirst queues its name in a sorted set at score 0 and believes it
	// holds when the first member is its own: ties go by name, so a wins
	// every one.
	zFirst := func(name string) explore.Actor {
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "queue", Command: []any{"ZADD", "q", 0, name}},
			{Label: "first", Command: []any{"ZRANGE", "q", 0, 0}, Then: func(c *explore.Ctx) string {
				if len(c.Reply.Elems) == 0 || c.Reply.Elems[0].Str != name {
					return "first"
				}
				c.Acquire(0)
				return explore.End
			}},
		}}
	}
	for _, tc := range []struct {
		name string
		m    *explore.Model
		want []string
	}{
		{"one releases without checking", &explore.Model{Name: "mixed releases",
			Actors:     []explore.Actor{setDelClient("a"), owned("b")},
			Invariants: []explore.Invariant{explore.MutualExclusion()},
			Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 1}, Symmetric: [][]string{{"a", "b"}}},
			[]string{`the actors "a" and "b" are not interchangeable`, "after the moves a, tick, b, a"}},
		{"ties broken by name", &explore.Model{Name: "ties",
			Actors:    []explore.Actor{zFirst("a"), zFirst("b"), zFirst("c")},
			Bounds:    explore.Bounds{MaxSteps: 3},
			Symmetric: [][]string{{"a", "b", "c"}}},
			[]string{`are not interchangeable`, "want", "got"}},
		{"an invariant that names an actor", &explore.Model{Name: "a is special",
			Actors: []explore.Actor{setDelClient("a"), setDelClient("b")},
			Invariants: []explore.Invariant{{Name: "a never holds", Check: func(v *explore.View) error {
				if v.Holds("a") {
					return errSpecial
				}
				return nil
			}}},
			Bounds: explore.Bounds{MaxSteps: 2}, Symmetric: [][]string{{"a", "b"}}},
			[]string{`invariant "a never holds" holds in one state and not in its twin`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := explore.VerifySymmetry(tc.m)
			if err == nil {
				t.Fatal("the wrong declaration passed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("the error does not say %q:\n%v", w, err)
				}
			}
			t.Log(err)
		})
	}
	r := &recorder{TB: t}
	explore.CheckSymmetry(r, &explore.Model{Name: "mixed", Actors: []explore.Actor{setDelClient("a"), owned("b")},
		Bounds: explore.Bounds{MaxSteps: 3, MaxTicks: 1}, Symmetric: [][]string{{"a", "b"}}})
	if !r.failed || !strings.Contains(r.msg, "not interchangeable") {
		t.Fatalf("CheckSymmetry did not fail: %q", r.msg)
	}
}

var errSpecial = errorString("a holds")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestSymmetricDeclarationErrors(t *testing.T) {
	good := func(name string) explore.Actor { return setDelClient(name) }
	other := explore.Actor{Name: "o", Steps: []explore.Step{{Label: "x", Command: []any{"GET", "lock"}}, {Label: "release", Command: []any{"DEL", "lock"}}}}
	withVar := good("v")
	withVar.Vars = []string{"n"}
	for _, tc := range []struct {
		name string
		m    *explore.Model
		want string
	}{
		{"one actor", &explore.Model{Actors: []explore.Actor{good("a"), good("b")}, Symmetric: [][]string{{"a"}}}, "at least two"},
		{"unknown", &explore.Model{Actors: []explore.Actor{good("a"), good("b")}, Symmetric: [][]string{{"a", "z"}}}, `names "z", which is not one of the model's actors`},
		{"twice", &explore.Model{Actors: []explore.Actor{good("a"), good("b"), good("c")}, Symmetric: [][]string{{"a", "b"}, {"b", "c"}}}, "in two Symmetric groups"},
		{"not a word", &explore.Model{Actors: []explore.Actor{good("a-1"), good("b")}, Symmetric: [][]string{{"a-1", "b"}}}, "letters, digits and underscores"},
		{"other labels", &explore.Model{Actors: []explore.Actor{good("a"), other}, Symmetric: [][]string{{"a", "o"}}}, `label step 1 "acquire" and "x"`},
		{"other vars", &explore.Model{Actors: []explore.Actor{good("a"), withVar}, Symmetric: [][]string{{"a", "v"}}}, "declare the variables"},
		{"progress client", &explore.Model{Actors: []explore.Actor{good("a"), good("b")}, Progress: []explore.Progress{{Name: "p", Actor: good("late")}}, Symmetric: [][]string{{"a", "late"}}}, "progress clients cannot be symmetric"},
		{"setup names one", &explore.Model{Actors: []explore.Actor{good("a"), good("b")}, Setup: [][]any{{"SET", "lock", "a"}}, Symmetric: [][]string{{"a", "b"}}}, `the keyspace Setup leaves tells the symmetric actors "a" and "b" apart`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := explore.Run(tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := explore.VerifySymmetry(setDelModel(explore.Bounds{})); err == nil || !strings.Contains(err.Error(), "declares no Symmetric actors") {
		t.Fatalf("VerifySymmetry of a model without Symmetric: %v", err)
	}
}
