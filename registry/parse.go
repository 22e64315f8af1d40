package registry

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseScript parses one script file: its optional Redis 7 shebang, its
// header and its Lua body. file is used in error messages and kept in
// Script.File. Every problem found is returned, joined with errors.Join;
// each is an *Error with file:line and a hint on how to fix it.
func ParseScript(file string, src []byte) (*Script, error) {
	p := &parser{file: file}
	s, found := p.parseHeader(src)
	if s != nil && !found && !p.reported(PartHeader) {
		p.errorf(1, PartHeader, "the file has no header (no %q field, nor any other); start it with comment lines such as \"-- name: %s\", \"-- version: 1\", \"-- description: ...\", \"-- keys: ...\" and \"-- args: ...\"", fieldName, fieldExample[fieldName])
	}
	if s != nil && len(p.errs) == 0 {
		// The body is checked only once the header is sound: index checks
		// need the declared counts.
		p.body(s)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return s, nil
}

// ParseHeader parses the shebang and the header of a script file without
// judging its body, for tools that check the body themselves (lint). found
// reports whether the file has a header at all (a name field, well-formed
// or not); a plain Lua file has none, and then only the problems of its
// shebang (Part PartShebang) concern it. Problems come back as in
// ParseScript; s is what could be read even then (its Header lines, its
// Flags), but only a nil err makes it a valid script.
func ParseHeader(file string, src []byte) (s *Script, found bool, err error) {
	p := &parser{file: file}
	s, found = p.parseHeader(src)
	if len(p.errs) > 0 {
		return s, found, errors.Join(p.errs...)
	}
	return s, found, nil
}

// parseHeader reads the encoding, the shebang and the header; s is nil
// when the file cannot be read at all (not UTF-8).
func (p *parser) parseHeader(src []byte) (s *Script, found bool) {
	if !utf8.Valid(src) {
		p.errorf(0, PartFile, "the file is not valid UTF-8; save it as UTF-8")
		return nil, false
	}
	s = &Script{Source: string(src), File: p.file}
	lines := strings.Split(s.Source, "\n")
	first := 0
	if strings.HasPrefix(s.Source, "#!") {
		flags, problems := ParseShebang(lines[0])
		for _, e := range problems {
			p.errorf(1, PartShebang, "%s", e.Error())
		}
		s.Flags = flags
		first = 1
	}
	found = p.header(s, lines, first)
	s.finish()
	return s, found
}

type parser struct {
	file string
	errs []error
}

func (p *parser) reported(part Part) bool {
	for _, e := range p.errs {
		if e.(*Error).Part == part {
			return true
		}
	}
	return false
}

func (p *parser) errorf(line int, part Part, format string, a ...any) *Error {
	e := &Error{File: p.file, Line: line, Part: part, Msg: fmt.Sprintf(format, a...)}
	p.errs = append(p.errs, e)
	return e
}
