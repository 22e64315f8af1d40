package lint

import (
	"fmt"
	"sort"
)

// Severity says whether a diagnostic is a warning (the script runs, but
// probably not as intended) or an error (Redis rejects the script, or it
// fails whenever the offending line runs).
type Severity int

// The two severities, as luacheck's W and E prefixes.
const (
	Warning Severity = iota + 1
	Error
)

// String gives "warning" or "error".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Diagnostic is one finding, positioned in the checked source.
type Diagnostic struct {
	File string
	// Line and Column are 1-based; EndColumn is the column of the last
	// byte of the offending range (inclusive), as luacheck reports it.
	Line, Column, EndColumn int
	// Code is luacheck's code with its severity letter ("W113", "E011"),
	// or one of the Redis family documented in CODES.md ("W901").
	Code string
	// Analyzer names the analyzer that reported it.
	Analyzer string
	// Symbol is the variable, global, field or command the finding is
	// about, matched by the name half of --ignore/--only patterns.
	Symbol   string
	Message  string
	Severity Severity
}

// String renders the diagnostic as luacheck's default formatter with
// --codes does: "file:line:col: (W113) message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: (%s) %s", d.File, d.Line, d.Column, d.Code, d.Message)
}

// Config selects and tunes checks. The zero value is luacheck's default
// behaviour with Redis's standard globals.
type Config struct {
	// Server is the server line whose script sandbox gives the standard
	// globals (see ServerLines: "redis74" adds os, "redis72" getfenv,
	// ...); "" (AnyServer) is what every supported server has, Redis
	// 7.0's set, so a script checked with it runs on all of them. It also
	// chooses the command table redis.call is checked against
	// (cmdtable.LookupLine).
	Server string
	// Globals are extra globals the script may set and read, ReadGlobals
	// extra globals it may only read (luacheck's globals/read_globals).
	Globals, ReadGlobals []string
	// Only keeps just the diagnostics matching one of these luacheck
	// patterns ("1", "21", "foo", "211/_.*"); Ignore drops those matching;
	// Enable takes back diagnostics that Ignore dropped. Syntax errors and
	// invalid inline options (0xx) are never filtered.
	Only, Ignore, Enable []string
	// Rules are further filter rules in luacheck's order, applied after
	// Only, Ignore and Enable: a driver that layers options (a config
	// file, its per-file overrides, the command line) lists the most
	// specific layer's rules first. See Filter.
	Rules []Rule
	// MaxLineLength is W631's limit: 0 means luacheck's default of 120, a
	// negative value turns the check off.
	MaxLineLength int
	// Analyzers to run; nil means all of Analyzers().
	Analyzers []*Analyzer
}

func sortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Code < b.Code
	})
}
