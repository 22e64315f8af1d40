package simulate

import (
	"fmt"
	"strings"
)

// parseLibraryMetadata is functionExtractLibMetaData: the "#!<engine>
// name=<lib>" first line. It returns the library name and the body Lua
// compiles (the first line blanked, its newline kept so lines count from
// the shebang), or Redis's error text.
func parseLibraryMetadata(code string) (name, body, errText string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", errLibraryNoMetadata
	}
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return "", "", errLibraryBadMetadata
	}
	parts, ok := splitArgs(code[2:nl])
	if !ok || len(parts) == 0 {
		return "", "", errLibraryBadMetadata
	}
	engine, named := parts[0], false
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
// spaces, "double quoted" (with \n, \t, \xHH... escapes) and 'single
// quoted' words; a closing quote must be followed by a space or the end.
func splitArgs(line string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(line) && isCSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return out, true
		}
		var b strings.Builder
		inDQ, inSQ := false, false
		for done := false; !done; {
			switch {
			case inDQ:
				if i == len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line):
					i++
					b.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'a': '\a'}[line[i]] | onlyIfPlain(line[i]))
				case c == '"':
					if i+1 < len(line) && !isCSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					b.WriteByte(c)
				}
			case inSQ:
				if i == len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					b.WriteByte('\'')
				case c == '\'':
					if i+1 < len(line) && !isCSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					b.WriteByte(c)
				}
			default:
				if i == len(line) {
					done = true
					continue
				}
				switch c := line[i]; {
				case isCSpace(c):
					done = true
					continue
				case c == '"':
					inDQ = true
				case c == '\'':
					inSQ = true
				default:
					b.WriteByte(c)
				}
			}
			if !done || inDQ || inSQ {
				i++
			}
		}
		out = append(out, b.String())
	}
}

// onlyIfPlain keeps an escaped character that is not one of the named
// escapes (\" stays ", \\ stays \).
func onlyIfPlain(c byte) byte {
	switch c {
	case 'n', 'r', 't', 'b', 'a':
		return 0
	}
	return c
}
