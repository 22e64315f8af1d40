package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redlua/redlua/lint"
)

// optionSet is one layer of luacheck options: the top level of a
// .luacheckrc, one of its files["glob"] overrides, or the command line.
// Nil pointers and nil slices mean "not set in this layer".
type optionSet struct {
	globals, readGlobals       []string
	newGlobals, newReadGlobals []string // non-nil replaces what earlier layers added
	setNewGlobals, setNewRead  bool
	ignore, only, enable       []string
	setOnly                    bool // only = {} filters out everything, as luacheck does
	// maxLineLength: nil unset, -1 off (false), else the limit.
	maxLineLength *int
	// std: "" unset; otherwise luacheck's "name+name" or "+name" form.
	std string
	// stdTable is an inline std = {globals=..., read_globals=...}.
	stdTable *stdDef
	// The filter macros (false filters the family out).
	unused, redefined, unusedArgs, global *bool
}

// stdDef is a custom set of globals (stds.name or an inline std table),
// flattened to lint's names: "name" or "name.field".
type stdDef struct {
	globals, readGlobals []string
}

// builtinStds are luacheck 1.1's standard sets. redlua always checks
// against Redis's sandbox, so these names are accepted for compatibility
// and add nothing; "redis" names that sandbox explicitly (what every
// supported server has). The server lines (lint.ServerLines: "redis74",
// "valkey80", ...) choose one server's sandbox instead.
var builtinStds = map[string]bool{
	"redis": true, "max": true, "min": true, "lua51": true, "lua51c": true, "lua52": true, "lua52c": true,
	"lua53": true, "lua53c": true, "lua54": true, "lua54c": true, "luajit": true, "ngx_lua": true,
	"_G": true, "busted": true, "love": true, "playdate": true, "rockspec": true, "luacheckrc": true,
	"ldoc": true, "sile": true, "none": true,
}

// splitStd validates a std string against the known sets and returns its
// names and whether it adds to the current std (a leading '+').
func splitStd(std string, custom map[string]*stdDef) (names []string, add bool, err error) {
	parts := strings.Split(std, "+")
	if strings.TrimSpace(parts[0]) == "" {
		add = true
		parts = parts[1:]
	}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if !builtinStds[p] && custom[p] == nil && !isServerStd(p) {
			return nil, false, fmt.Errorf("unknown std '%s': use redis (the sandbox every supported server has, always on), a server line (%s), one of luacheck's built-in names, or a set defined in stds",
				p, strings.Join(lint.ServerLines(), ", "))
		}
		names = append(names, p)
	}
	return names, add, nil
}

// isServerStd reports whether a std name is a server line, whose sandbox
// replaces the one every server has.
func isServerStd(name string) bool {
	return name != "redis" && name != "" && name != lint.AnyServer && lint.IsServerLine(name)
}

// macroPatterns are luacheck's option macros, most specific first, as
// options.lua applies them.
var macroPatterns = []struct {
	name    string
	pattern string
	get     func(*optionSet) *bool
}{
	{"unused_args", "21[23]", func(o *optionSet) *bool { return o.unusedArgs }},
	{"global", "1", func(o *optionSet) *bool { return o.global }},
	{"unused", "[23]", func(o *optionSet) *bool { return o.unused }},
	{"redefined", "4", func(o *optionSet) *bool { return o.redefined }},
}

// fileOptions is what one file is checked with: lint's config (globals,
// line length, and the filter rules in luacheck's order, so that a later
// layer's enable beats an earlier ignore and vice versa).
type fileOptions struct {
	cfg *lint.Config
}

// resolveOptions folds an option stack (least specific first) as luacheck's
// options.normalize does.
func resolveOptions(stack []*optionSet, custom map[string]*stdDef) fileOptions {
	cfg := &lint.Config{}
	var stdExtra stdDef
	var globals, readGlobals []string
	for _, o := range stack {
		switch {
		case o.stdTable != nil:
			stdExtra = *o.stdTable
		case o.std != "":
			names, add, err := splitStd(o.std, custom)
			if err != nil {
				continue // validated when the layer was built
			}
			if !add {
				stdExtra = stdDef{}
				cfg.Server = ""
			}
			for _, n := range names {
				if isServerStd(n) && custom[n] == nil {
					cfg.Server = n
				}
				if d := custom[n]; d != nil {
					stdExtra.globals = append(stdExtra.globals, d.globals...)
					stdExtra.readGlobals = append(stdExtra.readGlobals, d.readGlobals...)
				}
			}
		}
		if o.setNewGlobals {
			globals = append([]string(nil), o.newGlobals...)
		}
		if o.setNewRead {
			readGlobals = append([]string(nil), o.newReadGlobals...)
		}
		globals = append(globals, o.globals...)
		readGlobals = append(readGlobals, o.readGlobals...)
		if o.maxLineLength != nil {
			cfg.MaxLineLength = *o.maxLineLength // validated positive, or -1 for off
		}
	}
	cfg.Globals = append(stdExtra.globals, globals...)
	cfg.ReadGlobals = append(stdExtra.readGlobals, readGlobals...)

	var rules []lint.Rule
	used := map[string]bool{}
	for i := len(stack) - 1; i >= 0; i-- {
		o := stack[i]
		for _, m := range macroPatterns {
			if v := m.get(o); v != nil && !used[m.name] {
				used[m.name] = true
				kind := lint.RuleIgnore
				if *v {
					kind = lint.RuleEnable
				}
				rules = append(rules, lint.Rule{Kind: kind, Patterns: []string{m.pattern}})
			}
		}
		if o.ignore != nil {
			rules = append(rules, lint.Rule{Kind: lint.RuleIgnore, Patterns: o.ignore})
		}
		if o.only != nil || o.setOnly {
			rules = append(rules, lint.Rule{Kind: lint.RuleOnly, Patterns: o.only})
		}
		if o.enable != nil {
			rules = append(rules, lint.Rule{Kind: lint.RuleEnable, Patterns: o.enable})
		}
	}
	cfg.Rules = rules
	return fileOptions{cfg: cfg}
}

// validatePatterns rejects malformed filter patterns, naming the option.
func validatePatterns(option string, ps []string) error {
	for _, p := range ps {
		if err := lint.ValidPattern(p); err != nil {
			return fmt.Errorf("%s: %v", option, err)
		}
	}
	return nil
}

// settings is everything the command line and the config file decide.
type settings struct {
	conf *rcConfig // nil without a config file
	cli  *optionSet
	// custom stds from the config, by name.
	stds map[string]*stdDef
	// exclude/include globs, absolute.
	exclude, include []string
	// registry is the registry mode: "on", "off", or "" for the
	// automatic rule (see checkRegistry).
	registry string
}

// optionsFor returns the options for one file (its reported name).
func (s *settings) optionsFor(file string) fileOptions {
	stack := []*optionSet{}
	if s.conf != nil {
		stack = append(stack, s.conf.top)
		stack = append(stack, s.conf.overridesFor(file)...)
	}
	stack = append(stack, s.cli)
	return resolveOptions(stack, s.stds)
}

// selected reports whether exclude_files/include_files keep a file.
func (s *settings) selected(file string) bool {
	abs := absPath(file)
	for _, g := range s.exclude {
		if globMatch(g, abs) {
			return false
		}
	}
	if len(s.include) == 0 {
		return true
	}
	for _, g := range s.include {
		if globMatch(g, abs) {
			return true
		}
	}
	return false
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

// globMatch is luacheck's globbing.match: both sides absolute; a glob
// without wildcards matches the path and everything under it; '*' and '?'
// stay within one component, '**' spans any number, [!x] negates a class;
// a glob also matches everything below what it matches.
func globMatch(glob, path string) bool {
	if !strings.ContainsAny(glob, "*?[") {
		return path == glob || strings.HasPrefix(path, strings.TrimSuffix(glob, "/")+"/")
	}
	return partsMatch(splitParts(glob), splitParts(path))
}

func splitParts(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func partsMatch(glob, path []string) bool {
	if len(glob) == 0 {
		return true // the path is the glob's match or below it
	}
	if glob[0] == "**" {
		for i := 0; i <= len(path); i++ {
			if partsMatch(glob[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	ok, err := filepath.Match(strings.ReplaceAll(strings.ReplaceAll(glob[0], "\\", "\\\\"), "[!", "[^"), path[0])
	return err == nil && ok && partsMatch(glob[1:], path[1:])
}

// globLess is luacheck's globbing.compare: whether a is less specific than
// b, so its override applies first.
func globLess(a, b string) bool {
	pa, pb := splitParts(a), splitParts(b)
	for i := 0; i < max(len(pa), len(pb)); i++ {
		if i >= len(pa) {
			return true
		}
		if i >= len(pb) {
			return false
		}
		if (pa[i] == "**" || pb[i] == "**") && pa[i] != pb[i] {
			return pa[i] == "**"
		}
		sa, sb := strings.Count(pa[i], "*")+strings.Count(pa[i], "?")+strings.Count(pa[i], "["), strings.Count(pb[i], "*")+strings.Count(pb[i], "?")+strings.Count(pb[i], "[")
		if sa != sb {
			return sa > sb
		}
	}
	return a < b
}

// sortOverrides orders matching overrides from least to most specific.
func sortOverrides(os []override) {
	sort.SliceStable(os, func(i, j int) bool { return globLess(os[i].glob, os[j].glob) })
}
