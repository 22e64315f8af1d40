package lint

import "strings"

// CodesURL is the page that documents every code, with one anchor per
// code ("#w113").
const CodesURL = "https://github.com/redlua/redlua/blob/main/lint/CODES.md"

// HelpURL is the link to the documentation of a code ("W113", "E931"),
// for SARIF rules and editor integrations.
func HelpURL(code string) string { return CodesURL + "#" + strings.ToLower(code) }

// builtinDocs describe the diagnostics that come from the parser and the
// inline-option reader rather than from an Analyzer.
var builtinDocs = map[string]string{
	"syntax":         "Lua 5.1 syntax errors, which Redis's compiler rejects (reported alone, as luacheck does)",
	"inline-options": "invalid or unpaired inline -- luacheck: comments",
	"redis-registry": "what registry.New rejects in a directory of scripts beyond one file's contents: no redlua header, a file name that is not name.vVERSION.lua, a name@version declared twice (CheckRegistry)",
}

// AnalyzerDoc returns the doc of the analyzer named name (a
// Diagnostic.Analyzer), or "" when there is none by that name.
func AnalyzerDoc(name string) string {
	if d, ok := builtinDocs[name]; ok {
		return d
	}
	for _, a := range Analyzers() {
		if a.Name == name {
			return a.Doc
		}
	}
	return ""
}
