package lint

import (
	"fmt"
	"strings"

	"github.com/redlua/redlua/registry"
)

// An Analyzer is one check, in the style of golang.org/x/tools/go/analysis:
// a name, a doc, the codes it can report, and a Run over a Pass.
type Analyzer struct {
	Name string
	Doc  string
	// Codes it reports, without severity letter ("113").
	Codes []string
	Run   func(*Pass)
}

// Pass is what an analyzer sees of one file.
type Pass struct {
	Analyzer *Analyzer
	File     *File
	Config   *Config
	// Script is the parsed redlua header when the file has one (a line
	// "-- name:"), else nil; HeaderErr is what the registry said of it.
	Script    *registry.Script
	HeaderErr error

	res *resolution
	// inline options and the problems found in them (021-023)
	dirs        []directive
	reachCache  *reachInfo
	dirProblems []Diagnostic
	globals     map[string]*stdGlobal
	diags       *[]Diagnostic
}

// Reportf records a diagnostic for code (e.g. "113") over the node's
// first line.
func (p *Pass) Reportf(at Node, code string, sev Severity, symbol, format string, args ...any) {
	p.reportSpan(spanAt(at.Start(), at.EndOffset()), code, sev, symbol, fmt.Sprintf(format, args...))
}

func (p *Pass) reportSpan(s span, code string, sev Severity, symbol, msg string) {
	letter := "W"
	if sev == Error {
		letter = "E"
	}
	*p.diags = append(*p.diags, Diagnostic{
		File: p.File.Name, Line: s.Pos.Line, Column: s.Pos.Col, EndColumn: p.File.EndColumn(s.Pos, s.End),
		Code: letter + code, Analyzer: p.Analyzer.Name, Symbol: symbol, Message: msg, Severity: sev,
	})
}

// reportLine reports over columns from..to (1-based, inclusive) of a line.
func (p *Pass) reportLine(line, from, to int, code string, sev Severity, msg string) {
	start := p.File.LineStarts()[line-1]
	s := spanAt(Pos{Line: line, Col: from, Offset: start + from - 1}, start+to-1)
	p.reportSpan(s, code, sev, "", msg)
}

// Analyzers returns every analyzer, in the order Check runs them.
func Analyzers() []*Analyzer {
	return []*Analyzer{
		GlobalsAnalyzer, UnusedAnalyzer, RedefinedAnalyzer, UnreachableAnalyzer,
		UnbalancedAnalyzer, EmptyAnalyzer, WhitespaceAnalyzer, LineLengthAnalyzer,
		Lua51Analyzer, HeaderAnalyzer, KeysAnalyzer, ScriptArgsAnalyzer, CommandsAnalyzer,
	}
}

// Check lints one Lua source and returns its diagnostics sorted by
// position. A syntax error is reported alone (E011), as luacheck does;
// nothing in src can make Check panic.
func Check(file string, src []byte, cfg *Config) []Diagnostic {
	if cfg == nil {
		cfg = &Config{}
	}
	f, synErr := Parse(file, src)
	if synErr != nil {
		return []Diagnostic{*synErr}
	}
	var diags []Diagnostic
	pass := &Pass{File: f, Config: cfg, res: resolve(f), globals: globalsFor(cfg), diags: &diags}
	pass.dirs, pass.dirProblems = parseDirectives(f, pass.res)
	if hasHeader(f.Src) {
		pass.Script, pass.HeaderErr = registry.ParseScript(file, headerOnly(src))
	}
	analyzers := cfg.Analyzers
	if analyzers == nil {
		analyzers = Analyzers()
	}
	for _, a := range analyzers {
		pass.Analyzer = a
		a.Run(pass)
	}
	diags = applyInlineOptions(f, pass.dirs, pass.dirProblems, diags)
	diags = filterDiagnostics(diags, cfg)
	sortDiagnostics(diags)
	return diags
}

// headerOnly keeps the shebang and the leading comment block, so the
// registry judges the header alone: the body's own problems are the other
// analyzers' to report, with positions.
func headerOnly(src []byte) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	n := 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if (i == 0 && strings.HasPrefix(t, "#!")) || (strings.HasPrefix(t, "--") && !strings.HasPrefix(t, "--[[")) {
			n = i + 1
			continue
		}
		break
	}
	return []byte(strings.Join(lines[:n], ""))
}

// hasHeader reports whether the source carries a redlua header: a "-- name:"
// line among its leading comment lines.
func hasHeader(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#!"), line == "":
			continue
		case strings.HasPrefix(line, "--"):
			if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(line, "--")), "name:") {
				return true
			}
			continue
		}
		return false
	}
	return false
}
