package registry

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Header fields. A header is the first run of "--" comment lines of a file
// (after the optional "#!lua" line); fields are lines "-- field: value".
const (
	fieldName        = "name"
	fieldVersion     = "version"
	fieldDescription = "description"
	fieldKeys        = "keys"
	fieldArgs        = "args"
	fieldReturns     = "returns"
)

var (
	fieldLine = regexp.MustCompile(`^--\s*([a-z]+):(.*)$`)
	nameRe    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	identRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

var knownFields = map[string]bool{
	fieldName: true, fieldVersion: true, fieldDescription: true,
	fieldKeys: true, fieldArgs: true, fieldReturns: true,
}

// ParseScript parses one script file: its optional Redis 7 shebang, its
// header and its Lua body. file is used in error messages and kept in
// Script.File. Every problem found is returned, joined with errors.Join;
// each is an *Error with file:line and a hint on how to fix it.
func ParseScript(file string, src []byte) (*Script, error) {
	p := &parser{file: file}
	if !utf8.Valid(src) {
		return nil, p.errorf(0, "the file is not valid UTF-8; save it as UTF-8")
	}
	s := &Script{Source: string(src), File: file}
	lines := strings.Split(s.Source, "\n")
	first := 0
	if strings.HasPrefix(s.Source, "#!") {
		s.Flags = p.shebang(strings.TrimRight(lines[0], "\r"))
		first = 1
	}
	p.header(s, lines, first)
	s.finish()
	if len(p.errs) == 0 {
		// The body is checked only once the header is sound: index checks
		// need the declared counts.
		p.body(s)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return s, nil
}

type parser struct {
	file string
	errs []error
}

func (p *parser) errorf(line int, format string, a ...any) *Error {
	e := &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, a...)}
	p.errs = append(p.errs, e)
	return e
}

// shebang parses Redis 7's "#!lua [flags=a,b]" line. Redis accepts only the
// lua engine and the flags option in scripts run by EVAL.
func (p *parser) shebang(line string) []string {
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 || fields[0] != "lua" {
		p.errorf(1, "the first line %q names no engine Redis knows; write \"#!lua\" or \"#!lua flags=no-writes\"", line)
		return nil
	}
	var flags []string
	seenFlags := false
	for _, opt := range fields[1:] {
		value, ok := strings.CutPrefix(opt, "flags=")
		if !ok {
			p.errorf(1, "unknown shebang option %q; the only option scripts take is flags=..., e.g. \"#!lua flags=no-writes\"", opt)
			continue
		}
		if seenFlags {
			p.errorf(1, "flags= appears twice in the shebang; list all flags once, separated by commas")
		}
		seenFlags = true
		if value == "" {
			continue
		}
		for _, f := range strings.Split(value, ",") {
			if !isKnownFlag(f) {
				p.errorf(1, "unknown script flag %q; Redis 7 knows %s", f, strings.Join(KnownFlags, ", "))
				continue
			}
			flags = append(flags, f)
		}
	}
	return flags
}

func isKnownFlag(f string) bool {
	for _, k := range KnownFlags {
		if f == k {
			return true
		}
	}
	return false
}

// header reads the comment block that starts at lines[first].
func (p *parser) header(s *Script, lines []string, first int) {
	seen := map[string]int{}
	values := map[string]string{}
	headerStart := first + 1
	for i := first; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		if !strings.HasPrefix(line, "--") || strings.HasPrefix(line, "--[[") {
			break
		}
		m := fieldLine.FindStringSubmatch(line)
		if m == nil || !knownFields[m[1]] {
			continue // free text inside the header
		}
		field, value := m[1], strings.TrimSpace(m[2])
		if prev, dup := seen[field]; dup {
			p.errorf(i+1, "the header field %q is given twice (first on line %d); keep one", field, prev)
			continue
		}
		seen[field] = i + 1
		values[field] = value
	}
	for _, f := range []string{fieldName, fieldVersion, fieldDescription, fieldKeys, fieldArgs} {
		if _, ok := seen[f]; !ok {
			p.errorf(headerStart, "the header has no %q field; add a comment line \"-- %s: %s\" to the comment block at the top of the file", f, f, fieldExample[f])
		}
	}
	if line, ok := seen[fieldName]; ok {
		s.HeaderLine = line
		s.Name = values[fieldName]
		if !nameRe.MatchString(s.Name) {
			p.errorf(line, "script name %q is not valid; use letters, digits, '.', '_' and '-', such as \"mutex.acquire\"", s.Name)
		}
	}
	if line, ok := seen[fieldVersion]; ok {
		v, err := strconv.Atoi(values[fieldVersion])
		if err != nil || v < 1 {
			p.errorf(line, "version %q is not a positive whole number; write \"-- version: 1\" and raise it for each released change", values[fieldVersion])
		}
		s.Version = v
	}
	if line, ok := seen[fieldDescription]; ok {
		s.Description = values[fieldDescription]
		if s.Description == "" {
			p.errorf(line, "the description is empty; say in one line what the script does")
		}
	}
	if line, ok := seen[fieldKeys]; ok {
		s.Keys = p.names(line, "keys", values[fieldKeys], &s.Variadic, VariadicKeys)
	}
	if line, ok := seen[fieldArgs]; ok {
		s.Args = p.names(line, "args", values[fieldArgs], &s.Variadic, VariadicArgs)
	}
	s.Returns = values[fieldReturns]
}

var fieldExample = map[string]string{
	fieldName:        "mutex.acquire",
	fieldVersion:     "1",
	fieldDescription: "Acquire the lock if it is free.",
	fieldKeys:        "lock (or nothing after the colon when the script takes no keys)",
	fieldArgs:        "owner ttl_ms (or nothing after the colon when the script takes no args)",
}

// names parses a space-separated list of KEYS or ARGV names. The last one may
// end in "..." to say it repeats.
func (p *parser) names(line int, field, value string, variadic *Variadic, bit Variadic) []string {
	words := strings.Fields(value)
	seen := map[string]bool{}
	out := make([]string, 0, len(words))
	for i, w := range words {
		name := w
		if strings.HasSuffix(w, "...") {
			name = strings.TrimSuffix(w, "...")
			if i != len(words)-1 {
				p.errorf(line, "only the last of the %s may repeat; move %q to the end or drop its \"...\"", field, w)
			}
			*variadic |= bit
		}
		if !identRe.MatchString(name) {
			p.errorf(line, "%s name %q is not an identifier; use letters, digits and '_', such as lock_key", field, name)
			continue
		}
		if seen[name] {
			p.errorf(line, "%s name %q is declared twice; give each a distinct name", field, name)
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}
