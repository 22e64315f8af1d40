package luasyntax

// Expressions: Lua 5.1's precedence climbing, with the Lua 5.3 operators
// Redis rejects parsed (and recorded) so the rest of the file is checked.

// exprList parses expressions separated by commas; kind is what luacheck
// calls the first one when it is missing ("expression", "condition").
func (p *parser) exprList(kind string) []Expr {
	list := []Expr{p.expr(kind)}
	for p.tok.kind == ',' {
		p.advance()
		list = append(list, p.expr("expression"))
	}
	return list
}

// primaryExpr parses a name or a parenthesized expression; kind is what
// luacheck calls it when something else stands there ("statement",
// "expression", ...), which Lua calls an "unexpected symbol".
func (p *parser) primaryExpr(kind string) Expr {
	switch p.tok.kind {
	case tokName:
		n := p.name()
		p.reference(n.Name)
		return n
	case '(':
		t := p.tok
		p.advance()
		x := p.expr("expression")
		e := p.close(closer{k: ')', luaWho: '(', luaWhere: t.endLine, lcOpen: &t, lcName: "("})
		return &ParenExpr{Span: Span{t.Pos, e.End}, X: x}
	}
	p.fail("expected "+kind, "unexpected symbol")
	return nil
}

func (p *parser) suffixedExpr(kind string) Expr {
	e := p.primaryExpr(kind)
	for {
		switch p.tok.kind {
		case '.':
			p.advance()
			k := p.name()
			e = &IndexExpr{Span: spanOf(e, k), Obj: e, Key: &StringExpr{Span: k.Span, Value: k.Name}}
		case '[':
			open := p.tok
			p.advance()
			k := p.expr("expression")
			c := p.close(closer{k: ']', lcOpen: &open, lcName: "["})
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
		if p.luaLine() != p.lastLine {
			// Lua 5.1 rejects a call whose '(' is on another line than
			// the end of what it calls.
			p.fail("ambiguous syntax (function call x new statement)", "ambiguous syntax (function call x new statement)")
		}
		open := p.tok
		p.advance()
		var args []Expr
		if p.tok.kind != ')' {
			args = p.exprList("expression")
		}
		c := p.close(closer{k: ')', luaWho: '(', luaWhere: open.endLine, lcOpen: &open, lcName: "("})
		return args, c.End
	}
	p.fail("expected method arguments", "function arguments expected")
	return nil, 0
}

func (p *parser) table() *TableExpr {
	open := p.expect('{')
	tb := &TableExpr{}
	for p.tok.kind != '}' {
		switch {
		case p.tok.kind == '[':
			kt := p.tok
			p.advance()
			k := p.expr("expression")
			p.close(closer{k: ']', lcOpen: &kt, lcName: "["})
			p.expect('=')
			tb.Items = append(tb.Items, TableItem{Key: k, Value: p.expr("expression")})
		case p.tok.kind == tokName && p.peek().kind == '=':
			k := p.name()
			p.advance()
			tb.Items = append(tb.Items, TableItem{Key: &StringExpr{Span: k.Span, Value: k.Name}, Value: p.expr("expression")})
		default:
			tb.Items = append(tb.Items, TableItem{Value: p.expr("expression")})
		}
		if p.tok.kind == ',' || p.tok.kind == ';' {
			p.advance()
			continue
		}
		break
	}
	c := p.close(closer{k: '}', luaWho: '{', luaWhere: open.endLine, lcOpen: &open, lcName: "{"})
	tb.Span = Span{open.Pos, c.End}
	return tb
}

func (p *parser) simpleExpr(kind string) Expr {
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
		if !p.fs.vararg {
			p.failLater(s, "cannot use '...' outside a vararg function", "cannot use '...' outside a vararg function")
		}
		p.advance()
		return &VarargExpr{s}
	case '{':
		return p.table()
	case tokFunction:
		p.advance()
		// Lua names the line of the token after 'function' as the
		// function's.
		return p.funcBody(t, p.luaLine(), false)
	}
	return p.suffixedExpr(kind)
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

// expr parses an expression; kind is what luacheck calls it when it is
// missing.
func (p *parser) expr(kind string) Expr { return p.subExpr(0, kind) }

func (p *parser) subExpr(limit int, kind string) Expr {
	p.enter()
	defer p.leave()
	var left Expr
	t := p.tok
	switch t.kind {
	case tokNot, '-', '#', '~':
		if t.kind == '~' && p.strict {
			left = p.simpleExpr(kind)
			break
		}
		p.advance()
		if t.kind == '~' {
			p.note(Span{t.Pos, t.End}, "the bitwise operator '~'")
		}
		x := p.subExpr(unaryPrec, "expression")
		op := tokenName(t.kind)
		left = &UnaryExpr{Span: Span{t.Pos, x.EndOffset()}, Op: op, X: x}
	default:
		left = p.simpleExpr(kind)
	}
	for {
		op := p.tok
		prec, ok := binaryOps[op.kind]
		if !ok || prec.left <= limit || p.strict && isLua53Op(op.kind) {
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
		right := p.subExpr(prec.right, "expression")
		left = &BinaryExpr{Span: spanOf(left, right), Op: tokenName(op.kind), L: left, R: right}
	}
}
