package luasyntax

import (
	"strconv"
	"strings"
)

// Comment is one Lua comment; Text excludes the leading "--" and, for long
// comments, the brackets.
type Comment struct {
	Pos  Pos
	End  int // offset of the last byte
	Text string
	// Inline is true when code precedes the comment on its line, so an
	// inline option in it applies to that line only.
	Inline bool
}

// syntaxError is a position and message for E011; the lexer and parser
// stop at the first one, as Lua does.
type syntaxError struct {
	Pos Pos
	End int
	msg string
}

type lexer struct {
	src        string
	off        int
	line       int
	lineStart  int
	lineStarts []int
	comments   []Comment
	// spans of string and comment tokens, for the whitespace checks
	stringSpans, commentSpans [][2]int
	lastCodeLine              int
	err                       *syntaxError
}

func newLexer(src string) *lexer {
	lx := &lexer{src: src, line: 1, lineStarts: []int{0}}
	// Like Lua's loader (and the Redis 7 "#!lua" shebang), a first line
	// starting with '#' is skipped.
	if strings.HasPrefix(src, "#") {
		for lx.off < len(src) && src[lx.off] != '\n' && src[lx.off] != '\r' {
			lx.off++
		}
	}
	return lx
}

func (lx *lexer) pos() Pos { return Pos{Line: lx.line, Col: lx.off - lx.lineStart + 1, Offset: lx.off} }

// posAt converts an offset to a position.
func (lx *lexer) posAt(off int) Pos {
	lo, hi := 0, len(lx.lineStarts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if lx.lineStarts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return Pos{Line: lo + 1, Col: off - lx.lineStarts[lo] + 1, Offset: off}
}

func (lx *lexer) fail(p Pos, end int, msg string) token {
	if lx.err == nil {
		lx.err = &syntaxError{Pos: p, End: end, msg: msg}
	}
	return token{kind: tokEOF, Pos: p, End: end}
}

// newline consumes one line break (\n, \r, \r\n or \n\r, as Lua counts).
func (lx *lexer) newline() {
	c := lx.src[lx.off]
	lx.off++
	if lx.off < len(lx.src) && (lx.src[lx.off] == '\n' || lx.src[lx.off] == '\r') && lx.src[lx.off] != c {
		lx.off++
	}
	lx.line++
	lx.lineStart = lx.off
	lx.lineStarts = append(lx.lineStarts, lx.off)
}

// IsNameStart reports whether c may start a Lua name.
func IsNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool     { return IsNameStart(c) || isDigit(c) }

// next returns the next token, collecting comments on the way.
func (lx *lexer) next() token {
	for {
		if lx.err != nil {
			return token{kind: tokEOF, Pos: lx.pos(), End: lx.off}
		}
		if lx.off >= len(lx.src) {
			return token{kind: tokEOF, Pos: lx.pos(), End: lx.off}
		}
		c := lx.src[lx.off]
		switch c {
		case '\n', '\r':
			lx.newline()
			continue
		case ' ', '\t', '\f', '\v':
			lx.off++
			continue
		case '-':
			if lx.off+1 < len(lx.src) && lx.src[lx.off+1] == '-' {
				lx.comment()
				continue
			}
		}
		t := lx.scan()
		lx.lastCodeLine = lx.line
		return t
	}
}

func (lx *lexer) comment() {
	start := lx.pos()
	inline := lx.lastCodeLine == lx.line
	lx.off += 2
	if lx.off < len(lx.src) && lx.src[lx.off] == '[' {
		if level := lx.longBracketLevel(); level >= 0 {
			text, ok := lx.longString(level)
			if !ok {
				lx.fail(start, lx.off-1, "unfinished long comment")
				return
			}
			lx.comments = append(lx.comments, Comment{Pos: start, End: lx.off - 1, Text: text, Inline: inline})
			lx.commentSpans = append(lx.commentSpans, [2]int{start.Offset, lx.off - 1})
			return
		}
	}
	from := lx.off
	for lx.off < len(lx.src) && lx.src[lx.off] != '\n' && lx.src[lx.off] != '\r' {
		lx.off++
	}
	lx.comments = append(lx.comments, Comment{Pos: start, End: lx.off - 1, Text: lx.src[from:lx.off], Inline: inline})
	lx.commentSpans = append(lx.commentSpans, [2]int{start.Offset, lx.off - 1})
}

// longBracketLevel reports the level of a long bracket opening at the
// current '[' ("[[" is 0, "[==[" is 2), or -1 when it is not one; it does
// not consume anything.
func (lx *lexer) longBracketLevel() int {
	i := lx.off + 1
	level := 0
	for i < len(lx.src) && lx.src[i] == '=' {
		level++
		i++
	}
	if i < len(lx.src) && lx.src[i] == '[' {
		return level
	}
	return -1
}

// longString consumes a long bracket of the given level starting at the
// current '[' and returns its content (a first newline is skipped, as in
// Lua).
func (lx *lexer) longString(level int) (string, bool) {
	lx.off += level + 2
	if lx.off < len(lx.src) && (lx.src[lx.off] == '\n' || lx.src[lx.off] == '\r') {
		lx.newline()
	}
	var b strings.Builder
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch c {
		case ']':
			j := lx.off + 1
			n := 0
			for j < len(lx.src) && lx.src[j] == '=' {
				n++
				j++
			}
			if n == level && j < len(lx.src) && lx.src[j] == ']' {
				lx.off = j + 1
				return b.String(), true
			}
			b.WriteByte(c)
			lx.off++
		case '\n', '\r':
			b.WriteByte('\n')
			lx.newline()
		default:
			b.WriteByte(c)
			lx.off++
		}
	}
	return "", false
}

func (lx *lexer) scan() token {
	p := lx.pos()
	c := lx.src[lx.off]
	tok := func(k tokKind, n int) token {
		lx.off += n
		return token{kind: k, Pos: p, End: lx.off - 1}
	}
	peek := func(i int) byte {
		if lx.off+i < len(lx.src) {
			return lx.src[lx.off+i]
		}
		return 0
	}
	switch {
	case IsNameStart(c):
		i := lx.off
		for i < len(lx.src) && isAlnum(lx.src[i]) {
			i++
		}
		word := lx.src[lx.off:i]
		k, ok := keywords[word]
		if !ok {
			k = tokName
		}
		lx.off = i
		return token{kind: k, Pos: p, End: i - 1, text: word}
	case isDigit(c) || c == '.' && isDigit(peek(1)):
		return lx.number(p)
	}
	switch c {
	case '"', '\'':
		return lx.shortString(p, c)
	case '[':
		if level := lx.longBracketLevel(); level >= 0 {
			s, ok := lx.longString(level)
			if !ok {
				return lx.fail(p, lx.off-1, "unfinished long string")
			}
			lx.stringSpans = append(lx.stringSpans, [2]int{p.Offset, lx.off - 1})
			return token{kind: tokString, Pos: p, End: lx.off - 1, text: s}
		}
		return tok('[', 1)
	case '.':
		if peek(1) == '.' {
			if peek(2) == '.' {
				return tok(tokDots, 3)
			}
			return tok(tokConcat, 2)
		}
		return tok('.', 1)
	case '=':
		if peek(1) == '=' {
			return tok(tokEq, 2)
		}
	case '<':
		if peek(1) == '=' {
			return tok(tokLE, 2)
		}
		if peek(1) == '<' {
			return tok(tokShl, 2)
		}
	case '>':
		if peek(1) == '=' {
			return tok(tokGE, 2)
		}
		if peek(1) == '>' {
			return tok(tokShr, 2)
		}
	case '~':
		if peek(1) == '=' {
			return tok(tokNE, 2)
		}
	case '/':
		if peek(1) == '/' {
			return tok(tokIDiv, 2)
		}
	case ':':
		if peek(1) == ':' {
			return tok(tokDColon, 2)
		}
	}
	if strings.IndexByte("+-*/%^#()[]{};:,=<>~&|", c) >= 0 {
		return tok(tokKind(c), 1)
	}
	return lx.fail(p, lx.off, "unexpected symbol near '"+string(c)+"'")
}

// number reads a numeral the way Lua 5.1's lexer does (digits, dots, an
// exponent sign, then any alphanumerics) and validates it as Lua 5.1
// converts it: a decimal float, or a hexadecimal integer.
func (lx *lexer) number(p Pos) token {
	i := lx.off
	for i < len(lx.src) && (isDigit(lx.src[i]) || lx.src[i] == '.') {
		i++
	}
	if i < len(lx.src) && (lx.src[i] == 'e' || lx.src[i] == 'E') {
		i++
		if i < len(lx.src) && (lx.src[i] == '+' || lx.src[i] == '-') {
			i++
		}
	}
	for i < len(lx.src) && (isAlnum(lx.src[i]) || lx.src[i] == '.') {
		i++
	}
	text := lx.src[lx.off:i]
	lx.off = i
	if !validLua51Number(text) {
		return lx.fail(p, i-1, "malformed number near '"+text+"'")
	}
	return token{kind: tokNumber, Pos: p, End: i - 1, text: text}
}

func validLua51Number(s string) bool {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		if len(s) == 2 {
			return false
		}
		for _, c := range []byte(s[2:]) {
			if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	for _, c := range []byte(s) {
		if !(isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return true
		}
		return false
	}
	return true
}

func (lx *lexer) shortString(p Pos, quote byte) token {
	lx.off++
	var b strings.Builder
	for {
		if lx.off >= len(lx.src) {
			return lx.fail(p, lx.off-1, "unfinished string")
		}
		c := lx.src[lx.off]
		switch c {
		case quote:
			lx.off++
			lx.stringSpans = append(lx.stringSpans, [2]int{p.Offset, lx.off - 1})
			return token{kind: tokString, Pos: p, End: lx.off - 1, text: b.String()}
		case '\n', '\r':
			return lx.fail(p, lx.off-1, "unfinished string")
		case '\\':
			lx.off++
			if lx.off >= len(lx.src) {
				return lx.fail(p, lx.off-1, "unfinished string")
			}
			e := lx.src[lx.off]
			switch e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'v':
				b.WriteByte('\v')
			case '\n', '\r':
				b.WriteByte('\n')
				lx.newline()
				continue
			default:
				if isDigit(e) {
					n := 0
					for k := 0; k < 3 && lx.off < len(lx.src) && isDigit(lx.src[lx.off]); k++ {
						n = n*10 + int(lx.src[lx.off]-'0')
						lx.off++
					}
					if n > 255 {
						return lx.fail(p, lx.off-1, "escape sequence too large")
					}
					b.WriteByte(byte(n))
					continue
				}
				// Lua 5.1 keeps the character of an unknown escape.
				b.WriteByte(e)
			}
			lx.off++
		default:
			b.WriteByte(c)
			lx.off++
		}
	}
}
