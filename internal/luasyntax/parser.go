package luasyntax

import "fmt"

// NewSyntax records a Lua 5.2+ construct that Redis's Lua 5.1 rejects;
// the parser accepts it so the rest of the file is still checked.
type NewSyntax struct {
	Span
	// What names the construct ("goto", "the // operator", ...).
	What string
}

// Message is how lint's E931 and the registry word the construct.
func (n NewSyntax) Message() string {
	return n.What + " is Lua 5.2+ syntax; Redis runs Lua 5.1, which rejects the script"
}

// maxDepth is Lua 5.1's LUAI_MAXCCALLS: deeper nesting fails to compile
// ("chunk has too many syntax levels"), and the limit keeps every
// recursive walk over the tree shallow.
const maxDepth = 200

type parser struct {
	depth int
	// vararg says, per enclosing function, whether it takes "..."
	vararg []bool
	lx     *lexer
	tok    token
	ahead  *token
	prev   token
	news   []NewSyntax
	err    *syntaxError
}

// File is a parsed chunk with what the checks need beside the tree.
type File struct {
	Name     string
	Src      string
	Block    *Block
	Comments []Comment
	lx       *lexer
	news     []NewSyntax
	// Main is the implicit vararg function of the chunk.
	Main *FunctionExpr
}

// Parse parses Lua source with Lua 5.1's grammar and limits, accepting
// (and recording, see File.NewSyntax) the Lua 5.2+ constructs Redis
// rejects. The error, if any, is the first syntax error, worded as Lua's
// compiler and luacheck (E011) word it.
func Parse(name string, src []byte) (*File, *SyntaxError) {
	p := &parser{lx: newLexer(string(src))}
	var block *Block
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopParse); !ok {
					panic(r)
				}
			}
		}()
		p.vararg = []bool{true} // the main chunk is a vararg function
		p.advance()
		block = p.block()
		if p.tok.kind != tokEOF {
			p.errorf("expected <eof> near %s", p.near())
		}
	}()
	if p.lx.err != nil && (p.err == nil || p.lx.err.Pos.Offset <= p.err.Pos.Offset) {
		p.err = p.lx.err
	}
	if p.err != nil {
		return nil, &SyntaxError{File: name, Pos: p.err.Pos, EndColumn: endColumn(p.lx, p.err.Pos, p.err.End), Msg: p.err.msg}
	}
	f := &File{Name: name, Src: string(src), Block: block, Comments: p.lx.comments, lx: p.lx, news: p.news}
	f.Main = &FunctionExpr{Span: block.Span, IsVararg: true, Body: block}
	return f, nil
}

// endColumn is the column of offset end on pos's line, clipped to that
// line, as luacheck shows ranges that Span lines.
func endColumn(lx *lexer, pos Pos, end int) int {
	lineEnd := len(lx.src)
	if pos.Line < len(lx.lineStarts) {
		lineEnd = lx.lineStarts[pos.Line] - 1
		for lineEnd > pos.Offset && (lx.src[lineEnd] == '\n' || lx.src[lineEnd] == '\r') {
			lineEnd--
		}
		lineEnd++
	}
	if end >= lineEnd {
		end = lineEnd - 1
	}
	c := end - (pos.Offset - pos.Col + 1) + 1
	if c < pos.Col {
		c = pos.Col
	}
	return c
}

type stopParse struct{}

func (p *parser) advance() {
	p.prev = p.tok
	if p.ahead != nil {
		p.tok = *p.ahead
		p.ahead = nil
	} else {
		p.tok = p.lx.next()
	}
	if p.lx.err != nil {
		panic(stopParse{})
	}
}

func (p *parser) peek() token {
	if p.ahead == nil {
		t := p.lx.next()
		p.ahead = &t
		if p.lx.err != nil {
			panic(stopParse{})
		}
	}
	return *p.ahead
}

func (p *parser) near() string {
	switch p.tok.kind {
	case tokEOF:
		return "<eof>"
	}
	return "'" + p.lx.src[p.tok.Pos.Offset:p.tok.End+1] + "'"
}

func (p *parser) errorf(format string, args ...any) {
	if p.err == nil {
		p.err = &syntaxError{Pos: p.tok.Pos, End: p.tok.End, msg: fmt.Sprintf(format, args...)}
	}
	panic(stopParse{})
}

func (p *parser) check(k tokKind) {
	if p.tok.kind != k && k == tokName {
		p.errorf("expected identifier near %s", p.near())
	}
	if p.tok.kind != k {
		p.errorf("expected '%s' near %s", tokenName(k), p.near())
	}
}

func (p *parser) expect(k tokKind) token {
	p.check(k)
	t := p.tok
	p.advance()
	return t
}

// expectClose expects the token closing a construct opened on another
// line, naming the opener as Lua does.
func (p *parser) expectClose(k tokKind, opener tokKind, openLine int) token {
	if p.tok.kind != k {
		if openLine == p.tok.Pos.Line {
			p.errorf("expected '%s' near %s", tokenName(k), p.near())
		}
		p.errorf("expected '%s' (to close '%s' on line %d) near %s", tokenName(k), tokenName(opener), openLine, p.near())
	}
	t := p.tok
	p.advance()
	return t
}

func (p *parser) name() *NameExpr {
	t := p.expect(tokName)
	return &NameExpr{Span: Span{t.Pos, t.End}, Name: t.text}
}

func (p *parser) note(s Span, what string) { p.news = append(p.news, NewSyntax{Span: s, What: what}) }

func blockFollow(k tokKind) bool {
	switch k {
	case tokElse, tokElseif, tokEnd, tokUntil, tokEOF:
		return true
	}
	return false
}

func (p *parser) block() *Block {
	b := &Block{Span: Span{Pos: p.tok.Pos}}
	for !blockFollow(p.tok.kind) {
		if p.tok.kind == tokReturn {
			b.Stmts = append(b.Stmts, p.retStat())
			break
		}
		st := p.statement()
		b.Stmts = append(b.Stmts, st)
		if p.tok.kind == ';' {
			p.advance()
		}
		if _, ok := st.(*BreakStmt); ok && !blockFollow(p.tok.kind) && p.tok.kind != tokReturn {
			p.note(Span{p.tok.Pos, p.tok.End}, "a statement after 'break' in the same block")
		}
	}
	b.End = p.tok.Pos.Offset - 1
	if len(b.Stmts) > 0 {
		b.End = b.Stmts[len(b.Stmts)-1].EndOffset()
	}
	return b
}

func (p *parser) retStat() Stmt {
	t := p.expect(tokReturn)
	st := &ReturnStmt{Span: Span{t.Pos, t.End}}
	if !blockFollow(p.tok.kind) && p.tok.kind != ';' {
		st.Exprs = p.exprList()
		st.End = st.Exprs[len(st.Exprs)-1].EndOffset()
	}
	if p.tok.kind == ';' {
		p.advance()
	}
	if !blockFollow(p.tok.kind) {
		p.errorf("expected <eof> near %s", p.near())
	}
	return st
}

func (p *parser) statement() Stmt {
	p.enter()
	defer p.leave()
	t := p.tok
	switch t.kind {
	case ';':
		p.advance()
		p.note(Span{t.Pos, t.End}, "an empty statement ';'")
		return &EmptyStmt{Span{t.Pos, t.End}}
	case tokIf:
		return p.ifStat()
	case tokWhile:
		p.advance()
		cond := p.expr()
		body, sp := p.loopBody(t)
		return &WhileStmt{Span: sp, Cond: cond, Body: body}
	case tokDo:
		p.advance()
		body := p.block()
		e := p.expectClose(tokEnd, tokDo, t.Pos.Line)
		return &DoStmt{Span: Span{t.Pos, e.End}, Body: body}
	case tokFor:
		return p.forStat()
	case tokRepeat:
		p.advance()
		body := p.block()
		p.expectClose(tokUntil, tokRepeat, t.Pos.Line)
		cond := p.expr()
		return &RepeatStmt{Span: Span{t.Pos, cond.EndOffset()}, Body: body, Cond: cond}
	case tokFunction:
		p.advance()
		var target Expr = p.name()
		for p.tok.kind == '.' {
			p.advance()
			k := p.name()
			target = &IndexExpr{Span: spanOf(target, k), Obj: target, Key: &StringExpr{Span: k.Span, Value: k.Name}}
		}
		method := false
		if p.tok.kind == ':' {
			p.advance()
			k := p.name()
			target = &IndexExpr{Span: spanOf(target, k), Obj: target, Key: &StringExpr{Span: k.Span, Value: k.Name}}
			method = true
		}
		fn := p.funcBody(t, method)
		return &FunctionStmt{Span: Span{t.Pos, fn.End}, Target: target, Func: fn}
	case tokLocal:
		p.advance()
		if p.tok.kind == tokFunction {
			ft := p.tok
			p.advance()
			n := p.name()
			fn := p.funcBody(ft, false)
			return &LocalFunctionStmt{Span: Span{t.Pos, fn.End}, Name: n, Func: fn}
		}
		st := &LocalStmt{}
		for {
			st.Names = append(st.Names, p.name())
			if p.tok.kind == '<' { // Lua 5.4 attribute: local x <const>
				lt := p.tok
				p.advance()
				p.name()
				gt := p.expect('>')
				p.note(Span{lt.Pos, gt.End}, "a Lua 5.4 variable attribute")
			}
			if p.tok.kind != ',' {
				break
			}
			p.advance()
		}
		st.Span = Span{t.Pos, st.Names[len(st.Names)-1].End}
		if p.tok.kind == '=' {
			p.advance()
			st.Exprs = p.exprList()
			st.End = st.Exprs[len(st.Exprs)-1].EndOffset()
		}
		return st
	case tokDColon:
		p.advance()
		n := p.name()
		e := p.expect(tokDColon)
		s := Span{t.Pos, e.End}
		p.note(s, "a label '::"+n.Name+"::'")
		return &LabelStmt{Span: s, Name: n.Name}
	case tokReturn:
		return p.retStat()
	case tokBreak:
		p.advance()
		return &BreakStmt{Span{t.Pos, t.End}}
	case tokName:
		if t.text == "goto" && p.peek().kind == tokName {
			p.advance()
			n := p.name()
			s := Span{t.Pos, n.End}
			p.note(s, "'goto'")
			return &GotoStmt{Span: s, Label: n.Name}
		}
	}
	return p.exprStat()
}

func (p *parser) ifStat() Stmt {
	t := p.tok
	st := &IfStmt{}
	for {
		p.advance() // if / elseif
		st.Conds = append(st.Conds, p.expr())
		th := p.expect(tokThen)
		st.Heads = append(st.Heads, Span{th.Pos, th.End})
		st.Blocks = append(st.Blocks, p.block())
		if p.tok.kind != tokElseif {
			break
		}
	}
	if p.tok.kind == tokElse {
		el := p.tok
		p.advance()
		st.ElseHead = Span{el.Pos, el.End}
		st.Else = p.block()
	}
	e := p.expectClose(tokEnd, tokIf, t.Pos.Line)
	st.Span = Span{t.Pos, e.End}
	return st
}

func (p *parser) forStat() Stmt {
	t := p.expect(tokFor)
	first := p.name()
	if p.tok.kind == '=' {
		p.advance()
		st := &NumForStmt{Var: first}
		st.Init = p.expr()
		p.expect(',')
		st.Limit = p.expr()
		if p.tok.kind == ',' {
			p.advance()
			st.Step = p.expr()
		}
		st.Body, st.Span = p.loopBody(t)
		return st
	}
	st := &GenForStmt{Vars: []*NameExpr{first}}
	for p.tok.kind == ',' {
		p.advance()
		st.Vars = append(st.Vars, p.name())
	}
	if p.tok.kind != tokIn {
		p.errorf("expected '=' or 'in' near %s", p.near())
	}
	p.advance()
	st.Exprs = p.exprList()
	st.Body, st.Span = p.loopBody(t)
	return st
}

// loopBody parses "do block end" of a loop opened by the keyword kw, and
// returns the block and the whole loop's span.
func (p *parser) loopBody(kw token) (*Block, Span) {
	p.expect(tokDo)
	body := p.block()
	e := p.expectClose(tokEnd, kw.kind, kw.Pos.Line)
	return body, Span{kw.Pos, e.End}
}

// funcBody parses "(params) block end" after the function keyword (kw).
func (p *parser) funcBody(kw token, method bool) *FunctionExpr {
	fn := &FunctionExpr{IsMethod: method}
	p.expect('(')
	if p.tok.kind != ')' {
		for {
			if p.tok.kind == tokDots {
				fn.IsVararg = true
				fn.VarargAt = Span{p.tok.Pos, p.tok.End}
				p.advance()
				break
			}
			if p.tok.kind != tokName {
				p.errorf("expected argument near %s", p.near())
			}
			fn.Params = append(fn.Params, p.name())
			if p.tok.kind != ',' {
				break
			}
			p.advance()
		}
	}
	p.expect(')')
	p.vararg = append(p.vararg, fn.IsVararg)
	fn.Body = p.block()
	p.vararg = p.vararg[:len(p.vararg)-1]
	e := p.expectClose(tokEnd, tokFunction, kw.Pos.Line)
	fn.Span = Span{kw.Pos, e.End}
	return fn
}

func (p *parser) exprStat() Stmt {
	e := p.suffixedExpr()
	if p.tok.kind == '=' || p.tok.kind == ',' {
		st := &AssignStmt{Targets: []Expr{e}}
		for p.tok.kind == ',' {
			p.advance()
			st.Targets = append(st.Targets, p.suffixedExpr())
		}
		for _, t := range st.Targets {
			switch t.(type) {
			case *NameExpr, *IndexExpr:
			default:
				p.errorf("syntax error near %s", p.near())
			}
		}
		p.expect('=')
		st.Exprs = p.exprList()
		st.Span = spanOf(e, st.Exprs[len(st.Exprs)-1])
		return st
	}
	switch e.(type) {
	case *CallExpr, *MethodCallExpr:
		return &CallStmt{Span: Span{e.Start(), e.EndOffset()}, Call: e}
	}
	p.errorf("syntax error near %s", p.near())
	return nil
}
