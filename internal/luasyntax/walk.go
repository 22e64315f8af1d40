package luasyntax

// WalkStmts calls fn for every statement in b and in nested blocks,
// including the bodies of function expressions, depth first. fn returning
// false stops the walk.
func WalkStmts(b *Block, fn func(Stmt) bool) bool {
	for _, s := range b.Stmts {
		if !fn(s) {
			return false
		}
		stop := false
		WalkFuncs(s, func(f *FunctionExpr) {
			if !stop && !WalkStmts(f.Body, fn) {
				stop = true
			}
		})
		if stop {
			return false
		}
		for _, child := range ChildBlocks(s) {
			if !WalkStmts(child, fn) {
				return false
			}
		}
	}
	return true
}

// ChildBlocks lists the blocks nested directly in a statement.
func ChildBlocks(s Stmt) []*Block {
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

// StmtExprs lists the expressions a statement holds directly.
func StmtExprs(s Stmt) []Expr {
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

// WalkFuncs calls fn for each function expression directly inside the
// statement's expressions (not inside those functions' bodies).
func WalkFuncs(s Stmt, fn func(*FunctionExpr)) {
	for _, e := range StmtExprs(s) {
		WalkExpr(e, func(e Expr) bool {
			if f, ok := e.(*FunctionExpr); ok {
				fn(f)
				return false
			}
			return true
		})
	}
}

// WalkExpr calls fn for e and its subexpressions, pre-order; fn returning
// false skips the node's children.
func WalkExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *IndexExpr:
		WalkExpr(e.Obj, fn)
		WalkExpr(e.Key, fn)
	case *CallExpr:
		WalkExpr(e.Fn, fn)
		for _, a := range e.Args {
			WalkExpr(a, fn)
		}
	case *MethodCallExpr:
		WalkExpr(e.Obj, fn)
		for _, a := range e.Args {
			WalkExpr(a, fn)
		}
	case *TableExpr:
		for _, it := range e.Items {
			WalkExpr(it.Key, fn)
			WalkExpr(it.Value, fn)
		}
	case *BinaryExpr:
		WalkExpr(e.L, fn)
		WalkExpr(e.R, fn)
	case *UnaryExpr:
		WalkExpr(e.X, fn)
	case *ParenExpr:
		WalkExpr(e.X, fn)
	}
}

// WalkAllExprs visits every expression in the file, including those in
// function bodies.
func WalkAllExprs(b *Block, fn func(Expr) bool) {
	WalkStmts(b, func(s Stmt) bool {
		for _, e := range StmtExprs(s) {
			WalkExpr(e, func(e Expr) bool {
				if _, ok := e.(*FunctionExpr); ok {
					return false // its body's statements are walked by WalkStmts
				}
				return fn(e)
			})
		}
		return true
	})
}
