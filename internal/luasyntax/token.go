package luasyntax

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
	End  int    // offset of the token's last byte
	text string // raw text (names, numbers) or decoded value (strings)
}

// tokenText is how an error message quotes a token, as Lua does: the
// source text for names and numbers, the raw lexeme otherwise.
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
		return string(rune(k))
	}
	return "?"
}
