package lint

import (
	"errors"
	"fmt"

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
	// Script is the parsed redlua header when the file has a valid one,
	// else nil; HeaderErr is what the registry said of the shebang and
	// header (registry.ParseHeader), Header the header's field lines as
	// far as they could be read.
	Script    *registry.Script
	HeaderErr error
	Header    []registry.HeaderField

	res   *resolution
	flags []string // from the shebang, by the registry's flag parser
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
	pass.readHeader(file, src)
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

// readHeader asks the registry for the shebang and header, so lint and
// registration judge them by the same rules. A file without a header is
// plain Lua: only its shebang's problems concern it.
func (p *Pass) readHeader(file string, src []byte) {
	s, found, err := registry.ParseHeader(file, src)
	if s != nil {
		p.flags = s.Flags
	}
	if !found {
		var shebang []error
		for _, e := range registry.Problems(err) {
			if e.Part == registry.PartShebang {
				shebang = append(shebang, e)
			}
		}
		p.HeaderErr = errors.Join(shebang...)
		return
	}
	p.HeaderErr = err
	if s != nil {
		p.Header = s.Header
	}
	if err == nil {
		p.Script = s
	}
}

// readOnly reports whether the shebang declares no-writes.
func (p *Pass) readOnly() bool {
	for _, f := range p.flags {
		if f == registry.FlagNoWrites {
			return true
		}
	}
	return false
}
