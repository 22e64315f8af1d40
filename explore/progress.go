package explore

import "fmt"

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
	// The key is copied: the probe's own keys reuse the buffer.
	memo := string(e.progressKey(n))
	if ok, seen := e.progressSeen[p][memo]; seen {
		return ok, nil
	}
	ok, err := e.probeFrom(n, p)
	if err == nil {
		e.progressSeen[p][memo] = ok
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
