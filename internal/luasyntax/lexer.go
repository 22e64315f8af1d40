package luasyntax

import (
	"strings"
	"unicode/utf8"
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

// syntaxError is the first syntax error of a parse, seen two ways: as
// luacheck reports it (E011: the offending token's range and luacheck's
// words) and as Lua 5.1's compiler reports it (the line its lexer had
// reached and Lua's words, which Redis passes on as
// "user_script:LINE: MSG"). The lexer and parser stop at the first one, as
// both do.
type syntaxError struct {
	Pos Pos
	End int
	msg string

	luaLine int
	luaMsg  string

	// guessFor is the missing 'end' or 'until' (guessAt the offset of the
	// token found instead) for which luacheck guesses a better place.
	guessFor tokKind
	guessAt  int
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
	// strict lexes as Lua 5.1 does: no Lua 5.2+ operators ("//", "<<",
	// ">>", "::"); their bytes are single-byte tokens.
	strict bool
	// validUTF8 is 1 when src is valid UTF-8, -1 when not, 0 until known.
	validUTF8 int
	err       *syntaxError
	// nested are the "[[" found inside a level-0 long string or comment,
	// which the lenient lexer records and the strict one fails at.
	nested []NewSyntax
}

func newLexer(src string, strict bool) *lexer {
	lx := &lexer{src: src, line: 1, lineStarts: []int{0}, strict: strict}
	// Like Lua's file loader, a first line starting with '#' is skipped;
	// Redis skips only a "#!" shebang line (keeping its line break), and
	// compiles any other '#' as Lua.
	if strings.HasPrefix(src, "#!") || !strict && strings.HasPrefix(src, "#") {
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

// fail records a lexical error: luacheck's message for the range p..end,
// and Lua's, whose line is where the lexer stands (lx.line) and whose
// "near" text is near (empty for none).
func (lx *lexer) fail(p Pos, end int, msg, luaMsg, near string) token {
	if lx.err == nil {
		if near != "" {
			luaMsg += " near '" + near + "'"
		}
		lx.err = &syntaxError{Pos: p, End: end, msg: msg, luaLine: lx.line, luaMsg: luaMsg}
	}
	return token{kind: tokEOF, Pos: p, End: end, endLine: lx.line}
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
		if lx.err != nil || lx.off >= len(lx.src) {
			return token{kind: tokEOF, Pos: lx.pos(), End: lx.off, endLine: lx.line}
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
		t.endLine = lx.line
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
				lx.fail(start, lx.off-1, "unfinished long comment", "unfinished long comment", "<eof>")
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
	level, ok := lx.bracketSep()
	if !ok {
		return -1
	}
	return level
}

// bracketSep counts the '=' after the current '[' and reports whether a
// second '[' follows them.
func (lx *lexer) bracketSep() (int, bool) {
	i := lx.off + 1
	level := 0
	for i < len(lx.src) && lx.src[i] == '=' {
		level++
		i++
	}
	return level, i < len(lx.src) && lx.src[i] == '['
}

// nestedLongMsg is Lua 5.1's error, with LUA_COMPAT_LSTR 1, for a "[["
// inside a "[[...]]" string or comment.
const nestedLongMsg = "nesting of [[...]] is deprecated"

// longString consumes a long bracket of the given level starting at the
// current '[' and returns its content (a first newline is skipped, as in
// Lua). Upstream Redis and Valkey build their Lua 5.1 with
// LUA_COMPAT_LSTR 1, whose lexer refuses a "[[" inside a level-0 long
// string or comment ("[=[" and deeper levels take anything): the strict
// lexer fails there as Lua does, on the line of the inner "[[", near '[';
// the lenient one records it (File.NewSyntax) and reads the "[[" as text,
// as luacheck and Debian's build of Redis 7.0 do. ok is false for a long
// bracket without its end.
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
		case '[':
			if level == 0 && lx.off+1 < len(lx.src) && lx.src[lx.off+1] == '[' {
				p := lx.pos()
				if lx.strict {
					// Lua fails with its lexer past the second '['.
					lx.off += 2
					lx.fail(p, p.Offset+1, nestedLongMsg, nestedLongMsg, "[")
					return "", true
				}
				lx.nested = append(lx.nested, NewSyntax{Span: Span{Pos: p, End: p.Offset + 1}, What: "a [[ inside a [[...]] string or comment", Nested: true})
				b.WriteString("[[")
				lx.off += 2
				continue
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
		if !lx.strict {
			return lx.lcNumber(p)
		}
		return lx.number(p)
	}
	switch c {
	case '"', '\'':
		return lx.shortString(p, c)
	case '[':
		level, long := lx.bracketSep()
		if long {
			s, ok := lx.longString(level)
			if !ok {
				return lx.fail(p, lx.off-1, "unfinished long string", "unfinished long string", "<eof>")
			}
			lx.stringSpans = append(lx.stringSpans, [2]int{p.Offset, lx.off - 1})
			eq := strings.Repeat("=", level)
			return token{kind: tokString, Pos: p, End: lx.off - 1, text: s, luaText: "[" + eq + "[" + s + "]" + eq + "]"}
		}
		if level > 0 {
			return lx.fail(p, p.Offset, "invalid long string delimiter", "invalid long string delimiter", "["+strings.Repeat("=", level))
		}
		return tok('[', 1)
	case '.':
		if lx.dotAt(lx.off + 1) {
			if lx.dotAt(lx.off + 2) {
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
		if peek(1) == '<' && !lx.strict {
			return tok(tokShl, 2)
		}
	case '>':
		if peek(1) == '=' {
			return tok(tokGE, 2)
		}
		if peek(1) == '>' && !lx.strict {
			return tok(tokShr, 2)
		}
	case '~':
		if peek(1) == '=' {
			return tok(tokNE, 2)
		}
	case '/':
		if peek(1) == '/' && !lx.strict {
			return tok(tokIDiv, 2)
		}
	case ':':
		if peek(1) == ':' && !lx.strict {
			return tok(tokDColon, 2)
		}
	}
	// Every other byte is a token of its own, as in Lua's lexer; the
	// parser rejects the ones no rule accepts ("unexpected symbol").
	// luacheck reads a UTF-8 file by characters, so the lenient lexer
	// makes a non-ASCII character one token.
	if c >= utf8.RuneSelf && !lx.strict && lx.utf8Src() {
		_, n := utf8.DecodeRuneInString(lx.src[lx.off:])
		return tok(tokKind(c), n)
	}
	return tok(tokKind(c), 1)
}

// lcNumber reads a numeral the way luacheck's lexer does, which the
// lenient parse follows so E011 is luacheck's: decimal or "0x" hexadecimal
// digits, a fraction, an exponent ("e", or "p" after "0x") with digits,
// then LuaJIT's suffixes (i, ULL, LL). A numeral with no digits or an
// exponent without digits is malformed; what follows a well-formed one is
// the next token.
func (lx *lexer) lcNumber(p Pos) token {
	src, i := lx.src, lx.off
	at := func(j int) byte {
		if j < len(src) {
			return src[j]
		}
		return 0
	}
	isHex := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	digit, exp := isDigit, byte('e')
	hasDigits, isFloat := false, false
	if at(i) == '0' {
		i++
		if at(i) == 'x' || at(i) == 'X' {
			digit, exp = isHex, 'p'
			i++
		} else {
			hasDigits = true
		}
	}
	for digit(at(i)) {
		i, hasDigits = i+1, true
	}
	if at(i) == '.' {
		isFloat = true
		i++
		for digit(at(i)) {
			i, hasDigits = i+1, true
		}
	}
	malformed := func() token {
		lx.off = i
		return lx.fail(p, p.Offset, "malformed number", "malformed number", src[p.Offset:i])
	}
	if at(i)|0x20 == exp {
		isFloat = true
		i++
		if at(i) == '+' || at(i) == '-' {
			i++
		}
		if !isDigit(at(i)) {
			return malformed()
		}
		for isDigit(at(i)) {
			i++
		}
	}
	if !hasDigits {
		return malformed()
	}
	switch c := at(i) | 0x20; {
	case c == 'i':
		i++
	case isFloat:
	case c == 'u' && at(i+1)|0x20 == 'l' && at(i+2)|0x20 == 'l':
		i += 3
	case c == 'l' && at(i+1)|0x20 == 'l':
		i += 2
		if at(i)|0x20 == 'u' {
			i++
		}
	}
	lx.off = i
	return token{kind: tokNumber, Pos: p, End: i - 1, text: src[p.Offset:i]}
}

// utf8Src reports whether the source is valid UTF-8, deciding it once.
func (lx *lexer) utf8Src() bool {
	if lx.validUTF8 == 0 {
		lx.validUTF8 = -1
		if utf8.ValidString(lx.src) {
			lx.validUTF8 = 1
		}
	}
	return lx.validUTF8 == 1
}

// dotAt reports whether the byte at i continues a ".." or "...". Lua 5.1
// tests the next character against a set with strchr, which also matches
// a NUL byte; the strict lexer does the same.
func (lx *lexer) dotAt(i int) bool {
	return i < len(lx.src) && (lx.src[i] == '.' || lx.strict && lx.src[i] == 0)
}

// number reads a numeral the way Lua 5.1's lexer does (digits and dots, an
// optional exponent mark and sign, then any letters, digits and '_') and
// validates it as Lua 5.1 converts it, with the C library's strtod.
func (lx *lexer) number(p Pos) token {
	i := lx.off
	for i < len(lx.src) && (isDigit(lx.src[i]) || lx.src[i] == '.') {
		i++
	}
	// The exponent mark and sign are tested with strchr, which also
	// matches a NUL byte; the numeral then ends, as a C string, there.
	if i < len(lx.src) && (lx.src[i] == 'e' || lx.src[i] == 'E' || lx.src[i] == 0) {
		i++
		if i < len(lx.src) && (lx.src[i] == '+' || lx.src[i] == '-' || lx.src[i] == 0) {
			i++
		}
	}
	for i < len(lx.src) && isAlnum(lx.src[i]) {
		i++
	}
	text := lx.src[lx.off:i]
	lx.off = i
	if n := strings.IndexByte(text, 0); n >= 0 {
		text = text[:n]
	}
	if !validLua51Number(text) {
		return lx.fail(p, i-1, "malformed number near '"+text+"'", "malformed number", text)
	}
	return token{kind: tokNumber, Pos: p, End: i - 1, text: text}
}

// validLua51Number reports whether strtod, as glibc implements it, reads
// all of s: a decimal numeral with an optional exponent, or a hexadecimal
// one ("0x" digits, an optional fraction and a binary exponent "p").
func validLua51Number(s string) bool {
	isHex := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	digit, exp := isDigit, byte('e')
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, digit, exp = s[2:], isHex, 'p'
	}
	i, n := 0, 0
	for i < len(s) && digit(s[i]) {
		i, n = i+1, n+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && digit(s[i]) {
			i, n = i+1, n+1
		}
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i]|0x20) == exp {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		m := 0
		for i < len(s) && isDigit(s[i]) {
			i, m = i+1, m+1
		}
		if m == 0 {
			return false
		}
	}
	return i == len(s)
}

func (lx *lexer) shortString(p Pos, quote byte) token {
	lx.off++
	var b strings.Builder
	// near is Lua's buffer: the opening quote and what was read so far,
	// cut at a NUL as Lua's message formatting cuts it.
	near := func() string {
		s := string(quote) + b.String()
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return s
	}
	for {
		if lx.off >= len(lx.src) {
			return lx.fail(p, lx.off-1, "unfinished string", "unfinished string", "<eof>")
		}
		c := lx.src[lx.off]
		switch c {
		case quote:
			lx.off++
			lx.stringSpans = append(lx.stringSpans, [2]int{p.Offset, lx.off - 1})
			s := b.String()
			return token{kind: tokString, Pos: p, End: lx.off - 1, text: s, luaText: string(quote) + s + string(quote)}
		case '\n', '\r':
			return lx.fail(p, lx.off-1, "unfinished string", "unfinished string", near())
		case '\\':
			esc := lx.off
			lx.off++
			if lx.off >= len(lx.src) {
				return lx.fail(lx.posAt(esc), esc, "invalid escape sequence '\\'", "unfinished string", "<eof>")
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
						return lx.fail(lx.posAt(esc), lx.off-1, "invalid decimal escape sequence '"+lx.src[esc:lx.off]+"'", "escape sequence too large", near())
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
