package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/redlua/redlua/lint"
)

// fileResult is one checked file: its diagnostics or the I/O error that
// stopped it being read.
type fileResult struct {
	File  string
	Diags []lint.Diagnostic
	IOErr error
}

type reportOpts struct {
	codes, ranges, color bool
	quiet                int
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func lineOf(d lint.Diagnostic, o reportOpts) string {
	pos := fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
	if o.ranges {
		pos = fmt.Sprintf("%s:%d:%d-%d", d.File, d.Line, d.Column, d.EndColumn)
	}
	if o.codes {
		return fmt.Sprintf("%s: (%s) %s", pos, d.Code, d.Message)
	}
	return fmt.Sprintf("%s: %s", pos, d.Message)
}

func counts(rs []fileResult) (warn, errs, ioErrs int) {
	for _, r := range rs {
		if r.IOErr != nil {
			ioErrs++
		}
		for _, d := range r.Diags {
			if d.Severity == lint.Error {
				errs++
			} else {
				warn++
			}
		}
	}
	return
}

// writeDefault prints luacheck's default report: a line per file, the
// indented diagnostics, then a total.
func writeDefault(w io.Writer, rs []fileResult, o reportOpts) {
	paint := func(code, s string) string {
		if !o.color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	for _, r := range rs {
		if o.quiet >= 1 && r.IOErr == nil && len(r.Diags) == 0 {
			continue
		}
		if o.quiet < 3 {
			switch {
			case r.IOErr != nil:
				fmt.Fprintf(w, "Checking %-40s %s\n", r.File, paint("31;1", "I/O error"))
			case len(r.Diags) == 0:
				fmt.Fprintf(w, "Checking %-40s %s\n", r.File, paint("32;1", "OK"))
			default:
				fmt.Fprintf(w, "Checking %-40s %s\n", r.File, paint("31;1", fileSummary(r.Diags)))
			}
		}
		if o.quiet < 2 {
			if r.IOErr != nil {
				fmt.Fprintf(w, "\n    %s\n\n", r.IOErr)
				continue
			}
			if len(r.Diags) > 0 {
				fmt.Fprintln(w)
				for _, d := range r.Diags {
					fmt.Fprintf(w, "    %s\n", lineOf(d, o))
				}
				fmt.Fprintln(w)
			}
		}
	}
	warn, errs, ioErrs := counts(rs)
	fmt.Fprintf(w, "Total: %s / %s in %s", plural(warn, "warning"), plural(errs, "error"), plural(len(rs)-ioErrs, "file"))
	if ioErrs > 0 {
		fmt.Fprintf(w, ", couldn't check %s", plural(ioErrs, "file"))
	}
	fmt.Fprintln(w)
}

// fileSummary is luacheck's per-file status: "2 warnings", "1 error" or
// "1 warning / 1 error".
func fileSummary(ds []lint.Diagnostic) string {
	var warn, errs int
	for _, d := range ds {
		if d.Severity == lint.Error {
			errs++
		} else {
			warn++
		}
	}
	switch {
	case errs == 0:
		return plural(warn, "warning")
	case warn == 0:
		return plural(errs, "error")
	}
	return plural(warn, "warning") + " / " + plural(errs, "error")
}

func writePlain(w io.Writer, rs []fileResult, o reportOpts) {
	for _, r := range rs {
		if r.IOErr != nil {
			fmt.Fprintf(w, "%s: %s\n", r.File, r.IOErr)
		}
		for _, d := range r.Diags {
			fmt.Fprintln(w, lineOf(d, o))
		}
	}
}

type jsonDiag struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndColumn int    `json:"end_column"`
	Code      string `json:"code"`
	Name      string `json:"name"`
	Message   string `json:"message"`
	Severity  string `json:"severity"`
}

func sevName(s lint.Severity) string {
	if s == lint.Error {
		return "error"
	}
	return "warning"
}

func writeJSON(w io.Writer, rs []fileResult) error {
	out := []jsonDiag{}
	for _, r := range rs {
		if r.IOErr != nil {
			out = append(out, jsonDiag{File: r.File, Code: "E000", Name: "io-error", Message: r.IOErr.Error(), Severity: "error"})
		}
		for _, d := range r.Diags {
			out = append(out, jsonDiag{d.File, d.Line, d.Column, d.EndColumn, d.Code, d.Analyzer, d.Message, sevName(d.Severity)})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// githubEscape applies the workflow-command escaping GitHub documents for
// property values and messages.
func githubEscape(s string, prop bool) string {
	s = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
	if prop {
		s = strings.NewReplacer(":", "%3A", ",", "%2C").Replace(s)
	}
	return s
}

func writeGitHub(w io.Writer, rs []fileResult) {
	for _, r := range rs {
		if r.IOErr != nil {
			fmt.Fprintf(w, "::error file=%s,title=I/O error::%s\n", githubEscape(r.File, true), githubEscape(r.IOErr.Error(), false))
		}
		for _, d := range r.Diags {
			fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,endColumn=%d,title=%s::%s\n", sevName(d.Severity),
				githubEscape(d.File, true), d.Line, d.Column, d.EndColumn, githubEscape(d.Code, true), githubEscape(d.Message, false))
		}
	}
}

// sortedCodes lists the distinct codes in rs, for SARIF's rules array.
func sortedCodes(rs []fileResult) []lint.Diagnostic {
	m := map[string]lint.Diagnostic{}
	for _, r := range rs {
		for _, d := range r.Diags {
			m[d.Code] = d
		}
	}
	out := make([]lint.Diagnostic, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
