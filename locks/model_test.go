package locks_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// The read-write lock's scripts, explored exhaustively: two readers and one
// writer, each able to attempt, release, and see its lease expire when the
// virtual clock jumps past it. Every interleaving up to each actor's budget
// is visited (depth-first, each state reached by replaying its path on a
// fresh simulator, states memoised), and in every one:
//   - the server never has a live writer together with a live reader, and
//   - no two actors believe at once, with unexpired leases, that they hold
//     conflicting holds, and
//   - from every state, once holders stop, the writer can take the lock
//     after at most one tick (nothing blocks it forever).
func TestModelRWMutexAllInterleavings(t *testing.T) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	get := func(id string) *registry.Script {
		s, err := reg.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	m := &model{rlock: get("rw.rlock@1"), runlock: get("rw.runlock@1"), wlock: get("rw.lock@1"), wunlock: get("mutex.release@1")}
	m.visited = map[string]bool{}
	if err := m.explore(t, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("explored %d distinct states, %d of them final", len(m.visited), m.paths)
	if len(m.visited) < 50 {
		t.Fatalf("only %d states: the model explores too little to mean anything", len(m.visited))
	}
}

// The explorer finds a bug when there is one: with an rw.rlock that ignores
// the writer, some interleaving has a writer and a reader together.
func TestModelFindsABrokenScript(t *testing.T) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := reg.Lookup("rw.rlock@1")
	broken, err := registry.ParseScript("broken.lua", []byte(strings.Replace(good.Source, "if holder and holder ~= owner then", "if false then", 1)))
	if err != nil || broken.SHA1 == good.SHA1 {
		t.Fatalf("could not break the script: %v", err)
	}
	get := func(id string) *registry.Script { s, _ := reg.Lookup(id); return s }
	m := &model{rlock: broken, runlock: get("rw.runlock@1"), wlock: get("rw.lock@1"), wunlock: get("mutex.release@1"), visited: map[string]bool{}}
	if err := m.explore(t, nil); err == nil || !strings.Contains(err.Error(), "writer") {
		t.Fatalf("the explorer accepted a read lock that ignores the writer (err %v)", err)
	}
}

const (
	modelTTL  = 100 * time.Millisecond
	modelWait = 30 * time.Millisecond // the writer's waiter lease
	tick      = modelTTL + time.Millisecond
)

var modelKeys = []string{"{m}", "{m}:readers", "{m}:rholds", "{m}:wwait", "{m}:fence"}

type model struct {
	rlock, runlock, wlock, wunlock *registry.Script
	visited                        map[string]bool
	paths                          int
}

// actor is one participant's belief: whether it holds, and until when.
type actor struct {
	name     string
	writer   bool
	holding  bool
	deadline time.Time
	attempts int // budget: each actor attempts at most twice
}

type world struct {
	srv    *simulate.Server
	clock  *simulate.VirtualClock
	actors []actor
	ticks  int
}

func (m *model) fresh() *world {
	clock := simulate.NewVirtualClock(time.Unix(1_700_000_000, 0))
	return &world{
		srv:    simulate.New(simulate.WithClock(clock)),
		clock:  clock,
		actors: []actor{{name: "r1"}, {name: "r2"}, {name: "w", writer: true}},
	}
}

// step names: "a:<i>" attempt, "r:<i>" release, "t" tick.
func (m *model) enabled(w *world) []string {
	var out []string
	for i, a := range w.actors {
		if a.holding {
			out = append(out, fmt.Sprint("r:", i))
		} else if a.attempts < 2 {
			out = append(out, fmt.Sprint("a:", i))
		}
	}
	if w.ticks < 2 {
		out = append(out, "t")
	}
	return out
}

func (m *model) apply(t *testing.T, w *world, step string) {
	ctx := context.Background()
	if step == "t" {
		w.clock.Advance(tick)
		w.ticks++
		return
	}
	var i int
	kind := step[0]
	fmt.Sscanf(step[2:], "%d", &i)
	a := &w.actors[i]
	switch {
	case kind == 'a' && a.writer:
		a.attempts++
		reply, err := w.srv.Run(ctx, m.wlock, modelKeys, a.name, modelTTL.Milliseconds(), modelWait.Milliseconds(), "").Slice()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if reply[0] == int64(1) {
			a.holding, a.deadline = true, w.clock.Now().Add(modelTTL)
		}
	case kind == 'a':
		a.attempts++
		reply, err := w.srv.Run(ctx, m.rlock, modelKeys, a.name, modelTTL.Milliseconds(), "1").Slice()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if reply[0] == int64(1) {
			a.holding, a.deadline = true, w.clock.Now().Add(modelTTL)
		}
	case kind == 'r' && a.writer:
		if err := w.srv.Run(ctx, m.wunlock, modelKeys[:1], a.name, "{m}:released").Err(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		a.holding = false
	default:
		if err := w.srv.Run(ctx, m.runlock, modelKeys[1:3], a.name, "{m}:released").Err(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		a.holding = false
	}
}

func (m *model) replay(t *testing.T, path []string) *world {
	w := m.fresh()
	for _, s := range path {
		m.apply(t, w, s)
	}
	return w
}

// key abstracts a world: actor beliefs (with lease still valid or not) and
// the keyspace without absolute times.
func (m *model) key(w *world) string {
	var b strings.Builder
	now := w.clock.Now()
	for _, a := range w.actors {
		fmt.Fprintf(&b, "%s:%v:%v:%d|", a.name, a.holding, a.holding && now.Before(a.deadline), a.attempts)
	}
	fmt.Fprintf(&b, "t%d|", w.ticks)
	for _, d := range w.srv.Dump() {
		if d.Key == "{m}:fence" {
			continue
		}
		fmt.Fprintf(&b, "%s=%v;", d.Key, normalise(d.Value, now))
	}
	return b.String()
}

// normalise turns sorted-set deadlines into "live"/"expired" relative to now.
func normalise(v any, now time.Time) any {
	zs, ok := v.([]simulate.ZMember)
	if !ok {
		if h, ok := v.(map[string]string); ok {
			keys := make([]string, 0, len(h))
			for k := range h {
				if k != "fence" {
					keys = append(keys, k+"="+h[k])
				}
			}
			sort.Strings(keys)
			return keys
		}
		return v
	}
	var out []string
	for _, z := range zs {
		state := "live"
		if float64(now.UnixMilli()) >= z.Score {
			state = "expired"
		}
		out = append(out, z.Member+":"+state)
	}
	return out
}

func (m *model) check(path []string, w *world) error {
	now := w.clock.Now()
	// Server view.
	liveReaders := 0
	writer := false
	for _, d := range w.srv.Dump() {
		switch d.Key {
		case "{m}:readers":
			for _, z := range d.Value.([]simulate.ZMember) {
				if float64(now.UnixMilli()) < z.Score {
					liveReaders++
				}
			}
		case "{m}":
			writer = true
		}
	}
	if writer && liveReaders > 0 {
		return fmt.Errorf("after %v the server has a writer and %d live readers", path, liveReaders)
	}
	// Beliefs with unexpired leases.
	believeW, believeR := 0, 0
	for _, a := range w.actors {
		if a.holding && now.Before(a.deadline) {
			if a.writer {
				believeW++
			} else {
				believeR++
			}
		}
	}
	if believeW > 1 || (believeW == 1 && believeR > 0) {
		return fmt.Errorf("after %v a writer and %d readers believe they hold valid leases", path, believeR)
	}
	return nil
}

// liveness: holders release, one tick passes, and the writer gets the lock.
func (m *model) liveness(t *testing.T, path []string) error {
	w := m.replay(t, path)
	for i, a := range w.actors {
		if a.holding {
			m.apply(t, w, fmt.Sprint("r:", i))
		}
	}
	w.clock.Advance(tick)
	reply, err := w.srv.Run(context.Background(), m.wlock, modelKeys, "late-writer", modelTTL.Milliseconds(), modelWait.Milliseconds(), "").Slice()
	if err != nil || reply[0] != int64(1) {
		return fmt.Errorf("after %v, with every holder gone, a writer cannot take the lock: %v %v", path, reply, err)
	}
	return nil
}

// explore visits every state reachable from path; it stops at the first
// violation and returns it.
func (m *model) explore(t *testing.T, path []string) error {
	w := m.replay(t, path)
	if err := m.check(path, w); err != nil {
		return err
	}
	k := m.key(w)
	if m.visited[k] {
		return nil
	}
	m.visited[k] = true
	if err := m.liveness(t, path); err != nil {
		return err
	}
	steps := m.enabled(w)
	if len(steps) == 0 {
		m.paths++
		return nil
	}
	for _, s := range steps {
		if err := m.explore(t, append(append([]string(nil), path...), s)); err != nil {
			return err
		}
	}
	return nil
}
