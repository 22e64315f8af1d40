package lint

import "github.com/redlua/redlua/internal/luasyntax"

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
	luasyntax.WalkStmts(p.File.Block, func(s Stmt) bool {
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
		sp := spanAt(s.Start(), s.EndOffset())
		switch {
		case len(exprs) > targets:
			p.reportSpan(sp, "531", Warning, "", "right side of assignment has more values than left side expects")
		case len(exprs) < targets && !local && !isMulti(exprs[len(exprs)-1]):
			p.reportSpan(sp, "532", Warning, "", "right side of assignment has less values than left side expects")
		}
		return true
	})
}

// EmptyAnalyzer reports empty do..End blocks (541), empty if branches
// (542) and empty statements (551).
var EmptyAnalyzer = &Analyzer{
	Name:  "empty",
	Doc:   "empty blocks, if branches and statements",
	Codes: []string{"541", "542", "551"},
	Run:   runEmpty,
}

func runEmpty(p *Pass) {
	luasyntax.WalkStmts(p.File.Block, func(s Stmt) bool {
		switch s := s.(type) {
		case *DoStmt:
			if len(s.Body.Stmts) == 0 {
				p.reportSpan(s.Span, "541", Warning, "", "empty do..End block")
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
			p.reportSpan(s.Span, "551", Warning, "", "empty statement")
		}
		return true
	})
}
