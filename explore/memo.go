package explore

// key encodes everything about n that decides its future: the clock, the
// event counters, each actor's position, budget, belief and variables, and
// the keyspaces with the pending replication. With Model.Symmetric it is
// the key of one chosen state of n's class (see symmetry.go), and
// e.class the number of states in that class (1 otherwise).
func (e *engine) key(n *node) []byte {
	e.class = 1
	if e.sym != nil && e.reduce {
		if k, ok := e.symKey(n); ok {
			e.class = e.sym.class
			return k
		}
	}
	return e.rawKey(n)
}

// rawKey is key without the symmetry reduction.
func (e *engine) rawKey(n *node) []byte {
	b := appendHeader(e.buf[:0], n)
	for i := range n.actors {
		b = appendActor(b, &n.actors[i])
	}
	b = append(b, '#')
	b = n.primary.AppendCanonicalWithout(b, e.r.Unobserved)
	if n.replica != nil {
		b = append(b, '#')
		b = n.replica.AppendCanonicalWithout(b, e.r.Unobserved)
		for _, d := range n.pending {
			b = d.AppendCanonical(b)
		}
	}
	e.buf = b
	return b
}

// appendHeader encodes the clock and the event counters.
func appendHeader(b []byte, n *node) []byte {
	b = appendInt(b, n.now)
	b = appendInt(b, int64(n.ticks)<<32|int64(n.pauses)<<16|int64(n.failover))
	if n.down {
		b = append(b, 'D')
	}
	return b
}

// appendActor encodes one actor's position, budget, belief and variables.
func appendActor(b []byte, a *actorState) []byte {
	pc, steps := a.pc, a.steps
	if pc == endPC {
		steps = 0 // a stopped actor's budget no longer matters
	}
	b = appendInt(b, int64(pc)<<32|int64(steps))
	if a.holds {
		b = appendInt(b, a.deadline)
	} else {
		b = append(b, '-')
	}
	for _, v := range a.vars {
		b = appendInt(b, v)
	}
	return append(b, '|')
}

func appendInt(b []byte, v int64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}
