package luasyntax

// Expressions: Lua 5.1's precedence climbing, with the Lua 5.3 operators
// Redis rejects parsed (and recorded) so the rest of the file is checked.

func (p *parser) exprList() []Expr {
	list := []Expr{p.expr()}
	for p.tok.kind == ',' {
		p.advance()
		list = append(list, p.expr())
	}
	return list
}

func (p *parser) primaryExpr() Expr {
	switch p.tok.kind {
	case tokName:
		return p.name()
	case '(':
		t := p.tok
		p.advance()
		x := p.expr()
		e := p.expectClose(')', '(', t.Pos.Line)
		return &ParenExpr{Span: Span{t.Pos, e.End}, X: x}
	}
	p.errorf("expected expression near %s", p.near())
	return nil
}

func (p *parser) suffixedExpr() Expr {
	e := p.primaryExpr()
	for {
		switch p.tok.kind {
		case '.':
			p.advance()
			k := p.name()
			e = &IndexExpr{Span: spanOf(e, k), Obj: e, Key: &StringExpr{Span: k.Span, Value: k.Name}}
		case '[':
			p.advance()
			k := p.expr()
			c := p.expect(']')
			e = &IndexExpr{Span: Span{e.Start(), c.End}, Obj: e, Key: k}
		case ':':
			p.advance()
			m := p.name()
			args, end := p.callArgs()
			e = &MethodCallExpr{Span: Span{e.Start(), end}, Obj: e, Method: m.Name, Args: args}
		case '(', tokString, '{':
			args, end := p.callArgs()
			e = &CallExpr{Span: Span{e.Start(), end}, Fn: e, Args: args}
		default:
			return e
		}
	}
}

func (p *parser) callArgs() ([]Expr, int) {
	switch p.tok.kind {
	case tokString:
		t := p.tok
		p.advance()
		return []Expr{&StringExpr{Span: Span{t.Pos, t.End}, Value: t.text}}, t.End
	case '{':
		tb := p.table()
		return []Expr{tb}, tb.End
	case '(':
		if p.tok.Pos.Line != p.prev.Pos.Line && p.prev.kind != 0 {
			// Lua 5.1 rejects a call whose '(' starts a new line.
			p.errorf("ambiguous syntax (function call x new statement) near %s", p.near())
		}
		open := p.tok
		p.advance()
		var args []Expr
		if p.tok.kind != ')' {
			args = p.exprList()
		}
		c := p.expectClose(')', '(', open.Pos.Line)
		return args, c.End
	}
	p.errorf("function arguments expected near %s", p.near())
	return nil, 0
}

func (p *parser) table() *TableExpr {
	open := p.expect('{')
	tb := &TableExpr{}
	for p.tok.kind != '}' {
		switch {
		case p.tok.kind == '[':
			p.advance()
			k := p.expr()
			p.expect(']')
			p.expect('=')
			tb.Items = append(tb.Items, TableItem{Key: k, Value: p.expr()})
		case p.tok.kind == tokName && p.peek().kind == '=':
			k := p.name()
			p.advance()
			tb.Items = append(tb.Items, TableItem{Key: &StringExpr{Span: k.Span, Value: k.Name}, Value: p.expr()})
		default:
			tb.Items = append(tb.Items, TableItem{Value: p.expr()})
		}
		if p.tok.kind == ',' || p.tok.kind == ';' {
			p.advance()
			continue
		}
		break
	}
	c := p.expectClose('}', '{', open.Pos.Line)
	tb.Span = Span{open.Pos, c.End}
	return tb
}

func (p *parser) simpleExpr() Expr {
	t := p.tok
	s := Span{t.Pos, t.End}
	switch t.kind {
	case tokNumber:
		p.advance()
		return &NumberExpr{Span: s, Raw: t.text}
	case tokString:
		p.advance()
		return &StringExpr{Span: s, Value: t.text}
	case tokNil:
		p.advance()
		return &NilExpr{s}
	case tokTrue:
		p.advance()
		return &TrueExpr{s}
	case tokFalse:
		p.advance()
		return &FalseExpr{s}
	case tokDots:
		if !p.vararg[len(p.vararg)-1] {
			p.errorf("cannot use '...' outside a vararg function")
		}
		p.advance()
		return &VarargExpr{s}
	case '{':
		return p.table()
	case tokFunction:
		p.advance()
		return p.funcBody(t, false)
	}
	return p.suffixedExpr()
}

type binPrec struct{ left, right int }

var binaryOps = map[tokKind]binPrec{
	tokOr: {1, 1}, tokAnd: {2, 2},
	'<': {3, 3}, '>': {3, 3}, tokLE: {3, 3}, tokGE: {3, 3}, tokNE: {3, 3}, tokEq: {3, 3},
	'|': {4, 4}, '~': {5, 5}, '&': {6, 6}, tokShl: {7, 7}, tokShr: {7, 7},
	tokConcat: {9, 8}, '+': {10, 10}, '-': {10, 10},
	'*': {11, 11}, '/': {11, 11}, tokIDiv: {11, 11}, '%': {11, 11},
	'^': {14, 13},
}

const unaryPrec = 12

func isLua53Op(k tokKind) bool {
	switch k {
	case '|', '~', '&', tokShl, tokShr, tokIDiv:
		return true
	}
	return false
}

func (p *parser) expr() Expr { return p.subExpr(0) }

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.errorf("chunk has too many syntax levels")
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) subExpr(limit int) Expr {
	p.enter()
	defer p.leave()
	var left Expr
	t := p.tok
	switch t.kind {
	case tokNot, '-', '#', '~':
		p.advance()
		if t.kind == '~' {
			p.note(Span{t.Pos, t.End}, "the bitwise operator '~'")
		}
		x := p.subExpr(unaryPrec)
		op := tokenName(t.kind)
		left = &UnaryExpr{Span: Span{t.Pos, x.EndOffset()}, Op: op, X: x}
	default:
		left = p.simpleExpr()
	}
	for {
		op := p.tok
		prec, ok := binaryOps[op.kind]
		if !ok || prec.left <= limit {
			return left
		}
		if isLua53Op(op.kind) {
			what := "the bitwise operator '" + tokenName(op.kind) + "'"
			if op.kind == tokIDiv {
				what = "the integer division operator '//'"
			}
			p.note(Span{op.Pos, op.End}, what)
		}
		p.advance()
		right := p.subExpr(prec.right)
		left = &BinaryExpr{Span: spanOf(left, right), Op: tokenName(op.kind), L: left, R: right}
	}
}
