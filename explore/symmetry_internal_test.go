package explore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/simulate"
)

// namedKeyspace builds a keyspace that names the actors a, b and c (as
// name maps them) in every place a name can stand: key names, hash fields
// and values in insertion order, sorted-set members with tied scores, list
// elements, set members and strings; and words that only contain a name
// ("client_a", "semaphore") or are other words ("s").
func namedKeyspace(t *testing.T, name func(string) string) *simulate.Snapshot {
	t.Helper()
	clock := simulate.NewVirtualClock(startTime())
	srv := simulate.New(simulate.WithClock(clock))
	a, b, c := name("a"), name("b"), name("c")
	for _, cmd := range [][]any{
		{"SET", "own:" + a, a + "\tsemaphore", "PX", 100},
		{"SET", "own:" + c, "1"},
		{"SET", "{s}", "semaphore client_a " + a + "-" + b},
		{"HSET", "{s}:h", "p:" + b, "1\th\t1\tclient-" + b + "\t" + b + "\t{}", "f", "17", "p:" + a, a, "u", c + "\t12"},
		{"HSET", "{s}:h", "w:" + c, "130 30 1 100 2 PUBLISH\tclient-" + c + "\t" + c + "\t{}"},
		{"ZADD", "{s}:z", 1, a, 1, b, 2, c, 1, "x"},
		{"ZADD", "{s}:idx", 5, "p:" + c, 5, "p:" + a, 7, "p:" + b},
		{"RPUSH", "{s}:q", a, c, b, "client_a"},
		{"SADD", "{s}:set", a, b, "a_b", "ab", "semaphore"},
		{"HSET", "per:" + b, "k", "v"},
	} {
		if r, err := srv.DoReply(context.Background(), cmd...); err != nil || r.Kind == simulate.KindError {
			t.Fatalf("%v: %v %v", cmd, r, err)
		}
	}
	return srv.Snapshot()
}

func testSymmetry(t *testing.T) *symmetry {
	t.Helper()
	actors := []compiledActor{}
	for _, n := range []string{"a", "b", "c"} {
		actors = append(actors, compiledActor{Actor: &Actor{Name: n, Steps: []Step{{}}}, names: []string{"step 1"}})
	}
	s, err := compileSymmetry(&Model{Name: "t", Symmetric: [][]string{{"a", "b", "c"}}}, actors)
	if err != nil {
		t.Fatal(err)
	}
	return s.engineCopy()
}

// Renaming the encoding of a keyspace gives the encoding of the keyspace
// built with the names renamed, for snapshots and for deltas (changes and
// deletions); the identity gives the encoding back.
func TestRenameMatchesTheRenamedKeyspace(t *testing.T) {
	s := testSymmetry(t)
	rot := map[string]string{"a": "b", "b": "c", "c": "a"} // actor i takes the place of actor perm[i]
	perm := []int32{1, 2, 0}
	orig := namedKeyspace(t, func(n string) string { return n })
	moved := namedKeyspace(t, func(n string) string { return rot[n] })

	p, err := s.parse(orig.AppendCanonical(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	if !p.named || !p.keyRefs {
		t.Fatalf("the names were not found: named %v, in keys %v", p.named, p.keyRefs)
	}
	if got, want := string(s.appendParsed(nil, p, identity(3))), string(orig.AppendCanonical(nil)); got != want {
		t.Fatalf("the identity changes the encoding:\n got %q\nwant %q", got, want)
	}
	if got, want := string(s.appendParsed(nil, p, perm)), string(moved.AppendCanonical(nil)); got != want {
		t.Fatalf("renamed:\n got %q\nwant %q", got, want)
	}
	if string(s.appendParsed(nil, p, perm)) == string(orig.AppendCanonical(nil)) {
		t.Fatal("renaming changed nothing")
	}

	for _, d := range []struct {
		name        string
		orig, moved *simulate.Delta
	}{
		{"writes", simulate.Diff(nil, orig), simulate.Diff(nil, moved)},
		{"deletions", simulate.Diff(orig, nil), simulate.Diff(moved, nil)},
	} {
		p, err := s.parse(d.orig.AppendCanonical(nil), true)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if got, want := string(s.appendParsed(nil, p, identity(3))), string(d.orig.AppendCanonical(nil)); got != want {
			t.Fatalf("%s: the identity changes the encoding:\n got %q\nwant %q", d.name, got, want)
		}
		if got, want := string(s.appendParsed(nil, p, perm)), string(d.moved.AppendCanonical(nil)); got != want {
			t.Fatalf("%s renamed:\n got %q\nwant %q", d.name, got, want)
		}
	}
}

// A name stands only as a whole word.
func TestNamesAreWords(t *testing.T) {
	s := testSymmetry(t)
	for in, want := range map[string]int{
		"a": 1, "p:a": 1, "client-a\ta\t{}": 2, "a\t17": 1, "semaphore": 0, "client_a": 0, "ab": 0, "a_b": 0, "{s}": 0, "b,c;a": 3, "": 0, "A": 0,
	} {
		if got := len(s.find(in)); got != want {
			t.Errorf("%q: %d names found, want %d", in, got, want)
		}
	}
}

// A keyspace the reader does not follow (a stream) is not reduced: the
// state keeps its own key.
func TestStreamsAreNotRenamed(t *testing.T) {
	r, err := (&Model{Name: "streams", Actors: []Actor{streamActor("a"), streamActor("b")}, Symmetric: [][]string{{"a", "b"}}}).validate()
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(context.Background(), r)
	root, err := e.initial()
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.apply(root, move{kind: moveActor})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.readKeyspaces(c); err == nil || !strings.Contains(err.Error(), "does not rename") {
		t.Fatalf("reading a stream: %v", err)
	}
	if _, ok := e.symKey(c); ok {
		t.Fatal("a state with a stream was reduced")
	}
	if got, want := string(e.key(c)), string(e.rawKey(c)); got != want {
		t.Fatal("a state with a stream is not keyed as it is")
	}
	res, err := Run(r.Model)
	if err != nil || res.States != len(reachable(t, e)) {
		t.Fatalf("got %v %v, want every state, none merged", res, err)
	}
}

func streamActor(name string) Actor {
	return Actor{Name: name, Steps: []Step{{Command: []any{"XADD", "{x}", "*", "who", name}}}}
}

// kitchenClient writes its name everywhere a name can stand: a set, a
// list, sorted sets (tied scores), a hash (insertion order), its own key
// with a lease, and reads back a position into a variable.
func kitchenClient(name string) Actor {
	return Actor{Name: name, Vars: []string{"pos"}, Steps: []Step{
		{Label: "join", Command: []any{"SADD", "{k}:set", name}},
		{Label: "queue", Command: []any{"RPUSH", "{k}:list", name}, Then: func(c *Ctx) string {
			c.SetVar("pos", c.Int())
			return ""
		}},
		{Label: "rank", Command: []any{"ZADD", "{k}:z", 1, name}},
		{Label: "mark", Command: []any{"HSET", "{k}:h", "p:" + name, "client-" + name + "\t" + name}},
		{Label: "own", Command: []any{"SET", "own:" + name, name, "PX", 100}, Then: func(c *Ctx) string {
			c.Acquire(100 * time.Millisecond)
			return ""
		}},
		{Label: "leave", Command: []any{"LREM", "{k}:list", 0, name}, Then: func(c *Ctx) string {
			c.Release()
			return "join"
		}},
	}}
}

func kitchenModel(steps int) *Model {
	return &Model{
		Name:      "kitchen",
		Actors:    []Actor{kitchenClient("a"), kitchenClient("b"), kitchenClient("c")},
		Bounds:    Bounds{MaxSteps: steps, MaxTicks: 1},
		Symmetric: [][]string{{"a", "b", "c"}},
	}
}

// The reduced search visits one state of each class the unreduced search
// reaches, and the reader gives every state's keyspace back as it is.
func TestReducedSearchVisitsEachClassOnce(t *testing.T) {
	m := kitchenModel(6)
	r, err := m.validate()
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(context.Background(), r)
	e.reduce = false
	nodes := reachable(t, e)
	classes := map[string]bool{}
	for i, n := range nodes {
		if _, err := e.readKeyspaces(n); err != nil {
			t.Fatal(err)
		}
		if string(e.permKey(nil, n, identity(len(n.actors)))) != string(e.rawKey(n)) {
			t.Fatalf("the reader does not give state %d's encoding back", i)
		}
		k, ok := e.symKey(n)
		if !ok {
			t.Fatalf("state %d was not reduced", i)
		}
		classes[string(k)] = true
	}
	res, err := Run(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d states, %d classes; the reduced search: %s", len(nodes), len(classes), res)
	if res.States != len(classes) || !res.Reduced {
		t.Fatalf("the reduced search visited %d states, want one per class: %d", res.States, len(classes))
	}
	if res.FullStates != len(nodes) {
		t.Fatalf("the reduced search's classes hold %d states, want all %d", res.FullStates, len(nodes))
	}
	if len(classes)*4 > len(nodes) {
		t.Fatalf("%d classes of %d states: three interchangeable actors should merge more", len(classes), len(nodes))
	}
}

// The verification holds for a symmetric model, and catches a renaming
// that misses where a name stands.
func TestVerifySymmetryCatchesAMissedName(t *testing.T) {
	m := kitchenModel(5)
	res, err := VerifySymmetry(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d states verified", res.States)

	r, err := m.validate()
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(context.Background(), r)
	e.reduce = false
	delete(e.sym.byName, "c") // a renaming that does not see c's name
	_, err = e.verifySymmetry()
	if err == nil || !strings.Contains(err.Error(), `the actors "b" and "c" are not interchangeable`) || !strings.Contains(err.Error(), "want") {
		t.Fatalf("a renaming blind to c passed the verification: %v", err)
	}
	t.Log(err)
}

// Every progress probe's result is memoised under the key of the state
// it started from.
func TestProgressMemoKeepsItsKeys(t *testing.T) {
	late := kitchenClient("late")
	late.Steps[4].Then = func(c *Ctx) string { c.Acquire(100 * time.Millisecond); return End }
	m := kitchenModel(2)
	m.Symmetric = nil
	m.Progress = []Progress{{Name: "late gets in", Actor: late, Within: 5}}
	r, err := m.validate()
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(context.Background(), r)
	if _, err := e.explore(); err != nil {
		t.Fatal(err)
	}
	nodes := reachable(t, e)
	for i, n := range nodes {
		if _, ok := e.progressSeen[0][string(e.progressKey(n))]; !ok {
			t.Fatalf("state %d of %d: its probe is not memoised under its key (%d probes memoised)", i, len(nodes), len(e.progressSeen[0]))
		}
	}
}

// reachable lists every state of e's model, none merged.
func reachable(t *testing.T, e *engine) []*node {
	t.Helper()
	root, err := e.initial()
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*node{root}
	seen := map[string]bool{string(e.rawKey(root)): true}
	var moves []move
	for i := 0; i < len(nodes); i++ {
		for _, mv := range e.moves(nodes[i], moves[:0], false) {
			c, err := e.apply(nodes[i], mv)
			if err != nil {
				t.Fatal(err)
			}
			if k := string(e.rawKey(c)); !seen[k] {
				seen[k] = true
				nodes = append(nodes, c)
			}
		}
	}
	return nodes
}
