package luasyntax

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NewSyntax records a construct of Lua 5.2+ (or of luacheck's extended
// syntax) that Redis's Lua 5.1 rejects, or a "[[" nested in a long string
// or comment, which Redis's and Valkey's builds of Lua 5.1 reject; the
// parser accepts it, as luacheck does, so the rest of the file is still
// checked.
type NewSyntax struct {
	Span
	// What names the construct ("goto", "the // operator", ...).
	What string
	// NotLua is set for syntax no Lua version has (luacheck's compound
	// assignment "x += 1").
	NotLua bool
	// Nested is set for a "[[" inside a "[[...]]" string or comment, which
	// Lua 5.1 built with LUA_COMPAT_LSTR 1 (every upstream Redis and
	// Valkey) refuses: "nesting of [[...]] is deprecated near '['".
	Nested bool
}

// Message is how lint's E931 and E932 and the registry word the construct.
func (n NewSyntax) Message() string {
	if n.Nested {
		return nestedLongMsg + " near '[': Redis and Valkey build Lua 5.1 with LUA_COMPAT_LSTR 1, which refuses " +
			n.What + "; open the outer one with [=[ and close it with ]=]"
	}
	if n.NotLua {
		return n.What + " is not Lua syntax; Redis runs Lua 5.1, which rejects the script"
	}
	return n.What + " is Lua 5.2+ syntax; Redis runs Lua 5.1, which rejects the script"
}

// maxDepth is Lua 5.1's LUAI_MAXCCALLS: each block and each
// subexpression is a level, and a 201st fails to compile ("chunk has too
// many syntax levels"); the limit also keeps every recursive walk over the
// tree shallow.
const maxDepth = 200

type parser struct {
	// strict parses as Redis's Lua 5.1 compiles: the Lua 5.2+ constructs
	// are errors, worded as Lua words them.
	strict bool
	depth  int
	fs     *funcState
	lx     *lexer
	tok    token
	ahead  *token
	// lastLine is Lua's lastline: the line the lexer stood on when the
	// current token was read.
	lastLine int
	news     []NewSyntax
	err      *syntaxError
	// later is the first error luacheck reports only after a whole parse
	// ('break' outside a loop, '...' outside a vararg function).
	later *syntaxError
	guess *guesser
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
// rejects. The error, if any, is the first syntax error, worded and
// placed as luacheck reports it (E011), with Lua 5.1's own wording beside;
// what Redis says about a script is CheckLua51's, since Lua stops earlier
// on the constructs Parse accepts.
func Parse(name string, src []byte) (*File, *SyntaxError) {
	p := &parser{lx: newLexer(string(src), false)}
	block := p.run()
	if p.err == nil && p.later != nil {
		p.err = p.later
	}
	if p.err != nil {
		if p.err.guessFor != 0 {
			// luacheck re-parses to blame a less indented line for a
			// missing 'end' or 'until'; its words change, Lua's do not.
			g := &parser{lx: newLexer(string(src), false), guess: &guesser{offset: p.err.guessAt, closing: p.err.guessFor}}
			g.run()
			if g.err != nil {
				p.err.Pos, p.err.End, p.err.msg = g.err.Pos, g.err.End, g.err.msg
			}
		}
		return nil, p.syntaxError(name)
	}
	news := p.news
	if len(p.lx.nested) > 0 {
		// The lexer's records join the parser's in source order.
		news = append(append([]NewSyntax{}, p.lx.nested...), news...)
		sort.SliceStable(news, func(i, j int) bool { return news[i].Pos.Offset < news[j].Pos.Offset })
	}
	f := &File{Name: name, Src: string(src), Block: block, Comments: p.lx.comments, lx: p.lx, news: news}
	f.Main = &FunctionExpr{Span: block.Span, IsVararg: true, Body: block}
	return f, nil
}

// CheckLua51 compiles src as Redis's Lua 5.1 does and returns its first
// syntax error, or nil when Redis would compile it. The error's LuaLine and
// LuaMsg are Lua's; Redis reports them as "user_script:LINE: MSG".
func CheckLua51(name string, src []byte) *SyntaxError {
	p := &parser{lx: newLexer(string(src), true), strict: true}
	p.run()
	if p.err == nil {
		return nil
	}
	return p.syntaxError(name)
}

func (p *parser) syntaxError(name string) *SyntaxError {
	e := p.err
	pos, endCol := e.Pos, endColumn(p.lx, e.Pos, e.End)
	if pos.Offset >= len(p.lx.src) && pos.Col > 1 {
		// luacheck clips a column to its line's length, which puts <eof>
		// on the last byte of a last line without a line break.
		pos.Col = max(1, min(pos.Col, len(p.lx.src)-p.lx.lineStarts[pos.Line-1]))
		endCol = pos.Col
	}
	return &SyntaxError{File: name, Pos: pos, EndColumn: endCol, Msg: e.msg, LuaLine: e.luaLine, LuaMsg: e.luaMsg}
}

// run parses the whole chunk, leaving the first error in p.err.
func (p *parser) run() (block *Block) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopParse); !ok {
				panic(r)
			}
		}
		if p.lx.err != nil && (p.err == nil || p.lx.err.Pos.Offset <= p.err.Pos.Offset) {
			p.err = p.lx.err
		}
	}()
	p.fs = &funcState{vararg: true} // the main chunk is a vararg function
	p.advance()
	block = p.block(nil)
	if p.tok.kind != tokEOF {
		p.closeFail(closer{k: tokEOF})
	}
	return block
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
	p.lastLine = p.luaLine()
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

// luaLine is the line Lua's lexer stands on: the end of the last token it
// read (the current one, or the one it looked ahead at).
func (p *parser) luaLine() int {
	if p.ahead != nil {
		return p.ahead.endLine
	}
	return p.tok.endLine
}

// near is how luacheck quotes the current token: "<eof>", or its text
// clipped to its first line.
func (p *parser) near() string { return p.nearTok(p.tok) }

func (p *parser) nearTok(t token) string {
	if t.kind == tokEOF {
		return "<eof>"
	}
	end := t.End + 1
	if t.Pos.Line < len(p.lx.lineStarts) {
		if le := p.lx.lineStarts[t.Pos.Line]; le < end {
			end = le
			for end > t.Pos.Offset && (p.lx.src[end-1] == '\n' || p.lx.src[end-1] == '\r') {
				end--
			}
		}
	}
	return "'" + printable(p.lx.src[t.Pos.Offset:end]) + "'"
}

// printable escapes what luacheck escapes when it quotes source: in UTF-8
// text the characters that are not printable, as \xHH or \u{H}; in other
// text every byte outside ' '..'~', as \xHH.
func printable(s string) string {
	var b strings.Builder
	if !utf8.ValidString(s) {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 32 || c > 126 {
				fmt.Fprintf(&b, "\\x%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
		return b.String()
	}
	for _, r := range s {
		switch {
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r > 255:
			fmt.Fprintf(&b, "\\u{%X}", r)
		default:
			fmt.Fprintf(&b, "\\x%02X", r)
		}
	}
	return b.String()
}

// luaNear is Lua's " near '...'" for the current token: the text of a
// name, number or string (its delimiters and decoded value, cut at a NUL),
// the token's name otherwise, and nothing for a NUL byte.
func (p *parser) luaNear() string {
	t := p.tok
	var s string
	switch t.kind {
	case tokName, tokNumber:
		s = t.text
	case tokString:
		s = t.luaText
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
	case 0:
		return ""
	default:
		s = luaTokenName(t.kind)
	}
	return " near '" + s + "'"
}

// raise stops the parse with e unless an error is already recorded.
func (p *parser) raise(e syntaxError) {
	if p.err == nil {
		p.err = &e
	}
	panic(stopParse{})
}

// fail raises an error at the current token: luacheck's msg and Lua's
// luaMsg, each followed by its "near" text.
func (p *parser) fail(msg, luaMsg string) {
	p.raise(syntaxError{Pos: p.tok.Pos, End: p.tok.End, msg: msg + " near " + p.near(), luaLine: p.luaLine(), luaMsg: luaMsg + p.luaNear()})
}

// failPlain raises an error both word the same way, with no "near".
func (p *parser) failPlain(msg string) {
	p.raise(syntaxError{Pos: p.tok.Pos, End: p.tok.End, msg: msg, luaLine: p.luaLine(), luaMsg: msg})
}

// failLater records an error luacheck finds after parsing (at the span
// s), which Lua reports at once as luaMsg near the current token.
func (p *parser) failLater(s Span, msg, luaMsg string) {
	if p.strict {
		p.raise(syntaxError{Pos: s.Pos, End: s.End, msg: msg, luaLine: p.luaLine(), luaMsg: luaMsg + p.luaNear()})
	}
	if p.later == nil {
		p.later = &syntaxError{Pos: s.Pos, End: s.End, msg: msg, luaLine: p.luaLine(), luaMsg: luaMsg + p.luaNear()}
	}
}

// lcTokenName is how luacheck names an expected token.
func lcTokenName(k tokKind) string {
	switch k {
	case tokName:
		return "identifier"
	case tokEOF:
		return "<eof>"
	}
	return "'" + tokenName(k) + "'"
}

func (p *parser) check(k tokKind) {
	if p.tok.kind != k {
		p.fail("expected "+lcTokenName(k), "'"+luaTokenName(k)+"' expected")
	}
}

func (p *parser) expect(k tokKind) token {
	p.check(k)
	t := p.tok
	p.advance()
	return t
}

// closer describes the token that closes a construct, as each compiler
// checks it. Lua names its opener (luaWho, opened on line luaWhere) only
// when the construct has one in Lua's grammar (luaWho != 0); luacheck names
// its own opener (lcOpen, called lcName) when there is one.
type closer struct {
	k        tokKind
	luaWho   tokKind
	luaWhere int
	lcOpen   *token
	lcName   string
}

// close expects the closing token c.k.
func (p *parser) close(c closer) token {
	if p.tok.kind != c.k {
		p.closeFail(c)
	}
	t := p.tok
	p.advance()
	return t
}

func (p *parser) closeFail(c closer) {
	luaMsg := "'" + luaTokenName(c.k) + "' expected"
	if c.luaWho != 0 && c.luaWhere != p.luaLine() {
		luaMsg += fmt.Sprintf(" (to close '%s' at line %d)", luaTokenName(c.luaWho), c.luaWhere)
	}
	msg := "expected " + lcTokenName(c.k)
	if c.lcOpen != nil && c.lcOpen.Pos.Line != p.tok.Pos.Line {
		msg += fmt.Sprintf(" (to close '%s' on line %d)", c.lcName, c.lcOpen.Pos.Line)
	}
	e := syntaxError{Pos: p.tok.Pos, End: p.tok.End, msg: msg + " near " + p.near(), luaLine: p.luaLine(), luaMsg: luaMsg + p.luaNear()}
	if !p.strict && p.guess == nil && (c.k == tokEnd || c.k == tokUntil) {
		e.guessFor, e.guessAt = c.k, p.tok.Pos.Offset
	}
	p.raise(e)
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

// enter counts a syntax level (a block or a subexpression), as Lua does.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failPlain("chunk has too many syntax levels")
	}
}

func (p *parser) leave() { p.depth-- }

// block parses statements up to a block-closing token, in a scope of
// their own. open is the token luacheck sees as the block's opener (nil
// for the main chunk).
func (p *parser) block(open *blockOpen) *Block {
	mark := p.scope()
	b := p.blockBody(open)
	p.unscope(mark)
	return b
}

// blockBody is block without closing the block's scope (a repeat's
// condition still sees its locals).
func (p *parser) blockBody(open *blockOpen) *Block {
	p.enter()
	defer p.leave()
	if p.guess != nil && open != nil {
		p.guess.blockStart(p, open)
	}
	b := &Block{Span: Span{Pos: p.tok.Pos}}
	for !blockFollow(p.tok.kind) {
		if p.tok.kind == tokReturn {
			p.hookStatement()
			b.Stmts = append(b.Stmts, p.retStat())
			break
		}
		if p.tok.kind != ';' || p.strict {
			p.hookStatement()
		}
		st := p.statement()
		b.Stmts = append(b.Stmts, st)
		if p.tok.kind == ';' {
			p.advance()
		}
		if _, ok := st.(*BreakStmt); ok {
			if p.strict {
				break // Lua 5.1: break is the last statement of its block
			}
			if !blockFollow(p.tok.kind) && p.tok.kind != tokReturn {
				p.note(Span{p.tok.Pos, p.tok.End}, "a statement after 'break' in the same block")
			}
		}
	}
	if p.guess != nil && open != nil {
		p.guess.blockEnd(p)
	}
	b.End = p.tok.Pos.Offset - 1
	if len(b.Stmts) > 0 {
		b.End = b.Stmts[len(b.Stmts)-1].EndOffset()
	}
	return b
}

func (p *parser) hookStatement() {
	if p.guess != nil {
		p.guess.check(p)
	}
}

func (p *parser) retStat() Stmt {
	t := p.expect(tokReturn)
	st := &ReturnStmt{Span: Span{t.Pos, t.End}}
	if !blockFollow(p.tok.kind) && p.tok.kind != ';' {
		st.Exprs = p.exprList("expression")
		st.End = st.Exprs[len(st.Exprs)-1].EndOffset()
	}
	if p.tok.kind == ';' {
		p.advance()
	}
	return st
}

// blockOpen is the token luacheck sees as opening a block, and its name.
type blockOpen struct {
	tok  token
	name string
}

func (p *parser) statement() Stmt {
	t := p.tok
	switch t.kind {
	case ';':
		if p.strict {
			break
		}
		p.advance()
		p.note(Span{t.Pos, t.End}, "an empty statement ';'")
		return &EmptyStmt{Span{t.Pos, t.End}}
	case tokIf:
		return p.ifStat()
	case tokWhile:
		p.advance()
		cond := p.expr("condition")
		p.expect(tokDo)
		p.fs.loops++
		body := p.block(&blockOpen{t, "while"})
		p.fs.loops--
		e := p.close(closer{k: tokEnd, luaWho: tokWhile, luaWhere: t.endLine, lcOpen: &t, lcName: "while"})
		return &WhileStmt{Span: Span{t.Pos, e.End}, Cond: cond, Body: body}
	case tokDo:
		p.advance()
		body := p.block(&blockOpen{t, "do"})
		e := p.close(closer{k: tokEnd, luaWho: tokDo, luaWhere: t.endLine, lcOpen: &t, lcName: "do"})
		return &DoStmt{Span: Span{t.Pos, e.End}, Body: body}
	case tokFor:
		return p.forStat()
	case tokRepeat:
		p.advance()
		p.fs.loops++
		mark := p.scope()
		body := p.blockBody(&blockOpen{t, "repeat"})
		p.fs.loops--
		p.close(closer{k: tokUntil, luaWho: tokRepeat, luaWhere: t.endLine, lcOpen: &t, lcName: "repeat"})
		cond := p.expr("condition")
		p.unscope(mark)
		return &RepeatStmt{Span: Span{t.Pos, cond.EndOffset()}, Body: body, Cond: cond}
	case tokFunction:
		p.advance()
		first := p.name()
		p.reference(first.Name)
		var target Expr = first
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
		fn := p.funcBody(t, t.endLine, method)
		return &FunctionStmt{Span: Span{t.Pos, fn.End}, Target: target, Func: fn}
	case tokLocal:
		p.advance()
		if p.tok.kind == tokFunction {
			ft := p.tok
			p.advance()
			n := p.name()
			p.declare(0)
			p.activate(n.Name)
			// Lua names the line of the '(' after the name as the
			// function's.
			fn := p.funcBody(ft, p.luaLine(), false)
			return &LocalFunctionStmt{Span: Span{t.Pos, fn.End}, Name: n, Func: fn}
		}
		st := &LocalStmt{}
		for {
			st.Names = append(st.Names, p.name())
			p.declare(len(st.Names) - 1)
			if p.tok.kind == '<' && !p.strict { // Lua 5.4 attribute: local x <const>
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
			st.Exprs = p.exprList("expression")
			st.End = st.Exprs[len(st.Exprs)-1].EndOffset()
		}
		for _, n := range st.Names {
			p.activate(n.Name)
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
		if p.fs.loops == 0 {
			p.failLater(Span{t.Pos, t.End}, "'break' is not inside a loop", "no loop to break")
		}
		return &BreakStmt{Span{t.Pos, t.End}}
	case tokName:
		if t.text == "goto" && !p.strict && p.peek().kind == tokName {
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
	open := blockOpen{t, "if"}
	for {
		p.advance() // if / elseif
		st.Conds = append(st.Conds, p.expr("condition"))
		th := p.expect(tokThen)
		st.Heads = append(st.Heads, Span{th.Pos, th.End})
		st.Blocks = append(st.Blocks, p.block(&open))
		if p.tok.kind != tokElseif {
			break
		}
		open = blockOpen{p.tok, "elseif"}
	}
	if p.tok.kind == tokElse {
		el := p.tok
		open = blockOpen{el, "else"}
		p.advance()
		st.ElseHead = Span{el.Pos, el.End}
		st.Else = p.block(&open)
	}
	e := p.close(closer{k: tokEnd, luaWho: tokIf, luaWhere: t.endLine, lcOpen: &open.tok, lcName: open.name})
	st.Span = Span{t.Pos, e.End}
	return st
}

func (p *parser) forStat() Stmt {
	t := p.expect(tokFor)
	mark := p.scope()
	defer p.unscope(mark)
	first := p.name()
	if p.tok.kind == '=' {
		// Lua declares three hidden control variables and the loop's.
		for n := 0; n < 4; n++ {
			p.declare(n)
		}
		p.advance()
		st := &NumForStmt{Var: first}
		st.Init = p.expr("expression")
		p.expect(',')
		st.Limit = p.expr("expression")
		if p.tok.kind == ',' {
			p.advance()
			st.Step = p.expr("expression")
		}
		st.Body, st.Span = p.loopBody(t, st.Var.Name)
		return st
	}
	st := &GenForStmt{Vars: []*NameExpr{first}}
	if p.tok.kind != ',' && p.tok.kind != tokIn {
		p.fail("expected '=', ',' or 'in'", "'=' or 'in' expected")
	}
	for n := 0; n < 4; n++ {
		p.declare(n)
	}
	for p.tok.kind == ',' {
		p.advance()
		st.Vars = append(st.Vars, p.name())
		p.declare(len(st.Vars) + 2)
	}
	p.expect(tokIn)
	st.Exprs = p.exprList("expression")
	names := make([]string, len(st.Vars))
	for i, v := range st.Vars {
		names[i] = v.Name
	}
	st.Body, st.Span = p.loopBody(t, names...)
	return st
}

// loopBody parses "do block end" of a for loop opened by kw, whose body
// sees the loop's variables vars, and returns the block and the whole
// loop's span.
func (p *parser) loopBody(kw token, vars ...string) (*Block, Span) {
	p.activate("(for 1)", "(for 2)", "(for 3)")
	p.expect(tokDo)
	p.fs.loops++
	mark := p.scope()
	p.activate(vars...)
	body := p.block(&blockOpen{kw, "for"})
	p.unscope(mark)
	p.fs.loops--
	e := p.close(closer{k: tokEnd, luaWho: tokFor, luaWhere: kw.endLine, lcOpen: &kw, lcName: "for"})
	return body, Span{kw.Pos, e.End}
}

// funcBody parses "(params) block end" after the function keyword (kw);
// line is the line Lua names as the function's.
func (p *parser) funcBody(kw token, line int, method bool) *FunctionExpr {
	fn := &FunctionExpr{IsMethod: method}
	open := p.expect('(')
	p.fs = &funcState{parent: p.fs, line: line}
	defer func() { p.fs = p.fs.parent }()
	var params []string
	if method {
		params = append(params, "self")
		p.activate("self")
	}
	if p.tok.kind != ')' {
		for n := 0; ; n++ {
			if p.tok.kind == tokDots {
				fn.IsVararg = true
				fn.VarargAt = Span{p.tok.Pos, p.tok.End}
				p.advance()
				// Redis's Lua 5.1 (LUA_COMPAT_VARARG) declares "arg".
				p.declare(n)
				params = append(params, "arg")
				break
			}
			if p.tok.kind != tokName {
				p.fail("expected argument", "<name> or '...' expected")
			}
			fn.Params = append(fn.Params, p.name())
			p.declare(n)
			params = append(params, fn.Params[len(fn.Params)-1].Name)
			if p.tok.kind != ',' {
				break
			}
			p.advance()
		}
	}
	if method {
		params = params[1:]
	}
	p.activate(params...)
	p.fs.vararg = fn.IsVararg
	p.close(closer{k: ')', lcOpen: &open, lcName: "("})
	fn.Body = p.block(&blockOpen{kw, "function"})
	e := p.close(closer{k: tokEnd, luaWho: tokFunction, luaWhere: line, lcOpen: &kw, lcName: "function"})
	fn.Span = Span{kw.Pos, e.End}
	return fn
}

func (p *parser) exprStat() Stmt {
	start := p.tok
	e := p.suffixedExpr("statement")
	if _, ok := e.(*ParenExpr); ok {
		p.assignTargetFail(start, "statement")
	}
	switch e.(type) {
	case *CallExpr, *MethodCallExpr:
		return &CallStmt{Span: Span{e.Start(), e.EndOffset()}, Call: e}
	}
	st := &AssignStmt{Targets: []Expr{e}}
	for p.tok.kind == ',' {
		p.advance()
		start := p.tok
		t := p.suffixedExpr("identifier or field")
		// Lua checks the count of the targets before this one against
		// what is left of its syntax levels.
		if p.strict && len(st.Targets) > maxDepth-p.depth {
			p.limitFail(p.fs, maxDepth-p.depth, "variables in assignment")
		}
		switch t.(type) {
		case *ParenExpr:
			p.assignTargetFail(start, "identifier or field")
		case *CallExpr, *MethodCallExpr:
			p.fail("expected call or indexing", "syntax error")
		}
		st.Targets = append(st.Targets, t)
	}
	if op, ok := compoundOps[p.tok.kind]; ok && !p.strict {
		return p.compoundAssign(st, op)
	}
	p.expect('=')
	st.Exprs = p.exprList("expression")
	st.Span = spanOf(e, st.Exprs[len(st.Exprs)-1])
	return st
}

// assignTargetFail rejects a parenthesized expression (from open) as an
// assignment target or statement: luacheck blames its '(', Lua the token
// after it.
func (p *parser) assignTargetFail(open token, kind string) {
	p.raise(syntaxError{Pos: open.Pos, End: open.End, msg: "expected " + kind + " near '('", luaLine: p.luaLine(), luaMsg: "syntax error" + p.luaNear()})
}

// compoundOps are the operators luacheck accepts in a compound assignment
// ("x += 1"), with the names its messages use.
var compoundOps = map[tokKind]string{
	'+': "add", '-': "sub", '*': "mul", '%': "mod", '^': "pow", '/': "div",
	tokIDiv: "idiv", '&': "band", '|': "bor", '~': "bxor", tokShl: "shl",
	tokShr: "shr", tokConcat: "concat",
}

// compoundAssign parses the rest of "target op= value" as luacheck does,
// recording it as syntax Redis rejects (Lua's error is "'=' expected"),
// and returns it as the assignment "target = target op value".
func (p *parser) compoundAssign(st *AssignStmt, opName string) Stmt {
	op := p.tok
	if len(st.Targets) != 1 {
		p.fail("compound assignment not allowed on tuples near "+opName+"=", "'=' expected")
	}
	p.advance()
	eq := p.expect('=')
	rhs := p.exprList("expression")
	if len(rhs) != 1 {
		p.fail("compound assignment not allowed on tuples near "+opName+"=", "'=' expected")
	}
	p.news = append(p.news, NewSyntax{Span: Span{op.Pos, eq.End}, What: "the compound assignment '" + tokenName(op.kind) + "='", NotLua: true})
	target := st.Targets[0]
	read := target
	switch t := target.(type) {
	case *NameExpr:
		c := *t
		read = &c
	case *IndexExpr:
		c := *t
		read = &c
	}
	st.Exprs = []Expr{&BinaryExpr{Span: spanOf(read, rhs[0]), Op: tokenName(op.kind), L: read, R: rhs[0]}}
	st.Span = spanOf(target, rhs[0])
	return st
}
