package lint

import "github.com/redlua/redlua/internal/luasyntax"

// Reachability: which statements can run. UnreachableAnalyzer reports what
// cannot (511) and loops that run at most once (512); the liveness pass
// (liveness.go) and the unused analyzer ask isDead, since a read in dead
// code is no read, as in luacheck.

// UnreachableAnalyzer reports code after a statement that never completes
// (511) and loops whose body always leaves on the first pass (512).
var UnreachableAnalyzer = &Analyzer{
	Name:  "unreachable",
	Doc:   "unreachable code and loops that run at most once",
	Codes: []string{"511", "512"},
	Run:   runUnreachable,
}

func runUnreachable(p *Pass) {
	for _, r := range p.reach().reports {
		p.reportSpan(r.at, r.code, Warning, "", r.msg)
	}
}

// reachInfo is what the reachability walk finds: the 511/512 reports and
// the spans of every statement no path reaches.
type reachInfo struct {
	reports []reachReport
	dead    []span
}

type reachReport struct {
	at   span
	code string
	msg  string
}

// reach computes reachability once per file.
func (p *Pass) reach() *reachInfo {
	if p.reachCache == nil {
		u := &unreachable{info: &reachInfo{}}
		u.block(p.File.Block)
		p.reachCache = u.info
	}
	return p.reachCache
}

// isDead reports whether an offset lies in unreachable code.
func (r *reachInfo) isDead(off int) bool {
	for _, s := range r.dead {
		if off >= s.Pos.Offset && off <= s.End {
			return true
		}
	}
	return false
}

type unreachable struct {
	info *reachInfo
	// quiet > 0 while walking code whose unreachability is already
	// reported by its enclosing loop ("while false")
	quiet int
}

func (u *unreachable) report(s Stmt, code, msg string) {
	u.reportSpan(spanAt(s.Start(), s.EndOffset()), code, msg)
}

func (u *unreachable) reportSpan(at span, code, msg string) {
	if u.quiet == 0 {
		u.info.reports = append(u.info.reports, reachReport{at: at, code: code, msg: msg})
	}
}

func (u *unreachable) markDead(s Stmt) {
	u.info.dead = append(u.info.dead, spanAt(s.Start(), s.EndOffset()))
}

// block walks a block and reports whether control never reaches its end
// (its last statement never completes). As luacheck, a statement is
// reported when nothing can flow into it: it follows a statement that
// never completes, or opens a branch a constant condition never takes.
// Statements after it flow from it, so one report covers the run.
func (u *unreachable) block(b *Block) bool {
	prevDone, dead := false, false
	for _, s := range b.Stmts {
		if prevDone {
			if !isJump(s) {
				u.report(s, "511", "unreachable code")
			}
			dead = true
		}
		if dead {
			u.markDead(s)
		}
		prevDone = u.stmt(s)
	}
	return prevDone
}

// deadBranch reports the first statement of a branch that a constant
// condition never takes, then walks the branch.
func (u *unreachable) deadBranch(b *Block) bool {
	if b == nil {
		return false
	}
	if len(b.Stmts) > 0 && !isJump(b.Stmts[0]) {
		u.report(b.Stmts[0], "511", "unreachable code")
	}
	for _, s := range b.Stmts {
		u.markDead(s)
	}
	return u.block(b)
}

// isJump: break and goto are jumps, not code luacheck reports; an empty
// statement is nothing at all.
func isJump(s Stmt) bool {
	switch s.(type) {
	case *BreakStmt, *GotoStmt, *EmptyStmt, *LabelStmt:
		return true
	}
	return false
}

func (u *unreachable) stmt(s Stmt) bool {
	luasyntax.WalkFuncs(s, u.function)
	switch s := s.(type) {
	case *ReturnStmt, *BreakStmt, *GotoStmt:
		return true
	case *DoStmt:
		return u.block(s.Body)
	case *IfStmt:
		// A constant condition decides the branch, as luacheck folds it:
		// a truthy one makes the later branches dead and removes the
		// fall-through when there is no else; a falsy one kills its own
		// branch. Dead branches are still code: unless they end in a
		// statement that never completes, they flow to the end of the if.
		all, dead, implicitElse := true, false, s.Else == nil
		for i, b := range s.Blocks {
			var done bool
			switch {
			case dead || isFalsy(s.Conds[i]):
				done = u.deadBranch(b)
			default:
				done = u.block(b)
				if isTruthy(s.Conds[i]) {
					dead, implicitElse = true, false
				}
			}
			all = all && done
		}
		if s.Else != nil {
			if dead {
				all = u.deadBranch(s.Else) && all
			} else {
				all = u.block(s.Else) && all
			}
		}
		return all && !implicitElse
	case *WhileStmt:
		if isFalsy(s.Cond) {
			// the body is dead: its first statement is reported, or the
			// loop itself when the body is empty (its end is what no path
			// reaches), as luacheck does
			if len(s.Body.Stmts) == 0 {
				u.reportSpan(s.Span, "512", "loop is executed at most once")
			}
			u.deadBranch(s.Body)
			return false
		}
		u.loopOnce(s.Body, s.Span)
		return isTruthy(s.Cond) && !hasBreak(s.Body)
	case *RepeatStmt:
		// luacheck has no "at most once" for repeat: its test is the exit
		if u.block(s.Body) {
			// the test is never evaluated; flow resumes from it
			u.reportSpan(spanAt(s.Cond.Start(), s.Cond.EndOffset()), "511", "unreachable code")
			return false
		}
		return isFalsy(s.Cond) && !hasBreak(s.Body)
	case *NumForStmt:
		u.loopOnce(s.Body, s.Span)
	case *GenForStmt:
		u.loopOnce(s.Body, s.Span)
	}
	return false
}

func (u *unreachable) loopOnce(body *Block, head span) {
	if u.block(body) && !hasContinuePath(body) {
		u.reportSpan(head, "512", "loop is executed at most once")
	}
}

func (u *unreachable) function(fn *FunctionExpr) { u.block(fn.Body) }

// hasContinuePath reports whether a goto could jump back within the loop
// (the Lua 5.2 "continue" idiom), which luacheck does not count as leaving.
func hasContinuePath(b *Block) bool {
	found := false
	luasyntax.WalkStmts(b, func(s Stmt) bool {
		if _, ok := s.(*GotoStmt); ok {
			found = true
		}
		return !found
	})
	return found
}

// hasBreak reports whether a break leaves this loop (breaks of inner loops
// do not count).
func hasBreak(b *Block) bool {
	for _, s := range b.Stmts {
		switch s := s.(type) {
		case *BreakStmt, *GotoStmt:
			return true
		case *DoStmt:
			if hasBreak(s.Body) {
				return true
			}
		case *IfStmt:
			for _, bb := range s.Blocks {
				if hasBreak(bb) {
					return true
				}
			}
			if s.Else != nil && hasBreak(s.Else) {
				return true
			}
		}
	}
	return false
}

func isTruthy(e Expr) bool {
	switch e.(type) {
	case *TrueExpr, *NumberExpr, *StringExpr, *TableExpr, *FunctionExpr:
		return true
	}
	return false
}

func isFalsy(e Expr) bool {
	switch e.(type) {
	case *FalseExpr, *NilExpr:
		return true
	}
	return false
}
