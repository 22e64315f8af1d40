package registry

import (
	"errors"
	"fmt"
)

// ErrUnknownScript is returned (wrapped) by Get and Lookup when no script has
// the requested name or version.
var ErrUnknownScript = errors.New("unknown script")

// ErrNotRecorded marks a script version that the sum file does not list yet.
// It is the one VerifySum problem that RecordSum fixes.
var ErrNotRecorded = errors.New("version not recorded in the sum file")

// Error is one problem in one script file, with its position. Parsing
// functions return every problem they find, joined with errors.Join; use
// Problems to get them back as a slice.
type Error struct {
	File   string // path of the script within its fs.FS
	Line   int    // 1-based; 0 when the problem concerns the whole file
	Column int    // 1-based; 0 when unknown
	Part   Part   // which part of the file is wrong
	Msg    string // what is wrong and how to fix it
}

// Part says which part of a script file a problem is in, so a tool that
// checks some parts itself (lint checks the body) can pick the others.
type Part int

// The parts of a script file.
const (
	// PartFile: the file as a whole (its encoding, its name).
	PartFile Part = iota + 1
	// PartShebang: the "#!lua" first line.
	PartShebang
	// PartHeader: the header's comment lines.
	PartHeader
	// PartSyntax: the Lua syntax of the body.
	PartSyntax
	// PartIndex: a literal KEYS[i] or ARGV[i] against the header.
	PartIndex
)

func (e *Error) Error() string {
	if e == nil {
		return "registry: nil Error"
	}
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Problems returns the *Error values inside err, in order: err itself, or the
// members of an errors.Join. Errors of other types are skipped.
func Problems(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if e, ok := err.(*Error); ok {
			out = append(out, e)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		walk(errors.Unwrap(err))
	}
	walk(err)
	return out
}
