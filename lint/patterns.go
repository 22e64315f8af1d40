package lint

import (
	"strings"

	"github.com/yuin/gopher-lua/pm"
)

// MatchPattern reports whether a luacheck filter pattern matches a warning
// code (three digits, no letter) and symbol. As in luacheck: "CODE/NAME"
// matches both halves; a pattern with a letter or '_' and no slash is a
// name pattern; otherwise it is a code pattern. Patterns are Lua patterns;
// a code pattern is anchored at the start ("21" matches 211 and 212), a
// name pattern at both ends, unless the pattern anchors itself.
func MatchPattern(pattern, code, symbol string) bool {
	var codePat, namePat string
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		codePat, namePat = pattern[:i], pattern[i+1:]
	} else if strings.ContainsAny(pattern, "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		namePat = pattern
	} else {
		codePat = pattern
	}
	if codePat != "" && !luaMatch(anchor(codePat, true), code) {
		return false
	}
	if namePat != "" && (symbol == "" || !luaMatch(anchor(namePat, false), symbol)) {
		return false
	}
	return codePat != "" || namePat != ""
}

func anchor(p string, onlyStart bool) string {
	if strings.HasPrefix(p, "^") || strings.HasSuffix(p, "$") {
		return p
	}
	if onlyStart {
		return "^" + p
	}
	return "^" + p + "$"
}

// luaMatch runs a Lua pattern; a malformed pattern matches nothing.
func luaMatch(pattern, s string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m, err := pm.Find(pattern, []byte(s), 0, 1)
	return err == nil && len(m) > 0
}

// ValidPattern reports whether a filter pattern is a well-formed Lua
// pattern, so a driver can reject a typo instead of matching nothing.
func ValidPattern(pattern string) error {
	for _, part := range strings.SplitN(pattern, "/", 2) {
		if part == "" {
			continue
		}
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = errBadPattern(pattern)
				}
			}()
			_, err = pm.Find(part, nil, 0, 1)
		}()
		if err != nil {
			return errBadPattern(pattern)
		}
	}
	return nil
}

type errBadPattern string

func (e errBadPattern) Error() string {
	return "invalid pattern " + string(e) + ": use luacheck's CODE, NAME or CODE/NAME, where each part is a Lua pattern such as 21 or _.*"
}
