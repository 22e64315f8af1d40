package lint

// UnreachableAnalyzer reports code after a statement that never completes
// (511) and loops whose body always leaves on the first pass (512).
var UnreachableAnalyzer = &Analyzer{
	Name:  "unreachable",
	Doc:   "unreachable code and loops that run at most once",
	Codes: []string{"511", "512"},
	Run:   runUnreachable,
}

func runUnreachable(p *Pass) {
	u := &unreachable{p: p}
	u.block(p.File.Block)
}

type unreachable struct{ p *Pass }

// block walks a block and reports whether control can never leave it
// through its end.
func (u *unreachable) block(b *Block) bool {
	done := false
	for _, s := range b.Stmts {
		if done {
			if _, empty := s.(*EmptyStmt); !empty {
				u.p.reportSpan(span{s.Start(), s.EndOffset()}, "511", Warning, "", "unreachable code")
				// Walk the rest for nested functions only; one report per
				// unreachable run.
				u.nested(s)
			}
			continue
		}
		if u.stmt(s) {
			done = true
		}
	}
	return done
}

// nested checks the functions inside an unreachable statement.
func (u *unreachable) nested(s Stmt) { u.stmt(s) }

func (u *unreachable) stmt(s Stmt) bool {
	walkFuncs(s, u.function)
	switch s := s.(type) {
	case *ReturnStmt, *BreakStmt, *GotoStmt:
		return true
	case *DoStmt:
		return u.block(s.Body)
	case *IfStmt:
		all := s.Else != nil
		for _, b := range s.Blocks {
			if !u.block(b) {
				all = false
			}
		}
		if s.Else != nil && !u.block(s.Else) {
			all = false
		}
		return all
	case *WhileStmt:
		u.loopOnce(s.Body, s.span)
		return isTruthy(s.Cond) && !hasBreak(s.Body)
	case *RepeatStmt:
		u.loopOnce(s.Body, s.span)
		return isFalsy(s.Cond) && !hasBreak(s.Body)
	case *NumForStmt:
		u.loopOnce(s.Body, s.span)
	case *GenForStmt:
		u.loopOnce(s.Body, s.span)
	}
	return false
}

func (u *unreachable) loopOnce(body *Block, head span) {
	if u.block(body) && !hasContinuePath(body) {
		u.p.reportSpan(head, "512", Warning, "", "loop is executed at most once")
	}
}

func (u *unreachable) function(fn *FunctionExpr) { u.block(fn.Body) }

// hasContinuePath reports whether a goto could jump back within the loop
// (the Lua 5.2 "continue" idiom), which luacheck does not count as leaving.
func hasContinuePath(b *Block) bool {
	found := false
	walkStmts(b, func(s Stmt) bool {
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

// UnbalancedAnalyzer reports assignments whose right side has more values
// than targets (531) or fewer (532, not for local declarations, where
// "local a, b" style nil-initialisation is idiomatic).
var UnbalancedAnalyzer = &Analyzer{
	Name:  "unbalanced",
	Doc:   "assignments with more or fewer values than targets",
	Codes: []string{"531", "532"},
	Run:   runUnbalanced,
}

func isMulti(e Expr) bool {
	switch e.(type) {
	case *CallExpr, *MethodCallExpr, *VarargExpr:
		return true
	}
	return false
}

func runUnbalanced(p *Pass) {
	walkStmts(p.File.Block, func(s Stmt) bool {
		var targets int
		var exprs []Expr
		local := false
		switch s := s.(type) {
		case *AssignStmt:
			targets, exprs = len(s.Targets), s.Exprs
		case *LocalStmt:
			if len(s.Exprs) == 0 {
				return true
			}
			targets, exprs, local = len(s.Names), s.Exprs, true
		default:
			return true
		}
		sp := span{s.Start(), s.EndOffset()}
		switch {
		case len(exprs) > targets:
			p.reportSpan(sp, "531", Warning, "", "right side of assignment has more values than left side expects")
		case len(exprs) < targets && !local && !isMulti(exprs[len(exprs)-1]):
			p.reportSpan(sp, "532", Warning, "", "right side of assignment has less values than left side expects")
		}
		return true
	})
}

// EmptyAnalyzer reports empty do..end blocks (541), empty if branches
// (542) and empty statements (551).
var EmptyAnalyzer = &Analyzer{
	Name:  "empty",
	Doc:   "empty blocks, if branches and statements",
	Codes: []string{"541", "542", "551"},
	Run:   runEmpty,
}

func runEmpty(p *Pass) {
	walkStmts(p.File.Block, func(s Stmt) bool {
		switch s := s.(type) {
		case *DoStmt:
			if len(s.Body.Stmts) == 0 {
				p.reportSpan(s.span, "541", Warning, "", "empty do..end block")
			}
		case *IfStmt:
			for i, b := range s.Blocks {
				if len(b.Stmts) == 0 {
					p.reportSpan(s.Heads[i], "542", Warning, "", "empty if branch")
				}
			}
			if s.Else != nil && len(s.Else.Stmts) == 0 {
				p.reportSpan(s.ElseHead, "542", Warning, "", "empty if branch")
			}
		case *EmptyStmt:
			p.reportSpan(s.span, "551", Warning, "", "empty statement")
		}
		return true
	})
}
