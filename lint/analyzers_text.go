package lint

import (
	"fmt"
	"unicode/utf8"
)

// WhitespaceAnalyzer reports lines of only whitespace (611) and trailing
// whitespace in code (612), strings (613) and comments (614).
var WhitespaceAnalyzer = &Analyzer{
	Name:  "whitespace",
	Doc:   "whitespace-only lines and trailing whitespace",
	Codes: []string{"611", "612", "613", "614"},
	Run:   runWhitespace,
}

// LineLengthAnalyzer reports lines longer than Config.MaxLineLength (631).
var LineLengthAnalyzer = &Analyzer{
	Name:  "line-length",
	Doc:   "lines longer than the configured maximum (default 120 characters)",
	Codes: []string{"631"},
	Run:   runLineLength,
}

func runWhitespace(p *Pass) {
	f := p.File
	f.Lines(func(line, start int, text string) {
		end := len(text)
		ws := end
		for ws > 0 && (text[ws-1] == ' ' || text[ws-1] == '\t' || text[ws-1] == '\f' || text[ws-1] == '\v') {
			ws--
		}
		if ws == end {
			return
		}
		off := start + ws
		switch {
		case ws == 0:
			// Inside a long string or comment too, as luacheck does.
			p.reportLine(line, 1, end, "611", Warning, "line contains only whitespace")
		case f.InString(off):
			p.reportLine(line, ws+1, end, "613", Warning, "trailing whitespace in a string")
		case f.InComment(off):
			p.reportLine(line, ws+1, end, "614", Warning, "trailing whitespace in a comment")
		default:
			p.reportLine(line, ws+1, end, "612", Warning, "line contains trailing whitespace")
		}
	})
}

func maxLineLength(cfg *Config) int {
	switch {
	case cfg.MaxLineLength < 0:
		return -1
	case cfg.MaxLineLength == 0:
		return 120
	}
	return cfg.MaxLineLength
}

func runLineLength(p *Pass) {
	configured := maxLineLength(p.Config)
	header := headerFieldLines(p)
	p.File.Lines(func(line, start int, text string) {
		limit := lineLimit(p.dirs, line, configured)
		if limit < 0 {
			return
		}
		n := utf8.RuneCountInString(text)
		if n > limit && !header[line] {
			p.reportLine(line, limit+1, n, "631", Warning, fmt.Sprintf("line is too long (%d > %d)", n, limit))
		}
	})
}

// headerFieldLines are the lines of a redlua header's fields ("-- name:",
// "-- description:", ...) in the leading comment block. The registry
// requires each field on one line, so a long description cannot be
// wrapped; W631 leaves those lines alone.
func headerFieldLines(p *Pass) map[int]bool {
	out := map[int]bool{}
	for _, f := range p.Header {
		out[f.Line] = true
	}
	return out
}

// Lua51Analyzer reports Lua 5.2+ syntax (931): goto and labels, integer
// division, bitwise operators, empty statements, statements after break,
// Lua 5.4 attributes; and a "[[" nested in a "[[...]]" string or comment
// (932), which Lua 5.1 built with LUA_COMPAT_LSTR 1 refuses, as every
// upstream Redis and Valkey does ("nesting of [[...]] is deprecated near
// '['"; Debian's build of Redis 7.0 is the exception). luacheck accepts
// both whatever its --std says; the server refuses to compile the script.
var Lua51Analyzer = &Analyzer{
	Name:  "lua51",
	Doc:   "syntax newer than Lua 5.1, or a nested [[, which Redis's Lua 5.1 rejects",
	Codes: []string{"931", "932"},
	Run: func(p *Pass) {
		for _, n := range p.File.NewSyntax() {
			code := "931"
			if n.Nested {
				code = "932"
			}
			p.reportSpan(n.Span, code, Error, "", n.Message())
		}
	},
}
