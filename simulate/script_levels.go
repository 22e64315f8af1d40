package simulate

import lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

// errSyntaxLevels is Lua 5.1's parser error for nesting past
// LUAI_MAXCCALLS levels (lparser.c's enterlevel), raised without a token.
const errSyntaxLevels = "chunk has too many syntax levels"

// syntaxLevelSlack is how far the token count of tooDeep may exceed the
// levels Lua's parser counts for the same text (see tooDeep).
const syntaxLevelSlack = 2

// tooDeep reports the line where src nests past Lua 5.1's parser limit.
// Lua's parser counts a level for every block (chunk) and every
// sub-expression; gopher-lua's parser has no such limit, and its compiler
// and the simulator's rewriter recurse once per level, so a deep enough
// text would exhaust the Go stack, which no recover survives. The count
// here is made on tokens: blocks (function, do, then, repeat), brackets,
// runs of unary operators and of right-associative operators ("..", "^").
// It counts at most syntaxLevelSlack levels more than Lua does, and only
// a source it counts past LuaMaxCCalls + syntaxLevelSlack is refused: so
// the simulator never refuses what Redis compiles, and it refuses, with
// Redis's text, what nests well past the limit. Within two levels of the
// limit it may compile what Redis refuses.
func tooDeep(src string) (line int, deep bool) {
	const limit = lua.LuaMaxCCalls + syntaxLevelSlack
	var (
		blocks, brackets int
		unary            int   // unary operators before the coming operand
		chain            int   // right-associative operators in a run
		outer            []int // chain of each open bracket's expression
		valueEnded       bool  // the last token ends an operand (a binary operator may follow)
	)
	line = 1
	level := func(expression bool) bool {
		n := 1 + blocks + brackets + unary + chain
		if expression {
			n++
		}
		return n > limit
	}
	operand := func() bool { // an operand token: names, numbers, strings, nil, true, false
		deep := level(true)
		unary, valueEnded = 0, true
		return deep
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			i += 2
			if n := longBracket(src, i); n >= 0 {
				end, lines := skipLong(src, i, n)
				line += lines
				i = end
			} else {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
			continue
		case c == '[' && longBracket(src, i) >= 0:
			end, lines := skipLong(src, i, longBracket(src, i))
			if operand() {
				return line, true
			}
			line += lines
			i = end
			continue
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < len(src) {
					if src[j+1] == '\n' {
						line++
					}
					j++
				}
				j++
			}
			if operand() {
				return line, true
			}
			i = j + 1
			continue
		case isNameStart(c):
			j := i
			for j < len(src) && (isNameStart(src[j]) || isDigit(src[j])) {
				j++
			}
			word := src[i:j]
			i = j
			switch word {
			case "function", "do", "then", "repeat":
				blocks++
				if level(false) {
					return line, true
				}
				unary, chain, valueEnded = 0, 0, false
			case "end", "until":
				if blocks > 0 {
					blocks--
				}
				unary, chain, valueEnded = 0, 0, word == "end"
			case "not":
				unary++
				valueEnded = false
			case "and", "or":
				chain, valueEnded = 0, false
			case "local", "if", "elseif", "else", "while", "for", "in", "return", "break":
				unary, chain, valueEnded = 0, 0, false
			default: // names, nil, true, false
				if operand() {
					return line, true
				}
			}
			continue
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && (isNameStart(src[j]) || isDigit(src[j]) || src[j] == '.' ||
				((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			if operand() {
				return line, true
			}
			i = j
			continue
		}
		i++
		switch c {
		case '(', '[', '{':
			if level(true) {
				return line, true
			}
			brackets++
			outer = append(outer, chain+unary)
			unary, chain, valueEnded = 0, 0, false
		case ')', ']', '}':
			if brackets > 0 {
				brackets--
			}
			if n := len(outer); n > 0 {
				chain, outer = outer[n-1], outer[:n-1]
			}
			unary, valueEnded = 0, true
		case '#':
			unary++
			valueEnded = false
		case '-':
			if valueEnded {
				chain = 0 // binary minus
			} else {
				unary++
			}
			valueEnded = false
		case '^':
			chain++
			valueEnded = false
		case '.':
			if i < len(src) && src[i] == '.' {
				i++
				if i < len(src) && src[i] == '.' {
					i++ // "..." is an operand
					if operand() {
						return line, true
					}
					continue
				}
				chain++ // ".."
				valueEnded = false
				continue
			}
			valueEnded = false // a field access: the name follows
		case ',', ';', '=':
			unary, chain, valueEnded = 0, 0, false
		default: // other binary operators
			chain, valueEnded = 0, false
		}
	}
	return line, false
}

// longBracket returns the level of a long bracket ("[[", "[==[") opening
// at src[i], or -1.
func longBracket(src string, i int) int {
	if i >= len(src) || src[i] != '[' {
		return -1
	}
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1
	}
	return -1
}

// skipLong skips a long string or comment of level n opening at src[i]
// and returns where it ends and how many newlines it holds.
func skipLong(src string, i, n int) (end, lines int) {
	j := i + n + 2
	for j < len(src) {
		if src[j] == '\n' {
			lines++
		}
		if src[j] == ']' && j+n+1 < len(src) && src[j+n+1] == ']' {
			k := j + 1
			for k < j+n+1 && src[k] == '=' {
				k++
			}
			if k == j+n+1 {
				return j + n + 2, lines
			}
		}
		j++
	}
	return len(src), lines
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
