package lint

import (
	"strconv"
	"strings"
)

// Inline options, as luacheck reads them: a short comment starting with
// "luacheck:" holding comma-separated options. On a line with code it
// affects that line; on a line of its own, the rest of the enclosing
// function (or file), or up to the matching "luacheck: pop" after a
// "luacheck: push".

type directive struct {
	from, to int // lines affected, inclusive
	// filter rules in order; kind is "ignore", "enable" or "only"
	rules       []rule
	globals     []string
	readGlobals []string
	maxLen      *int // -1: no limit
}

type rule struct {
	kind     string
	patterns []string
}

// nullary options and the codes they stand for (luacheck's macros).
var nullaryOptions = map[string]string{
	"global": "1", "globals": "1", "unused": "[23]", "redefined": "4",
	"unused args": "21[23]", "unused arguments": "21[23]", "unused secondaries": "",
	"self": "", "compat": "", "module": "", "allow defined": "", "allow defined top": "",
}

func applyInlineOptions(f *File, dirs []directive, problems, ds []Diagnostic) []Diagnostic {
	if len(dirs) == 0 {
		return append(ds, problems...)
	}
	out := ds[:0]
	for _, d := range ds {
		if d.Code == "E011" || inlineKeep(&d, dirs) {
			out = append(out, d)
		}
	}
	return append(out, problems...)
}

func inlineKeep(d *Diagnostic, dirs []directive) bool {
	on := true
	code := codeDigits(d.Code)
	for _, dir := range dirs {
		if d.Line < dir.from || d.Line > dir.to {
			continue
		}
		for _, r := range dir.rules {
			m := false
			for _, p := range r.patterns {
				if p == "" || MatchPattern(p, code, d.Symbol) {
					m = true
				}
			}
			switch {
			case r.kind == "ignore" && m:
				on = false
			case r.kind == "enable" && m:
				on = true
			case r.kind == "only" && !m:
				on = false
			}
		}
		if code[0] == '1' && d.Symbol != "" {
			for _, g := range dir.globals {
				if g == d.Symbol {
					on = false
				}
			}
			if code == "113" || code == "143" {
				for _, g := range dir.readGlobals {
					if g == d.Symbol {
						on = false
					}
				}
			}
		}
	}
	return on
}

// lineLimit is the W631 limit in force on a line: the last inline "max
// line length" covering it, else the configured one (-1: none).
func lineLimit(dirs []directive, line, configured int) int {
	limit := configured
	for _, d := range dirs {
		if d.maxLen != nil && line >= d.from && line <= d.to {
			limit = *d.maxLen
		}
	}
	return limit
}

// closureEnd is the last line of the innermost function containing off.
func closureEnd(f *File, res *resolution, off int) int {
	best, bestSize := len(f.LineStarts()), -1
	for _, fn := range res.funcs {
		if fn == f.Main || off < fn.Pos.Offset || off > fn.End {
			continue
		}
		if size := fn.End - fn.Pos.Offset; bestSize < 0 || size < bestSize {
			best, bestSize = f.PosAt(fn.End).Line, size
		}
	}
	return best
}

func parseDirectives(f *File, res *resolution) ([]directive, []Diagnostic) {
	type pending struct {
		c     Comment
		opts  string
		push  bool
		pop   bool
		popAt int
	}
	var list []*pending
	for _, c := range f.Comments {
		body := strings.TrimSpace(c.Text)
		rest, ok := strings.CutPrefix(body, "luacheck:")
		if !ok || strings.Contains(c.Text, "\n") {
			continue
		}
		list = append(list, &pending{c: c, opts: rest})
	}
	if len(list) == 0 {
		return nil, nil
	}
	var problems []Diagnostic
	report := func(c Comment, code, msg string) {
		problems = append(problems, Diagnostic{File: f.Name, Line: c.Pos.Line, Column: c.Pos.Col, EndColumn: f.EndColumn(c.Pos, c.End), Code: "W" + code, Analyzer: "inline-options", Message: msg, Severity: Warning})
	}
	// pair push with pop
	var stack []*pending
	for _, p := range list {
		first, _, _ := strings.Cut(strings.TrimSpace(p.opts), ",")
		words := strings.Fields(first)
		switch {
		case len(words) > 0 && words[0] == "push":
			p.push = true
			p.opts = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p.opts), "push"))
			stack = append(stack, p)
		case len(words) == 1 && words[0] == "pop":
			p.pop = true
			if len(stack) == 0 {
				report(p.c, "023", "unpaired pop directive")
				continue
			}
			stack[len(stack)-1].popAt = p.c.Pos.Line
			stack = stack[:len(stack)-1]
		}
	}
	for _, p := range stack {
		report(p.c, "022", "unpaired push directive")
	}
	var dirs []directive
	var open []*pending // pushes in effect, for the end of standalone options
	for _, p := range list {
		if p.pop {
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			continue
		}
		d := directive{from: p.c.Pos.Line, to: p.c.Pos.Line}
		if !p.c.Inline {
			d.to = closureEnd(f, res, p.c.Pos.Offset)
			limit := p.popAt
			for _, o := range open {
				if o.popAt > 0 && (limit == 0 || o.popAt < limit) {
					limit = o.popAt
				}
			}
			if limit > 0 && limit-1 < d.to {
				d.to = limit - 1
			}
		}
		if p.push {
			open = append(open, p)
		}
		if msg := parseOptions(p.opts, &d); msg != "" {
			report(p.c, "021", msg)
			continue
		}
		dirs = append(dirs, d)
	}
	return dirs, problems
}

// parseOptions reads "ignore 211 foo, globals bar" into d; it returns a
// message for an invalid option.
func parseOptions(text string, d *directive) string {
	text = stripNotes(text)
	for _, inv := range strings.Split(text, ",") {
		words := strings.Fields(inv)
		if len(words) == 0 {
			continue
		}
		name, args, ok := splitOption(words)
		if !ok {
			return "unknown inline option '" + strings.TrimSpace(inv) + "'"
		}
		switch name {
		case "ignore":
			if len(args) == 0 {
				args = []string{".*"}
			}
			d.rules = append(d.rules, rule{"ignore", args})
		case "enable", "only":
			if len(args) == 0 {
				return "inline option '" + name + "' expects at least one argument"
			}
			d.rules = append(d.rules, rule{name, args})
		case "globals", "new globals":
			d.globals = append(d.globals, args...)
		case "read globals", "new read globals":
			d.readGlobals = append(d.readGlobals, args...)
		case "not globals", "std":
			// accepted for compatibility; Redis's globals are fixed
		case "max line length", "max code line length", "max string line length", "max comment line length":
			if len(args) != 1 {
				return "inline option '" + name + "' expects one argument"
			}
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return "inline option '" + name + "' expects a number"
			}
			if name == "max line length" {
				d.maxLen = &n
			}
		case "no max line length":
			n := -1
			d.maxLen = &n
		default:
			neg := strings.HasPrefix(name, "no ")
			codes := nullaryOptions[strings.TrimPrefix(name, "no ")]
			if len(args) > 0 {
				return "inline option '" + name + "' expects no arguments"
			}
			if codes == "" {
				continue
			}
			kind := "enable"
			if neg {
				kind = "ignore"
			}
			d.rules = append(d.rules, rule{kind, []string{codes}})
		}
	}
	return ""
}

// splitOption finds the longest option name that prefixes the words.
func splitOption(words []string) (string, []string, bool) {
	known := func(n string) bool {
		switch n {
		case "ignore", "enable", "only", "globals", "new globals", "read globals", "new read globals", "not globals", "std",
			"max line length", "max code line length", "max string line length", "max comment line length",
			"no max line length", "no max code line length", "no max string line length", "no max comment line length":
			return true
		}
		_, ok := nullaryOptions[strings.TrimPrefix(n, "no ")]
		return ok
	}
	best := -1
	for i := range words {
		if known(strings.Join(words[:i+1], " ")) {
			best = i
		}
	}
	if best < 0 {
		return "", nil, false
	}
	return strings.Join(words[:best+1], " "), words[best+1:], true
}

// stripNotes drops "(notes)" in balanced parentheses.
func stripNotes(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
