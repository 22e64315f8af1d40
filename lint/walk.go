package lint

// walkStmts calls fn for every statement in b and in nested blocks,
// including the bodies of function expressions, depth first. fn returning
// false stops the walk.
func walkStmts(b *Block, fn func(Stmt) bool) bool {
	for _, s := range b.Stmts {
		if !fn(s) {
			return false
		}
		stop := false
		walkFuncs(s, func(f *FunctionExpr) {
			if !stop && !walkStmts(f.Body, fn) {
				stop = true
			}
		})
		if stop {
			return false
		}
		for _, child := range childBlocks(s) {
			if !walkStmts(child, fn) {
				return false
			}
		}
	}
	return true
}

func childBlocks(s Stmt) []*Block {
	switch s := s.(type) {
	case *DoStmt:
		return []*Block{s.Body}
	case *WhileStmt:
		return []*Block{s.Body}
	case *RepeatStmt:
		return []*Block{s.Body}
	case *NumForStmt:
		return []*Block{s.Body}
	case *GenForStmt:
		return []*Block{s.Body}
	case *IfStmt:
		bs := append([]*Block(nil), s.Blocks...)
		if s.Else != nil {
			bs = append(bs, s.Else)
		}
		return bs
	}
	return nil
}

// stmtExprs lists the expressions a statement holds directly.
func stmtExprs(s Stmt) []Expr {
	switch s := s.(type) {
	case *LocalStmt:
		return s.Exprs
	case *AssignStmt:
		return append(append([]Expr(nil), s.Targets...), s.Exprs...)
	case *CallStmt:
		return []Expr{s.Call}
	case *WhileStmt:
		return []Expr{s.Cond}
	case *RepeatStmt:
		return []Expr{s.Cond}
	case *IfStmt:
		return s.Conds
	case *NumForStmt:
		es := []Expr{s.Init, s.Limit}
		if s.Step != nil {
			es = append(es, s.Step)
		}
		return es
	case *GenForStmt:
		return s.Exprs
	case *ReturnStmt:
		return s.Exprs
	case *FunctionStmt:
		return []Expr{s.Target, s.Func}
	case *LocalFunctionStmt:
		return []Expr{s.Func}
	}
	return nil
}

// walkFuncs calls fn for each function expression directly inside the
// statement's expressions (not inside those functions' bodies).
func walkFuncs(s Stmt, fn func(*FunctionExpr)) {
	for _, e := range stmtExprs(s) {
		walkExpr(e, func(e Expr) bool {
			if f, ok := e.(*FunctionExpr); ok {
				fn(f)
				return false
			}
			return true
		})
	}
}

// walkExpr calls fn for e and its subexpressions, pre-order; fn returning
// false skips the node's children.
func walkExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *IndexExpr:
		walkExpr(e.Obj, fn)
		walkExpr(e.Key, fn)
	case *CallExpr:
		walkExpr(e.Fn, fn)
		for _, a := range e.Args {
			walkExpr(a, fn)
		}
	case *MethodCallExpr:
		walkExpr(e.Obj, fn)
		for _, a := range e.Args {
			walkExpr(a, fn)
		}
	case *TableExpr:
		for _, it := range e.Items {
			walkExpr(it.Key, fn)
			walkExpr(it.Value, fn)
		}
	case *BinaryExpr:
		walkExpr(e.L, fn)
		walkExpr(e.R, fn)
	case *UnaryExpr:
		walkExpr(e.X, fn)
	case *ParenExpr:
		walkExpr(e.X, fn)
	}
}

// walkAllExprs visits every expression in the file, including those in
// function bodies.
func walkAllExprs(b *Block, fn func(Expr) bool) {
	walkStmts(b, func(s Stmt) bool {
		for _, e := range stmtExprs(s) {
			walkExpr(e, func(e Expr) bool {
				if _, ok := e.(*FunctionExpr); ok {
					return false // its body's statements are walked by walkStmts
				}
				return fn(e)
			})
		}
		return true
	})
}
