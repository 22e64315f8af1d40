package registry

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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

// HeaderField is one "-- field: value" line of a script's header.
type HeaderField struct {
	Name  string // "name", "version", "description", "keys", "args" or "returns"
	Value string // the value, trimmed
	Line  int    // 1-based line in the file
	Text  string // the whole line as written, without its line break
}

var (
	fieldLine = regexp.MustCompile(`^--\s*([a-z]+):(.*)$`)
	// looseField matches what a writer meant as a field: any case, spaces
	// before the colon. A header made only of these is malformed, not missing.
	looseField = regexp.MustCompile(`^\s*--\s*([A-Za-z]+)\s*:`)
	nameRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	identRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

var knownFields = map[string]bool{
	fieldName: true, fieldVersion: true, fieldDescription: true,
	fieldKeys: true, fieldArgs: true, fieldReturns: true,
}

var requiredFields = []string{fieldName, fieldVersion, fieldDescription, fieldKeys, fieldArgs}

var fieldExample = map[string]string{
	fieldName:        "mutex.acquire",
	fieldVersion:     "1",
	fieldDescription: "Acquire the lock if it is free.",
	fieldKeys:        "lock (or nothing after the colon when the script takes no keys)",
	fieldArgs:        "owner ttl_ms (or nothing after the colon when the script takes no args)",
}

// header reads the comment block that starts at lines[first] into s and
// reports whether the file has a header: a name field in that block, or a
// header-like block a little further down (then reported as misplaced).
func (p *parser) header(s *Script, lines []string, first int) bool {
	seen := map[string]int{}
	misspelt := map[string]bool{}
	for i := first; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		if !strings.HasPrefix(line, "--") || strings.HasPrefix(line, "--[[") {
			break
		}
		m := fieldLine.FindStringSubmatch(line)
		if m == nil || !knownFields[m[1]] {
			if lm := looseField.FindStringSubmatch(line); lm != nil && knownFields[strings.ToLower(lm[1])] {
				want := strings.ToLower(lm[1])
				misspelt[want] = true
				p.errorf(i+1, PartHeader, "the header field %q is written %q; write it \"-- %s: ...\" (lower case, colon right after the name)", want, strings.TrimSpace(line[:strings.Index(line, ":")+1]), want)
			}
			continue // free text inside the header
		}
		field, value := m[1], strings.TrimSpace(m[2])
		if prev, dup := seen[field]; dup {
			p.errorf(i+1, PartHeader, "the header field %q is given twice (first on line %d); keep one", field, prev)
			continue
		}
		seen[field] = i + 1
		s.Header = append(s.Header, HeaderField{Name: field, Value: value, Line: i + 1, Text: line})
	}
	if len(seen) == 0 && len(misspelt) == 0 {
		return p.misplacedHeader(lines, first)
	}
	for _, f := range requiredFields {
		if _, ok := seen[f]; !ok && !misspelt[f] {
			p.errorf(first+1, PartHeader, "the header has no %q field; add a comment line \"-- %s: %s\" to the comment block at the top of the file", f, f, fieldExample[f])
		}
	}
	p.fields(s)
	// A leading comment that happens to hold "keys:" is not a header; a
	// name field, even misspelt, makes one.
	_, named := seen[fieldName]
	return named || misspelt[fieldName]
}

// misplacedHeader looks for header lines a little further down (after a
// blank line or a line of code) and reports them once: the registry read
// no header, but the writer meant one.
func (p *parser) misplacedHeader(lines []string, first int) bool {
	for i := first; i < len(lines) && i < first+20; i++ {
		if lm := looseField.FindStringSubmatch(lines[i]); lm != nil && strings.ToLower(lm[1]) == fieldName {
			p.errorf(i+1, PartHeader, "a header was found on line %d but it is malformed: the registry reads the header only from the comment lines at the very top of the file (after an optional #!lua line), with nothing before them, not even a blank line; move it up", i+1)
			return true
		}
	}
	return false
}

// fields checks and stores the values of the fields read.
func (p *parser) fields(s *Script) {
	if f, ok := s.Field(fieldName); ok {
		s.HeaderLine = f.Line
		s.Name = f.Value
		if !nameRe.MatchString(s.Name) {
			p.errorf(f.Line, PartHeader, "script name %q is not valid; use letters, digits, '.', '_' and '-', such as \"mutex.acquire\"", s.Name)
		}
	}
	if f, ok := s.Field(fieldVersion); ok {
		v, err := strconv.Atoi(f.Value)
		if err != nil || v < 1 {
			p.errorf(f.Line, PartHeader, "version %q is not a positive whole number; write \"-- version: 1\" and raise it for each released change", f.Value)
		}
		s.Version = v
	}
	if f, ok := s.Field(fieldDescription); ok {
		s.Description = f.Value
		if s.Description == "" {
			p.errorf(f.Line, PartHeader, "the description is empty; say in one line what the script does")
		}
	}
	if f, ok := s.Field(fieldKeys); ok {
		s.Keys = p.names(f.Line, "keys", f.Value, &s.Variadic, VariadicKeys)
	}
	if f, ok := s.Field(fieldArgs); ok {
		s.Args = p.names(f.Line, "args", f.Value, &s.Variadic, VariadicArgs)
	}
	if f, ok := s.Field(fieldReturns); ok {
		s.Returns = f.Value
	}
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
				p.errorf(line, PartHeader, "only the last of the %s may repeat; move %q to the end or drop its \"...\"", field, w)
			}
			*variadic |= bit
		}
		if !identRe.MatchString(name) {
			p.errorf(line, PartHeader, "%s name %q is not an identifier; use letters, digits and '_', such as lock_key", field, name)
			continue
		}
		if seen[name] {
			p.errorf(line, PartHeader, "%s name %q is declared twice; give each a distinct name", field, name)
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// fileNameProblem checks a file's base name against the header: a script
// lives in "name.vVERSION.lua", so a directory listing shows what it holds.
func fileNameProblem(s *Script) *Error {
	base := s.File[strings.LastIndex(s.File, "/")+1:]
	want := fmt.Sprintf("%s.v%d.lua", s.Name, s.Version)
	if base == want {
		return nil
	}
	return &Error{File: s.File, Line: s.HeaderLine, Part: PartFile,
		Msg: fmt.Sprintf("the file name %s does not match the header's %s; rename the file %s", base, s.ID(), want)}
}
