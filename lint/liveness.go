package lint

import "github.com/redlua/redlua/internal/luasyntax"

// Liveness of local variable values, for W311 ("value assigned to
// variable x is unused"). Each function is analysed on its own, backwards
// over the structured tree; loops iterate to a fixpoint. A value counts as
// used when the variable is live after the assignment: some path reads it
// before overwriting it. Reads from other functions (closures) are handled
// conservatively in markUsedValues.
//
// The analysis runs in time about linear in the function's size: a live
// set is owned by one caller and updated in place along a sequence of
// statements; it is copied only where paths split (the branches of an if,
// a loop's head, a break). And a variable leaves the set at its
// declaration (going backwards, before it no path can read or set it), so
// a set holds only variables in scope, not every local seen so far.

type liveSet struct {
	all  bool // after a goto: assume everything is live
	vars map[*Var]bool
	// kill maps a dead variable to the one assignment every path meets
	// before any read, the end of its scope or the function's end, for
	// luacheck's "is overwritten on line N before use"; absent: no single
	// such assignment.
	kill map[*Var]*setSite
}

func newLiveSet() liveSet {
	return liveSet{vars: map[*Var]bool{}, kill: map[*Var]*setSite{}}
}

func (s liveSet) has(v *Var) bool { return s.all || s.vars[v] }

func (s liveSet) clone() liveSet {
	c := liveSet{all: s.all, vars: make(map[*Var]bool, len(s.vars)), kill: make(map[*Var]*setSite, len(s.kill))}
	for v := range s.vars {
		c.vars[v] = true
	}
	for v, k := range s.kill {
		c.kill[v] = k
	}
	return c
}

// union adds o's paths to s, in place, and returns s: a variable is live
// if it is on either, and killed by one assignment only if both agree.
func (s liveSet) union(o liveSet) liveSet {
	s.all = s.all || o.all
	for v := range o.vars {
		s.vars[v] = true
	}
	for v, k := range s.kill {
		if o.kill[v] != k || s.vars[v] {
			delete(s.kill, v)
		}
	}
	return s
}

func (s liveSet) equal(o liveSet) bool {
	if s.all != o.all || len(s.vars) != len(o.vars) || len(s.kill) != len(o.kill) {
		return false
	}
	for v := range s.vars {
		if !o.vars[v] {
			return false
		}
	}
	for v, k := range s.kill {
		if o.kill[v] != k {
			return false
		}
	}
	return true
}

type liveness struct {
	res    *resolution
	fn     *FunctionExpr
	breaks []liveSet // live sets at the exit of enclosing loops
	mark   bool
	// heads caches each loop's last fixpoint. Live sets only grow as an
	// enclosing loop iterates, so restarting from the cached head keeps
	// nested loops from re-iterating from scratch (exponential in depth).
	heads map[Stmt]liveSet
	// upvals: the variables each function reads from enclosing ones; its
	// creation reads them
	upvals map[*FunctionExpr][]*Var
}

// markUsedValues sets setSite.used for every value that may be read;
// dead reports whether an offset is in unreachable code (a closure created
// there never runs).
func markUsedValues(res *resolution, dead func(off int) bool) {
	upvals := upvalueReads(res)
	for _, fn := range res.funcs {
		l := &liveness{res: res, fn: fn, mark: true, heads: map[Stmt]liveSet{}, upvals: upvals}
		in := l.block(fn.Body.Stmts, newLiveSet())
		for _, p := range fn.Params {
			in = l.set(p, in)
		}
		if n := res.selfName[fn]; n != nil {
			l.set(n, in)
		}
	}
	// A closure reads the values its upvalues hold when it is created
	// (reads counts those) and any value set after that; a value
	// set inside a closure is seen by that closure's own later calls, by
	// every other closure, and by the declaring function after the closure
	// is created.
	for _, v := range res.vars {
		var c *closureReads
		for _, s := range v.sets {
			if s.used {
				continue
			}
			if c == nil {
				c = summarizeReads(res, v, dead)
			}
			s.used = c.reach(s, dead)
		}
	}
}

// closureReads summarizes a variable's reads for markUsedValues, so that
// each of its unused values is judged in constant time, not by going
// through every read. Reads from closures are grouped by whether they are
// recursive (a local function reading itself, which does not use its own
// first value) and whether their closure is created in unreachable code
// (it never runs for values set where code does run).
type closureReads struct {
	// count and firstCreated: per [recursive][createdDead], how many reads
	// come from closures and the lowest offset at which the closure
	// bringing one into the declaring function is created
	count        [2][2]int
	firstCreated [2][2]int
	// lastOwn is the offset of the last read in the declaring function
	// itself (maxInt for a read without a node), -1 for none
	lastOwn int
}

func summarizeReads(res *resolution, v *Var, dead func(int) bool) *closureReads {
	c := &closureReads{lastOwn: -1}
	for i := range c.firstCreated {
		for j := range c.firstCreated[i] {
			c.firstCreated[i][j] = int(^uint(0) >> 1)
		}
	}
	for _, r := range v.reads {
		switch {
		case r.circular: // luacheck's circular reference: no access
		case r.fn == v.Func:
			off := int(^uint(0) >> 1)
			if r.node != nil {
				off = r.node.Pos.Offset
			}
			c.lastOwn = max(c.lastOwn, off)
		default:
			rec, dc := b2i(r.recursive), b2i(createdDead(res, r.fn, v.Func, dead))
			c.count[rec][dc]++
			c.firstCreated[rec][dc] = min(c.firstCreated[rec][dc], outermostBelow(res, r.fn, v.Func).Pos.Offset)
		}
	}
	return c
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reach reports whether some read sees the value s gives: for a value set
// in the declaring function, a read from a closure created before the
// assignment is done (the closure may run later); for one set in a
// closure, any read from a closure, or a read in the declaring function
// after that closure is created.
func (c *closureReads) reach(s *setSite, dead func(int) bool) bool {
	recs := 1 // a recursive read does not use the function's own first value
	if s.at != s.v.Decl {
		recs = 2
	}
	dcs := 1 // a closure created in unreachable code never runs, unless s is there too
	if dead(s.at.Pos.Offset) {
		dcs = 2
	}
	for rec := 0; rec < recs; rec++ {
		for dc := 0; dc < dcs; dc++ {
			if c.count[rec][dc] == 0 {
				continue
			}
			if s.fn != s.v.Func || c.firstCreated[rec][dc] < s.after {
				return true
			}
		}
	}
	return s.fn != s.v.Func && c.lastOwn > s.fn.Pos.Offset
}

// createdDead reports whether fn, or a function enclosing it below outer,
// is created in unreachable code, so that fn never runs.
func createdDead(res *resolution, fn, outer *FunctionExpr, dead func(int) bool) bool {
	for ; fn != nil && fn != outer; fn = res.parentOf[fn] {
		if dead(fn.Pos.Offset) {
			return true
		}
	}
	return false
}

// outermostBelow is the function enclosing fn that is directly inside
// outer: the closure whose creation in outer brings fn's reads with it.
func outermostBelow(res *resolution, fn, outer *FunctionExpr) *FunctionExpr {
	for fn != nil && res.parentOf[fn] != outer {
		fn = res.parentOf[fn]
	}
	if fn == nil {
		return outer
	}
	return fn
}

// upvalueReads lists, per function, the variables of enclosing functions
// it (or a function inside it) reads.
func upvalueReads(res *resolution) map[*FunctionExpr][]*Var {
	m := map[*FunctionExpr][]*Var{}
	for _, v := range res.vars {
		var seen map[*FunctionExpr]bool // made for the few variables closures read
		for _, r := range v.reads {
			if r.circular || r.fn == v.Func {
				continue
			}
			if seen == nil {
				seen = map[*FunctionExpr]bool{}
			}
			for fn := r.fn; fn != nil && fn != v.Func && !seen[fn]; fn = res.parentOf[fn] {
				// an enclosing function seen before has its own enclosing
				// ones seen too
				seen[fn] = true
				m[fn] = append(m[fn], v)
			}
		}
	}
	return m
}

func (l *liveness) block(stmts []Stmt, out liveSet) liveSet {
	live := out
	for i := len(stmts) - 1; i >= 0; i-- {
		live = l.stmt(stmts[i], live)
	}
	return live
}

// set handles a value given to n: the value is used if n's variable is
// live afterwards; the variable is dead before the assignment. It updates
// live in place and returns it. At the variable's declaration it leaves
// the set altogether.
func (l *liveness) set(n *NameExpr, live liveSet) liveSet {
	s := l.res.sets[n]
	if s == nil {
		return live
	}
	if l.mark {
		if live.has(s.v) {
			s.used = true
		} else if k := live.kill[s.v]; k != nil && k != s {
			s.overwrittenBy = k
		}
	}
	delete(live.vars, s.v)
	if s.at == s.v.Decl {
		delete(live.kill, s.v)
	} else {
		live.kill[s.v] = s
	}
	return live
}

// reads adds the locals es read (and those closures created in es read
// from enclosing functions) to live, in place, and returns it.
func (l *liveness) reads(live liveSet, es ...Expr) liveSet {
	for _, e := range es {
		luasyntax.WalkExpr(e, func(e Expr) bool {
			switch e := e.(type) {
			case *NameExpr:
				if v := l.res.varOf(e); v != nil && !l.res.circular[e] {
					live.vars[v] = true
					delete(live.kill, v)
				}
			case *FunctionExpr:
				for _, v := range l.upvals[e] {
					live.vars[v] = true
					delete(live.kill, v)
				}
				return false
			}
			return true
		})
	}
	return live
}

// loop computes the live set at a loop head: body(head ∪ exit) ∪ extra,
// iterated to a fixpoint without marking, then once more marking. body
// owns the set it is given; out stays the caller's.
func (l *liveness) loop(s Stmt, out liveSet, body func(next liveSet) liveSet) liveSet {
	mark := l.mark
	l.mark = false
	head := newLiveSet()
	if prev, ok := l.heads[s]; ok {
		head = prev
	}
	for i := 0; i < 50; i++ {
		l.breaks = append(l.breaks, out)
		next := body(head.clone())
		l.breaks = l.breaks[:len(l.breaks)-1]
		if next.equal(head) {
			break
		}
		head = next
	}
	l.heads[s] = head
	l.mark = mark
	if mark {
		l.breaks = append(l.breaks, out)
		head = body(head.clone())
		l.breaks = l.breaks[:len(l.breaks)-1]
		return head
	}
	return head.clone() // the cached head stays unchanged
}

func (l *liveness) stmt(s Stmt, out liveSet) liveSet {
	switch s := s.(type) {
	case *LocalStmt:
		live := out
		for _, n := range s.Names {
			live = l.set(n, live)
		}
		return l.reads(live, s.Exprs...)
	case *LocalFunctionStmt:
		return l.reads(l.set(s.Name, out), s.Func)
	case *FunctionStmt:
		if n, ok := s.Target.(*NameExpr); ok {
			return l.reads(l.set(n, out), s.Func)
		}
		return l.reads(out, s.Target, s.Func)
	case *AssignStmt:
		live := out
		for _, t := range s.Targets {
			if n, ok := t.(*NameExpr); ok {
				live = l.set(n, live)
			}
		}
		for _, t := range s.Targets {
			if _, ok := t.(*NameExpr); !ok {
				live = l.reads(live, t)
			}
		}
		return l.reads(live, s.Exprs...)
	case *CallStmt:
		return l.reads(out, s.Call)
	case *ReturnStmt:
		return l.reads(newLiveSet(), s.Exprs...)
	case *BreakStmt:
		if n := len(l.breaks); n > 0 {
			return l.breaks[n-1].clone()
		}
		return out
	case *GotoStmt, *LabelStmt:
		ls := newLiveSet()
		ls.all = true
		return ls
	case *DoStmt:
		return l.block(s.Body.Stmts, out)
	case *IfStmt:
		// Constant conditions are folded as the unreachable analyzer folds
		// them: code no path reaches reads nothing. Every branch starts
		// from its own copy of out; the last one takes out itself.
		n := len(s.Conds)
		if s.Else != nil {
			n++
		}
		from := func() liveSet {
			n--
			if n == 0 {
				return out
			}
			return out.clone()
		}
		var acc liveSet
		if s.Else != nil {
			acc = l.block(s.Else.Stmts, from())
		} else {
			acc = out.clone()
		}
		for i := len(s.Conds) - 1; i >= 0; i-- {
			switch {
			case isFalsy(s.Conds[i]):
				// dead, but analysed as code: its own values reach its reads
				l.block(s.Blocks[i].Stmts, from())
				acc = l.reads(acc, s.Conds[i])
			case isTruthy(s.Conds[i]):
				acc = l.reads(l.block(s.Blocks[i].Stmts, from()), s.Conds[i])
			default:
				acc = l.reads(l.block(s.Blocks[i].Stmts, from()).union(acc), s.Conds[i])
			}
		}
		return acc
	case *WhileStmt:
		if isFalsy(s.Cond) {
			// "while nil": the body never runs, but its own values may
			// still reach its own reads (dead code is analysed as code)
			l.loop(s, out, func(head liveSet) liveSet { return l.block(s.Body.Stmts, head) })
			return l.reads(out, s.Cond)
		}
		head := l.loop(s, out, func(head liveSet) liveSet {
			in := l.block(s.Body.Stmts, head)
			if !isTruthy(s.Cond) { // "while true" leaves only by break
				in = in.union(out)
			}
			return l.reads(in, s.Cond)
		})
		return head
	case *RepeatStmt:
		return l.loop(s, out, func(head liveSet) liveSet {
			after := head
			if !isFalsy(s.Cond) { // "until false" leaves only by break
				after = head.union(out)
			}
			return l.block(s.Body.Stmts, l.reads(after, s.Cond))
		})
	case *NumForStmt:
		head := l.loop(s, out, func(head liveSet) liveSet {
			return l.set(s.Var, l.block(s.Body.Stmts, head)).union(out)
		})
		return l.reads(head, s.Init, s.Limit, s.Step)
	case *GenForStmt:
		head := l.loop(s, out, func(head liveSet) liveSet {
			in := l.block(s.Body.Stmts, head)
			for _, n := range s.Vars {
				in = l.set(n, in)
			}
			return in.union(out)
		})
		return l.reads(head, s.Exprs...)
	}
	return out
}
