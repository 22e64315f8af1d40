package registry

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FunctionLibrary is a Registry published as one Redis 7 function library
// (FUNCTION LOAD), one function per script version. The library name and
// every function name carry a hash of all the scripts' IDs and SHA1s, so
// the libraries of two releases can be loaded side by side: Redis keeps
// function names unique across libraries, so the hash must be in them too.
type FunctionLibrary struct {
	// Name is the library name, "redlua_v" and 12 hex digits of the hash.
	Name string
	// Code is the FUNCTION LOAD payload: "#!lua name=<Name>", then one
	// redis.register_function per script.
	Code string

	funcs map[*Script]string
}

// libraryPrefix starts every library name this package renders.
const libraryPrefix = "redlua_v"

// NewFunctionLibrary renders the registry's scripts as one function
// library. Each script body becomes a function whose parameters are named
// KEYS and ARGV, so the script reads its keys and arguments as under EVAL;
// its "#!lua" flags become the function's flags and its description the
// function's description.
func NewFunctionLibrary(r *Registry) (*FunctionLibrary, error) {
	if r == nil || len(r.all) == 0 {
		return nil, errors.New("registry: NewFunctionLibrary needs a registry with scripts (load one with registry.New)")
	}
	h := sha1.New()
	for _, s := range r.all {
		fmt.Fprintf(h, "%s %s\n", s.ID(), s.SHA1)
	}
	hash := hex.EncodeToString(h.Sum(nil))[:12]
	lib := &FunctionLibrary{Name: libraryPrefix + hash, funcs: map[*Script]string{}}
	var b strings.Builder
	b.WriteString("#!lua name=" + lib.Name + "\n")
	taken := map[string]*Script{}
	for _, s := range r.all {
		name := FunctionName(s) + "_" + hash
		key := strings.ToLower(name) // Redis compares function names without case
		if other := taken[key]; other != nil {
			return nil, fmt.Errorf("registry: %s and %s both become function %s; rename one of them so the names differ in more than punctuation", other.ID(), s.ID(), name)
		}
		taken[key] = s
		lib.funcs[s] = name
		writeFunction(&b, s, name)
	}
	lib.Code = b.String()
	return lib, nil
}

// FunctionName is the function a script version becomes in a library,
// without the library's hash: its name with every character other than a
// letter, digit or '_' turned into '_', then "_v" and the version
// ("mutex.acquire" version 1 is "mutex_acquire_v1").
func FunctionName(s *Script) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(s.Name); i++ {
		c := s.Name[i]
		if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "_v" + strconv.Itoa(s.Version)
}

// Function returns the name of the function s became in the library, for
// FCALL.
func (l *FunctionLibrary) Function(s *Script) (string, error) {
	if l == nil {
		return "", errors.New("registry: Function on a nil FunctionLibrary; build one with registry.NewFunctionLibrary(reg)")
	}
	if s == nil {
		return "", errors.New("registry: Function needs a script; got nil")
	}
	name, ok := l.funcs[s]
	if !ok {
		for t, n := range l.funcs {
			if t.ID() == s.ID() && t.SHA1 == s.SHA1 {
				return n, nil
			}
		}
		return "", fmt.Errorf("registry: %s is not in library %s (render the library from the registry the script came from): %w", s.ID(), l.Name, ErrUnknownScript)
	}
	return name, nil
}

// writeFunction writes one redis.register_function call. The body keeps
// its lines (the "#!lua" line becomes a comment), so an error's line in
// the library is the script's line plus the lines before it.
func writeFunction(b *strings.Builder, s *Script, name string) {
	body := s.Source
	if strings.HasPrefix(body, "#!") {
		body = "--" + body // keeps the flags visible, and the line count
	}
	fmt.Fprintf(b, "redis.register_function{function_name=%s, callback=function(KEYS, ARGV, ...)\n", luaQuote(name))
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n") // a last line that is a comment must not swallow "end"
	}
	b.WriteString("end")
	if len(s.Flags) > 0 {
		quoted := make([]string, len(s.Flags))
		for i, f := range s.Flags {
			quoted[i] = luaQuote(f)
		}
		fmt.Fprintf(b, ", flags={%s}", strings.Join(quoted, ", "))
	}
	desc := s.ID()
	if s.Description != "" {
		desc += ": " + s.Description
	}
	fmt.Fprintf(b, ", description=%s}\n", luaQuote(desc))
}

// luaQuote writes s as a Lua 5.1 string literal.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// IsFunctionLibrary reports whether a library name is one this package
// renders (to clean up older releases' libraries with FUNCTION DELETE).
func IsFunctionLibrary(name string) bool {
	rest, ok := strings.CutPrefix(name, libraryPrefix)
	if !ok || len(rest) != 12 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}
