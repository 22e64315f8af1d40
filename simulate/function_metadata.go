package simulate

import (
	"fmt"
	"strings"
)

// parseLibraryMetadata is functionExtractLibMetaData: the "#!<engine>
// name=<lib>" first line. It returns the library name and the body Lua
// compiles (the first line blanked, its newline kept so lines count from
// the "#!" line), or Redis's error text.
func parseLibraryMetadata(code string) (name, body, errText string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", errLibraryNoMetadata
	}
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return "", "", errLibraryBadMetadata
	}
	parts, ok := splitArgs(code[:nl])
	if !ok || len(parts) == 0 {
		return "", "", errLibraryBadMetadata
	}
	engine, named := strings.TrimPrefix(parts[0], "#!"), false
	for _, p := range parts[1:] {
		if len(p) < 5 || !strings.EqualFold(p[:5], "name=") {
			return "", "", errLibraryMetadataValue + p
		}
		if named {
			return "", "", errLibraryNameTwice
		}
		name, named = p[5:], true
	}
	if !named {
		return "", "", errLibraryNoName
	}
	if !strings.EqualFold(engine, "lua") {
		return "", "", fmt.Sprintf(errEngineNotFound, engine)
	}
	if !validFunctionName(name) {
		return "", "", errFunctionName
	}
	return name, code[nl:], ""
}

// validFunctionName is functionsVerifyName: letters, digits and '_', at
// least one.
func validFunctionName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// splitArgs splits a line as sdssplitargs does: words separated by
// spaces; a double-quoted part takes \n, \r, \t, \b, \a and \xHH escapes
// (any other escaped character stands for itself), a single-quoted part
// only \'; a closing quote must be followed by a space or the end, and an
// unclosed quote fails the whole line.
func splitArgs(line string) ([]string, bool) {
	var out []string
	for i := 0; ; {
		for i < len(line) && isCSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return out, true
		}
		word, next, ok := readArg(line, i)
		if !ok {
			return nil, false
		}
		out = append(out, word)
		i = next
	}
}

// readArg reads one word of splitArgs starting at line[i].
func readArg(line string, i int) (string, int, bool) {
	var b strings.Builder
	var quote byte // 0 outside quotes, else '"' or '\''
	for ; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == 0 && isCSpace(c):
			return b.String(), i, true
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case c == quote:
			if i+1 < len(line) && !isCSpace(line[i+1]) {
				return "", 0, false
			}
			return b.String(), i + 1, true
		case quote == '"' && c == '\\' && i+1 < len(line):
			i++
			if line[i] == 'x' && i+2 < len(line) && isHex(line[i+1]) && isHex(line[i+2]) {
				b.WriteByte(hexVal(line[i+1])<<4 | hexVal(line[i+2]))
				i += 2
				continue
			}
			b.WriteByte(unescape(line[i]))
		case quote == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			i++
			b.WriteByte('\'')
		default:
			b.WriteByte(c)
		}
	}
	if quote != 0 {
		return "", 0, false
	}
	return b.String(), i, true
}

// unescape is the character a backslash escape inside double quotes stands for.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
