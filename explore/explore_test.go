package explore_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// setDelClient is the SET NX PX + DEL client of Example_setNXThenDel.
func setDelClient(name string) explore.Actor {
	const ttl = 100 * time.Millisecond
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Command: []any{"SET", "lock", name, "NX", "PX", ttl.Milliseconds()}, Then: func(c *explore.Ctx) string {
			if c.OK() {
				c.Acquire(ttl)
				return "release"
			}
			return "acquire"
		}},
		{Label: "release", Command: []any{"DEL", "lock"}, Then: func(c *explore.Ctx) string {
			c.Release()
			return "acquire"
		}},
	}}
}

func setDelModel(b explore.Bounds) *explore.Model {
	return &explore.Model{
		Name:       "SET NX PX + DEL",
		Actors:     []explore.Actor{setDelClient("a"), setDelClient("b")},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     b,
	}
}

// The trace format is part of the API: people read it without the source.
func TestTraceGolden(t *testing.T) {
	res, err := explore.Run(setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: 1}))
	if err != nil || res.Violation == nil {
		t.Fatalf("want a violation, got %v %v", res, err)
	}
	got := res.Violation.String()
	path := filepath.Join("testdata", "golden", "setnx_del.trace")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestTraceGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("trace differs from %s (run with -update if the change is meant):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// Breadth first: wider bounds find the same shortest counterexample.
func TestShortestCounterexample(t *testing.T) {
	small, err := explore.Run(setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: 1}))
	if err != nil {
		t.Fatal(err)
	}
	large, err := explore.Run(setDelModel(explore.Bounds{MaxSteps: 8, MaxTicks: 4}))
	if err != nil {
		t.Fatal(err)
	}
	if small.Violation == nil || large.Violation == nil || len(large.Violation.Trace) != len(small.Violation.Trace) || len(small.Violation.Trace) != 5 {
		t.Fatalf("want 5-step counterexamples from both, got %v and %v", small.Violation, large.Violation)
	}
}

// Without clock ticks the only way for a lease to run out is a process
// pause, and the trace says which actor paused.
func TestPauseEvent(t *testing.T) {
	res, err := explore.Run(setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: -1, MaxPauses: 1}))
	if err != nil || res.Violation == nil {
		t.Fatalf("want a violation, got %v %v", res, err)
	}
	if !strings.Contains(res.Violation.String(), "pause a") {
		t.Fatalf("the trace does not show the pause:\n%s", res.Violation)
	}
	res, err = explore.Run(setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: -1}))
	if err != nil || res.Violation != nil {
		t.Fatalf("without ticks or pauses no lease runs out, so no violation; got %v %v", res.Violation, err)
	}
}

func TestModelErrorsNameTheFix(t *testing.T) {
	good := setDelClient("a")
	for _, tc := range []struct {
		name string
		m    *explore.Model
		want string
	}{
		{"nil", nil, "model is nil"},
		{"no actors", &explore.Model{Name: "x"}, "no actors"},
		{"unnamed actor", &explore.Model{Actors: []explore.Actor{{Steps: good.Steps}}}, "has no Name"},
		{"duplicate", &explore.Model{Actors: []explore.Actor{good, good}}, "two actors are named"},
		{"no steps", &explore.Model{Actors: []explore.Actor{{Name: "a"}}}, "has no steps"},
		{"bad bound", &explore.Model{Actors: []explore.Actor{good}, Bounds: explore.Bounds{MaxSteps: -3}}, "Bounds.MaxSteps"},
		{"reserved label", &explore.Model{Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{{Label: explore.End}}}}}, "reserved"},
		{"duplicate label", &explore.Model{Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{{Label: "x"}, {Label: "x"}}}}}, "two steps labelled"},
		{"invariant without check", &explore.Model{Actors: []explore.Actor{good}, Invariants: []explore.Invariant{{Name: "i"}}}, "no Check"},
		{"empty setup", &explore.Model{Actors: []explore.Actor{good}, Setup: [][]any{{}}}, "Setup command 1 is empty"},
		{"bad setup", &explore.Model{Actors: []explore.Actor{good}, Setup: [][]any{{"NOPE"}}}, "unknown command"},
		{"unknown var", &explore.Model{Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{{Then: func(c *explore.Ctx) string { c.SetVar("x", 1); return "" }}}}}}, "variable \"x\""},
		{"unknown label", &explore.Model{Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{{Then: func(*explore.Ctx) string { return "nowhere" }}}}}}, "labels no step"},
		{"panicking deadlines", &explore.Model{Actors: []explore.Actor{good}, Deadlines: func(*explore.View) []time.Duration { panic("boom") }}, "panicked: boom"},
		{"panicking step invariant", &explore.Model{Actors: []explore.Actor{good}, Invariants: []explore.Invariant{{Name: "s", Step: func(_, _ *explore.View) error { panic("boom") }}}}, "panicked: boom"},
		{"panicking step", &explore.Model{Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{{Then: func(*explore.Ctx) string { panic("boom") }}}}}}, "panicked: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := explore.Run(tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Count(err.Error(), "explore:") != 1 {
				t.Errorf("one prefix per layer: %v", err)
			}
		})
	}
}

func TestMaxStatesIsAnError(t *testing.T) {
	_, err := explore.Run(setDelModel(explore.Bounds{MaxSteps: 6, MaxTicks: -1, MaxStates: 3}))
	if err == nil || !strings.Contains(err.Error(), "more than 3 states") {
		t.Fatalf("got %v", err)
	}
}

func TestRunContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := explore.RunContext(ctx, setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: -1}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want it to wrap context.Canceled", err)
	}
}

// recorder stands in for *testing.T to see what Check reports.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Fatal(args ...any)         { r.failed, r.msg = true, fmt.Sprint(args...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed, r.msg = true, fmt.Sprintf(f, a...) }
func (r *recorder) Logf(f string, a ...any)   { r.msg = fmt.Sprintf(f, a...) }

func TestCheckFailsWithTheTrace(t *testing.T) {
	r := &recorder{TB: t}
	explore.Check(r, setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: 1}))
	if !r.failed || !strings.Contains(r.msg, "mutual exclusion violated after 5 steps") || !strings.Contains(r.msg, "release: DEL lock -> 1") {
		t.Fatalf("Check did not fail with the trace: %q", r.msg)
	}
	r = &recorder{TB: t}
	explore.Check(r, setDelModel(explore.Bounds{MaxSteps: 3, MaxTicks: -1}))
	if r.failed || !strings.Contains(r.msg, "all properties hold") {
		t.Fatalf("Check failed a passing model: %q", r.msg)
	}
}

// A script error is a reply the actor sees, not a failure of the model.
func TestScriptErrorIsAReply(t *testing.T) {
	var seen string
	m := &explore.Model{Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{
		{Command: []any{"SET", "k", "v"}},
		{Command: []any{"INCR", "k"}, Then: func(c *explore.Ctx) string {
			if c.IsError() {
				seen = c.Reply.Str
			}
			return ""
		}},
	}}}}
	if _, err := explore.Run(m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(seen, "not an integer") {
		t.Fatalf("the step saw %q", seen)
	}
}

// Setup seeds the keyspace before the first step.
func TestSetupSeedsTheKeyspace(t *testing.T) {
	var got string
	m := &explore.Model{
		Setup: [][]any{{"SET", "config", "on"}},
		Actors: []explore.Actor{{Name: "a", Steps: []explore.Step{{Command: []any{"GET", "config"}, Then: func(c *explore.Ctx) string {
			got = c.Str()
			return ""
		}}}}},
	}
	if _, err := explore.Run(m); err != nil || got != "on" {
		t.Fatalf("the actor read %q (%v), want the seeded \"on\"", got, err)
	}
}
