package lualib

import (
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

type jsonTokenType int

const (
	tObjBegin jsonTokenType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

// Token names appear in CJSON's parse errors.
var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
	"T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END",
	"T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

type jsonToken struct {
	typ   jsonTokenType
	index int
	str   string
	num   float64
	b     bool
	err   string
}

type jsonDecoder struct {
	L     *lua.LState
	cfg   *cjsonConfig
	null  *lua.LUserData
	data  string
	pos   int
	depth int
}

func cjsonDecode(L *lua.LState, cfg *cjsonConfig, null *lua.LUserData) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	s := checkString(L, 1, "decode")
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		raise(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	d := &jsonDecoder{L: L, cfg: cfg, null: null, data: s}
	v := d.value(d.next())
	if tok := d.next(); tok.typ != tEnd {
		d.fail("the end", tok)
	}
	L.Push(v)
	return 1
}

func (d *jsonDecoder) fail(expected string, tok jsonToken) {
	found := jsonTokenNames[tok.typ]
	if tok.typ == tError {
		found = tok.err
	}
	raise(d.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

// at returns the byte at i, or 0 past the end, as the C code sees its
// NUL-terminated buffer.
func (d *jsonDecoder) at(i int) byte {
	if i < len(d.data) {
		return d.data[i]
	}
	return 0
}

func (d *jsonDecoder) next() jsonToken {
	for {
		c := d.at(d.pos)
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			d.pos++
			continue
		}
		break
	}
	tok := jsonToken{index: d.pos}
	c := d.at(d.pos)
	if t, ok := punctuation(c); ok {
		tok.typ = t
		d.pos++
		return tok
	}
	rest := d.data[d.pos:]
	switch {
	case d.pos >= len(d.data) || c == 0:
		tok.typ = tEnd
		if d.pos < len(d.data) {
			// The C parser stops at an embedded NUL as at the end.
			d.pos = len(d.data)
		}
	case c == '"':
		d.string(&tok)
	case c == '-' || isDigit(c):
		if !d.cfg.decodeInvalid && d.invalidNumber() {
			d.tokenError(&tok, "invalid number")
			return tok
		}
		d.number(&tok)
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.b = tBoolean, true
		d.pos += 4
	case strings.HasPrefix(rest, "false"):
		tok.typ = tBoolean
		d.pos += 5
	case strings.HasPrefix(rest, "null"):
		tok.typ = tNull
		d.pos += 4
	case d.cfg.decodeInvalid && d.invalidNumber():
		d.number(&tok)
	default:
		d.tokenError(&tok, "invalid token")
	}
	return tok
}

func (d *jsonDecoder) tokenError(tok *jsonToken, msg string) {
	tok.typ = tError
	tok.err = msg
	tok.index = d.pos
}

// invalidNumber reports numbers JSON forbids but strtod accepts: a leading
// '+', hexadecimal, leading zeros, inf and nan.
func (d *jsonDecoder) invalidNumber() bool {
	p := d.pos
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if d.at(p) == '0' {
		c2 := d.at(p + 1)
		return c2|0x20 == 'x' || isDigit(c2)
	} else if d.at(p) <= '9' {
		return false
	}
	rest := strings.ToLower(d.data[p:])
	return strings.HasPrefix(rest, "inf") || strings.HasPrefix(rest, "nan")
}

func (d *jsonDecoder) number(tok *jsonToken) {
	tok.typ = tNumber
	v, n := cStrtod(d.data[d.pos:])
	if n == 0 {
		d.tokenError(tok, "invalid number")
		return
	}
	tok.num = v
	d.pos += n
}

func (d *jsonDecoder) string(tok *jsonToken) {
	tok.typ = tString
	d.pos++ // opening quote
	var b strings.Builder
	for {
		c := d.at(d.pos)
		if c == '"' {
			break
		}
		if c == 0 {
			d.tokenError(tok, "unexpected end of string")
			return
		}
		if c == '\\' {
			esc := d.at(d.pos + 1)
			switch esc {
			case 'u':
				if !d.unicodeEscape(&b) {
					d.tokenError(tok, "invalid unicode escape code")
					return
				}
				continue
			case '"', '\\', '/':
				c = esc
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				d.tokenError(tok, "invalid escape code")
				return
			}
			d.pos++
		}
		b.WriteByte(c)
		d.pos++
	}
	d.pos++ // closing quote
	tok.str = b.String()
}

func (d *jsonDecoder) hex4(at int) int {
	if at+4 > len(d.data) {
		return -1
	}
	v, err := strconv.ParseUint(d.data[at:at+4], 16, 32)
	if err != nil || strings.ContainsAny(d.data[at:at+4], "+-_") {
		return -1
	}
	return int(v)
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at d.pos.
func (d *jsonDecoder) unicodeEscape(b *strings.Builder) bool {
	cp := d.hex4(d.pos + 2)
	if cp < 0 {
		return false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return false
		}
		if d.at(d.pos+6) != '\\' || d.at(d.pos+7) != 'u' {
			return false
		}
		low := d.hex4(d.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = (cp&0x3FF)<<10 | low&0x3FF + 0x10000
		n = 12
	}
	var buf [4]byte
	b.Write(buf[:utf8.EncodeRune(buf[:], rune(cp))])
	d.pos += n
	return true
}

func (d *jsonDecoder) descend() {
	d.depth++
	if d.depth > d.cfg.decodeMaxDepth {
		raise(d.L, "Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *jsonDecoder) value(tok jsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return d.null
	case tObjBegin:
		return d.object()
	case tArrBegin:
		return d.array()
	}
	d.fail("value", tok)
	return nil
}

func (d *jsonDecoder) object() lua.LValue {
	t := d.L.NewTable()
	for tok, done := d.open(tObjEnd); !done; tok, done = d.more(tObjEnd, "comma or object end") {
		if tok.typ != tString {
			d.fail("object key string", tok)
		}
		key := tok.str
		if tok = d.next(); tok.typ != tColon {
			d.fail("colon", tok)
		}
		t.RawSetString(key, d.value(d.next()))
	}
	return t
}

func (d *jsonDecoder) array() lua.LValue {
	t := d.L.NewTable()
	i := 1
	for tok, done := d.open(tArrEnd); !done; tok, done = d.more(tArrEnd, "comma or array end") {
		t.RawSetInt(i, d.value(tok))
		i++
	}
	return t
}

// open enters an object or array: it returns the first token inside, or
// done when that closes it (end).
func (d *jsonDecoder) open(end jsonTokenType) (tok jsonToken, done bool) {
	d.descend()
	if tok = d.next(); tok.typ == end {
		d.depth--
		return tok, true
	}
	return tok, false
}

// more reads what follows an item of an object or array: end closes it
// (done), a comma leads to the next item's first token, and anything else
// fails, naming what was expected.
func (d *jsonDecoder) more(end jsonTokenType, expected string) (tok jsonToken, done bool) {
	if tok = d.next(); tok.typ == end {
		d.depth--
		return tok, true
	}
	if tok.typ != tComma {
		d.fail(expected, tok)
	}
	return d.next(), false
}

func punctuation(c byte) (jsonTokenType, bool) {
	switch c {
	case '{':
		return tObjBegin, true
	case '}':
		return tObjEnd, true
	case '[':
		return tArrBegin, true
	case ']':
		return tArrEnd, true
	case ':':
		return tColon, true
	case ',':
		return tComma, true
	}
	return tUnknown, false
}
