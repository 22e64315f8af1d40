package luasyntax

import (
	"strconv"
	"strings"
)

// guesser reproduces luacheck's indentation-based guess for a missing
// 'end' or 'until': a second parse tracks the open blocks that such a
// token would close and their indentation, and blames the first statement
// or closing token, on a later line, indented as much as (but not closing)
// or less than the innermost such block, when the parse reaches the
// original error.
type guesser struct {
	offset  int     // the original error's token
	closing tokKind // the token that was missing
	stack   []*openBlock
	guessed *openBlock
}

type openBlock struct {
	open     token
	name     string
	closing  tokKind
	eligible bool
	indent   int
	at       token // the blamed token, once guessed
}

func (g *guesser) blockStart(p *parser, b *blockOpen) {
	closing := tokEnd
	if b.name == "repeat" {
		closing = tokUntil
	}
	g.stack = append(g.stack, &openBlock{open: b.tok, name: b.name, closing: closing, eligible: closing == g.closing, indent: indentation(p.lx, b.tok.Pos.Line)})
}

func (g *guesser) blockEnd(p *parser) {
	g.check(p)
	g.stack = g.stack[:len(g.stack)-1]
	if len(g.stack) == 0 {
		// Closing an outermost block cannot be the missing token.
		g.guessed = nil
	}
}

func (g *guesser) check(p *parser) {
	if n := len(g.stack); n > 0 {
		top := g.stack[n-1]
		if top.eligible && p.tok.Pos.Line > top.open.Pos.Line {
			ind := indentation(p.lx, p.tok.Pos.Line)
			k := p.tok.kind
			ifBranch := top.name == "if" || top.name == "elseif"
			if ind < top.indent || ind == top.indent && k != top.closing && (!ifBranch || k != tokElseif && k != tokElse) {
				if g.guessed == nil {
					b := *top
					b.at = p.tok
					g.guessed = &b
				}
			}
		}
	}
	if p.tok.Pos.Offset != g.offset || g.guessed == nil || g.guessed.at.Pos.Offset == p.tok.Pos.Offset {
		return
	}
	b := g.guessed
	msg := "expected " + lcTokenName(b.closing)
	if b.open.Pos.Line != b.at.Pos.Line {
		msg += " (to close '" + b.name + "' on line " + strconv.Itoa(b.open.Pos.Line) + ")"
	}
	near := p.nearTok(b.at)
	if b.at.kind == b.closing {
		near = "less indented " + near
	}
	p.raise(syntaxError{Pos: b.at.Pos, End: b.at.End, msg: msg + " near " + near + " (indentation-based guess)"})
}

// indentation counts the blanks that start a line, as luacheck does.
func indentation(lx *lexer, line int) int {
	if line-1 >= len(lx.lineStarts) {
		return 0
	}
	rest := lx.src[lx.lineStarts[line-1]:]
	return len(rest) - len(strings.TrimLeft(rest, " \t\v\f"))
}
