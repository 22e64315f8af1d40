package luasyntax

import "strconv"

// tokKind classifies a token. Single-byte punctuation uses its own byte
// value; everything else has a named kind above 255.
type tokKind int

const (
	tokEOF tokKind = iota + 256
	tokName
	tokString
	tokNumber
	// keywords
	tokAnd
	tokBreak
	tokDo
	tokElse
	tokElseif
	tokEnd
	tokFalse
	tokFor
	tokFunction
	tokIf
	tokIn
	tokLocal
	tokNil
	tokNot
	tokOr
	tokRepeat
	tokReturn
	tokThen
	tokTrue
	tokUntil
	tokWhile
	// multi-byte operators of Lua 5.1
	tokConcat // ..
	tokDots   // ...
	tokEq     // ==
	tokGE     // >=
	tokLE     // <=
	tokNE     // ~=
	// Lua 5.2+ tokens that Redis's Lua 5.1 rejects; the lexer produces them
	// so the parser can name the construct instead of failing obscurely.
	tokIDiv   // //
	tokShl    // <<
	tokShr    // >>
	tokDColon // ::
)

var keywords = map[string]tokKind{
	"and": tokAnd, "break": tokBreak, "do": tokDo, "else": tokElse, "elseif": tokElseif,
	"end": tokEnd, "false": tokFalse, "for": tokFor, "function": tokFunction, "if": tokIf,
	"in": tokIn, "local": tokLocal, "nil": tokNil, "not": tokNot, "or": tokOr,
	"repeat": tokRepeat, "return": tokReturn, "then": tokThen, "true": tokTrue,
	"until": tokUntil, "while": tokWhile,
}

// Pos is a position in the source: 1-based line and column (in bytes, as
// luacheck counts them) and the 0-based byte offset.
type Pos struct {
	Line, Col, Offset int
}

type token struct {
	kind tokKind
	Pos  Pos
	End  int // offset of the token's last byte
	// endLine is the line of the token's last byte: the line Lua's lexer
	// stands on, and names in a message, while the token is current.
	endLine int
	text    string // raw text (names, numbers) or decoded value (strings)
	// luaText is how Lua's messages quote a string token: its delimiters
	// around the decoded value.
	luaText string
}

// luaTokenName is how Lua 5.1 names a token kind in a message
// (luaX_token2str): the keyword or operator, "<eof>", "<name>", ...; a
// control byte as "char(N)".
func luaTokenName(k tokKind) string {
	if k < 256 && (k < 32 || k == 127) {
		return "char(" + strconv.Itoa(int(k)) + ")"
	}
	return tokenName(k)
}

// tokenName is the text of a token kind: the keyword, the operator, or a
// placeholder ("<eof>", "<name>", ...) for the kinds with a value.
func tokenName(k tokKind) string {
	switch k {
	case tokEOF:
		return "<eof>"
	case tokName:
		return "<name>"
	case tokString:
		return "<string>"
	case tokNumber:
		return "<number>"
	case tokConcat:
		return ".."
	case tokDots:
		return "..."
	case tokEq:
		return "=="
	case tokGE:
		return ">="
	case tokLE:
		return "<="
	case tokNE:
		return "~="
	case tokIDiv:
		return "//"
	case tokShl:
		return "<<"
	case tokShr:
		return ">>"
	case tokDColon:
		return "::"
	}
	for w, kk := range keywords {
		if kk == k {
			return w
		}
	}
	if k < 256 {
		return string([]byte{byte(k)})
	}
	return "?"
}
