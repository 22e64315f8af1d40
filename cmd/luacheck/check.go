package main

import (
	"github.com/redlua/redlua/lint"
)

// severity mirrors lint.Severity for the formatters.
type severity int

const (
	sevWarning severity = iota + 1
	sevError
)

// diagnostic is what the formatters print: a lint.Diagnostic.
type diagnostic struct {
	File                    string
	Line, Column, EndColumn int
	Code, Name, Message     string
	Severity                severity
}

// checkSource runs the lint package on one file and applies the filter
// rules (--only/--ignore/--enable, the -u/-r/-a/-g macros and the config's
// layers) in luacheck's order.
func checkSource(file string, src []byte, opts fileOptions) []diagnostic {
	ds := lint.Check(file, src, opts.cfg)
	out := make([]diagnostic, 0, len(ds))
	for _, d := range ds {
		if !passes(opts.rules, d) {
			continue
		}
		sev := sevWarning
		if d.Severity == lint.Error {
			sev = sevError
		}
		out = append(out, diagnostic{File: d.File, Line: d.Line, Column: d.Column, EndColumn: d.EndColumn, Code: d.Code, Name: d.Analyzer, Message: d.Message, Severity: sev})
	}
	return out
}
