package main

import (
	"bytes"
	"errors"

	"github.com/yuin/gopher-lua/parse"
)

// severity mirrors lint.Severity so the driver can switch to the lint
// package without changing the formatters.
type severity int

const (
	sevWarning severity = iota + 1
	sevError
)

// diagnostic mirrors lint.Diagnostic.
type diagnostic struct {
	File                    string
	Line, Column, EndColumn int
	Code, Name, Message     string
	Severity                severity
}

// checkSource is the checker the driver runs on each file. Until the lint
// package lands it only reports syntax errors (E011), which is the part of
// luacheck's behaviour gopher-lua's parser gives us exactly.
func checkSource(file string, src []byte) []diagnostic {
	// Like Lua's loader and luacheck, a first line starting with '#' (the
	// Redis 7 "#!lua" shebang) is skipped; the newline stays so lines match.
	if bytes.HasPrefix(src, []byte("#")) {
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			src = src[i:]
		} else {
			src = nil
		}
	}
	_, err := parse.Parse(bytes.NewReader(src), file)
	if err == nil {
		return nil
	}
	d := diagnostic{File: file, Line: 1, Column: 1, EndColumn: 1, Code: "E011", Name: "syntax-error", Severity: sevError, Message: err.Error()}
	var pe *parse.Error
	if errors.As(err, &pe) {
		if pe.Pos.Line > 0 {
			d.Line, d.Column, d.EndColumn = pe.Pos.Line, max(pe.Pos.Column, 1), max(pe.Pos.Column, 1)
		}
		d.Message = pe.Message
		if pe.Token != "" {
			d.Message += " near '" + pe.Token + "'"
		}
	}
	return []diagnostic{d}
}
