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

// checkSource runs the lint package on one file.
func checkSource(file string, src []byte, cfg *lint.Config) []diagnostic {
	ds := lint.Check(file, src, cfg)
	out := make([]diagnostic, len(ds))
	for i, d := range ds {
		sev := sevWarning
		if d.Severity == lint.Error {
			sev = sevError
		}
		out[i] = diagnostic{File: d.File, Line: d.Line, Column: d.Column, EndColumn: d.EndColumn, Code: d.Code, Name: d.Analyzer, Message: d.Message, Severity: sev}
	}
	return out
}
