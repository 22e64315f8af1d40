package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// Conversion of what a config assigned into options, validating types as
// luacheck does.

// The options a config may set, at the top level and in files[...].
var scopedOptions = []string{
	"std", "globals", "read_globals", "new_globals", "new_read_globals", "not_globals",
	"ignore", "enable", "only", "max_line_length", "unused", "redefined", "unused_args", "global",
	// Accepted and type-checked for compatibility; no effect here.
	"max_code_line_length", "max_string_line_length", "max_comment_line_length", "max_cyclomatic_complexity",
	"unused_secondaries", "self", "compat", "allow_defined", "allow_defined_top", "module", "operators",
}

// convert turns the evaluated globals into options, validating types as
// luacheck does, in a fixed order so the first error is deterministic.
func (ev *evaluated) convert(path, anchor string) (*rcConfig, error) {
	c := &rcConfig{path: path, anchor: anchor, stds: map[string]*stdDef{}}
	fail := func(line int, format string, args ...any) error {
		return &configError{file: path, line: line, msg: fmt.Sprintf(format, args...)}
	}
	// stds first: std options are checked against them.
	if err := ev.convertStds(c, fail); err != nil {
		return nil, err
	}
	top, optErr := convertOptions(ev.vals, c.stds, func(opt string) int { return ev.lines[opt] })
	if optErr != nil {
		return nil, optErr.withFile(path)
	}
	c.top = top
	if err := ev.convertReportOptions(c, fail); err != nil {
		return nil, err
	}
	if err := ev.convertFileLists(c, anchor, fail); err != nil {
		return nil, err
	}
	return c, ev.convertFiles(c, path, anchor, fail)
}

type failFunc func(line int, format string, args ...any) error

func (ev *evaluated) convertStds(c *rcConfig, fail failFunc) error {
	if ev.stds == lua.LNil {
		return nil
	}
	t, ok := ev.stds.(*lua.LTable)
	if !ok {
		return fail(ev.lines["stds"], "invalid option 'stds': table expected, got %s; write stds.name = {globals = {...}, read_globals = {...}}", ev.stds.Type())
	}
	for _, n := range stringKeys(t) {
		d, err := stdTable(t.RawGetString(n))
		if err != nil {
			return fail(ev.lines["stds"], "invalid custom std '%s': %v", n, err)
		}
		c.stds[n] = d
	}
	return nil
}

// convertReportOptions reads the top-level-only options about the report
// (quiet, color, codes, ranges, formatter, and redlua's registry) and checks cache and jobs,
// which are accepted for compatibility.
func (ev *evaluated) convertReportOptions(c *rcConfig, fail failFunc) error {
	get := func(name string) lua.LValue { return ev.vals.RawGetString(name) }
	if v := get("quiet"); v != lua.LNil {
		n, ok := v.(lua.LNumber)
		if !ok || float64(n) != float64(int(n)) || n < 0 || n > 3 {
			return fail(ev.lines["quiet"], "invalid value of option 'quiet': integer in range 0..3 expected, got %s", luaShow(v))
		}
		q := int(n)
		c.quiet = &q
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"color", &c.color}, {"codes", &c.codes}, {"ranges", &c.ranges}, {"registry", &c.registry}} {
		if v := get(b.name); v != lua.LNil {
			bv, ok := v.(lua.LBool)
			if !ok {
				return fail(ev.lines[b.name], "invalid value of option '%s': boolean expected, got %s; write %s = true or false", b.name, luaShow(v), b.name)
			}
			x := bool(bv)
			*b.dst = &x
		}
	}
	if v := get("formatter"); v != lua.LNil {
		s, ok := v.(lua.LString)
		if !ok {
			return fail(ev.lines["formatter"], "invalid value of option 'formatter': string expected, got %s (custom formatter functions are not supported; use default, plain, JSON, sarif, github or JUnit)", luaShow(v))
		}
		f := string(s)
		c.formatter = &f
	}
	if v := get("cache"); v != lua.LNil {
		switch v.(type) {
		case lua.LString, lua.LBool:
		default:
			return fail(ev.lines["cache"], "invalid value of option 'cache': string or boolean expected, got %s", luaShow(v))
		}
	}
	if v := get("jobs"); v != lua.LNil {
		n, ok := v.(lua.LNumber)
		if !ok || n < 1 || float64(n) != float64(int(n)) {
			return fail(ev.lines["jobs"], "invalid value of option 'jobs': positive integer expected, got %s", luaShow(v))
		}
	}
	return nil
}

// convertFileLists reads exclude_files and include_files, made absolute.
func (ev *evaluated) convertFileLists(c *rcConfig, anchor string, fail failFunc) error {
	for _, o := range []struct {
		name string
		dst  *[]string
	}{{"exclude_files", &c.exclude}, {"include_files", &c.include}} {
		v := ev.vals.RawGetString(o.name)
		if v == lua.LNil {
			continue
		}
		globs, err := stringArray(v)
		if err != nil {
			return fail(ev.lines[o.name], "invalid value of option '%s': %v; write %s = {\"glob\", ...}", o.name, err, o.name)
		}
		for _, g := range globs {
			*o.dst = append(*o.dst, joinAnchor(anchor, g))
		}
	}
	return nil
}

// convertFiles reads the files["glob"] overrides.
func (ev *evaluated) convertFiles(c *rcConfig, path, anchor string, fail failFunc) error {
	if ev.files == lua.LNil {
		return nil
	}
	ft, ok := ev.files.(*lua.LTable)
	if !ok {
		return fail(ev.lines["files"], "invalid option 'files': table expected, got %s; write files[\"glob\"] = {option = value}", ev.files.Type())
	}
	for _, g := range stringKeys(ft) {
		v := ft.RawGetString(g)
		t, ok := v.(*lua.LTable)
		if !ok {
			return fail(max(ev.fileLine[g], ev.lines["files"]), "invalid options for path '%s': option table expected, got %s", g, luaShow(v))
		}
		line := ev.fileLine[g]
		if line == 0 {
			line = ev.lines["files"]
		}
		opts, err := convertOptions(t, c.stds, func(string) int { return line })
		if err != nil {
			err.msg = fmt.Sprintf("invalid options for path '%s': %s", g, err.msg)
			return err.withFile(path)
		}
		c.overrides = append(c.overrides, override{glob: joinAnchor(anchor, g), opts: opts})
	}
	return nil
}

func joinAnchor(anchor, glob string) string {
	if filepath.IsAbs(glob) {
		return filepath.Clean(glob)
	}
	return filepath.Join(anchor, glob)
}

type optError struct {
	line int
	msg  string
}

func (e *optError) withFile(file string) error {
	return &configError{file: file, line: e.line, msg: e.msg}
}

// convertOptions reads the scoped options from a table (the config's
// globals or a files[...] entry).
func convertOptions(t *lua.LTable, stds map[string]*stdDef, lineOf func(string) int) (*optionSet, *optError) {
	o := &optionSet{}
	for _, name := range scopedOptions {
		v := t.RawGetString(name)
		if v == lua.LNil {
			continue
		}
		bad := func(format string, args ...any) *optError {
			return &optError{line: lineOf(name), msg: fmt.Sprintf("invalid value of option '%s': ", name) + fmt.Sprintf(format, args...)}
		}
		var err *optError
		switch name {
		case "std":
			err = o.setStd(v, stds, bad)
		case "globals", "read_globals", "new_globals", "new_read_globals":
			err = o.setGlobals(name, v, bad)
		case "ignore", "enable", "only", "not_globals", "operators":
			err = o.setPatterns(name, v, bad, lineOf)
		case "max_line_length", "max_code_line_length", "max_string_line_length", "max_comment_line_length", "max_cyclomatic_complexity":
			err = o.setLimit(name, v, bad)
		default:
			err = o.setBool(name, v, bad)
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

type badFunc func(format string, args ...any) *optError

func (o *optionSet) setStd(v lua.LValue, stds map[string]*stdDef, bad badFunc) *optError {
	switch sv := v.(type) {
	case lua.LString:
		if _, _, err := splitStd(string(sv), stds); err != nil {
			return bad("%v", err)
		}
		o.std = string(sv)
	case *lua.LTable:
		d, err := stdTable(sv)
		if err != nil {
			return bad("%v", err)
		}
		o.stdTable = d
	default:
		return bad("string or table expected, got %s; write std = \"redis\"", luaShow(v))
	}
	return nil
}

func (o *optionSet) setGlobals(name string, v lua.LValue, bad badFunc) *optError {
	var d stdDef
	if err := fieldMap(v, name == "read_globals" || name == "new_read_globals", &d); err != nil {
		return bad("%v; write %s = {\"name\", \"name.field\", ...}", err, name)
	}
	switch name {
	case "globals":
		o.globals, o.readGlobals = append(o.globals, d.globals...), append(o.readGlobals, d.readGlobals...)
	case "read_globals":
		o.readGlobals, o.globals = append(o.readGlobals, d.readGlobals...), append(o.globals, d.globals...)
	case "new_globals":
		o.setNewGlobals, o.newGlobals = true, append(d.globals, d.readGlobals...)
	case "new_read_globals":
		o.setNewRead, o.newReadGlobals = true, append(d.readGlobals, d.globals...)
	}
	return nil
}

func (o *optionSet) setPatterns(name string, v lua.LValue, bad badFunc, lineOf func(string) int) *optError {
	ps, err := stringArray(v)
	if err != nil {
		return bad("%v; write %s = {\"211\", \"_.*\", ...}", err, name)
	}
	if name != "not_globals" && name != "operators" {
		if err := validatePatterns(name, ps); err != nil {
			return &optError{line: lineOf(name), msg: err.Error()}
		}
	}
	if ps == nil {
		ps = []string{}
	}
	switch name {
	case "ignore":
		o.ignore = ps
	case "enable":
		o.enable = ps
	case "only":
		o.only, o.setOnly = ps, true
	}
	return nil
}

// setLimit reads max_line_length and the limits accepted for compatibility.
func (o *optionSet) setLimit(name string, v lua.LValue, bad badFunc) *optError {
	switch nv := v.(type) {
	case lua.LBool:
		if bool(nv) {
			return bad("number or false expected, got true")
		}
		if name == "max_line_length" {
			off := -1
			o.maxLineLength = &off
		}
	case lua.LNumber:
		if nv < 1 || float64(nv) != float64(int(nv)) || nv > 1<<30 {
			return bad("a positive whole number or false expected, got %s", luaShow(v))
		}
		if name == "max_line_length" {
			n := int(nv)
			o.maxLineLength = &n
		}
	default:
		return bad("number or false expected, got %s", luaShow(v))
	}
	return nil
}

func (o *optionSet) setBool(name string, v lua.LValue, bad badFunc) *optError {
	bv, ok := v.(lua.LBool)
	if !ok {
		return bad("boolean expected, got %s; write %s = false", luaShow(v), name)
	}
	b := bool(bv)
	switch name {
	case "unused":
		o.unused = &b
	case "redefined":
		o.redefined = &b
	case "unused_args":
		o.unusedArgs = &b
	case "global":
		o.global = &b
	}
	return nil
}

// luaShow names a value for a message: its type, and the value itself for
// numbers and short strings.
func luaShow(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LNumber:
		return "number " + x.String()
	case lua.LString:
		if len(x) <= 40 {
			return strconv.Quote(string(x))
		}
	}
	return v.Type().String()
}

// stringArray reads an array of strings.
func stringArray(v lua.LValue) ([]string, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("array of strings expected, got %s", luaShow(v))
	}
	var out []string
	var err error
	n := t.MaxN()
	for i := 1; i <= n; i++ {
		s, ok := t.RawGetInt(i).(lua.LString)
		if !ok {
			return nil, fmt.Errorf("array of strings expected, item %d is %s", i, luaShow(t.RawGetInt(i)))
		}
		out = append(out, string(s))
	}
	t.ForEach(func(k, v lua.LValue) {
		if kn, ok := k.(lua.LNumber); ok && float64(kn) == float64(int(kn)) && int(kn) >= 1 && int(kn) <= n {
			return
		}
		if err == nil {
			err = fmt.Errorf("array of strings expected, got a table with key %s", luaShow(k))
		}
	})
	return out, err
}

// stdTable reads a std: {globals = ..., read_globals = ...}.
func stdTable(v lua.LValue) (*stdDef, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("table expected, got %s", luaShow(v))
	}
	d := &stdDef{}
	var err error
	t.ForEach(func(k, val lua.LValue) {
		if err != nil {
			return
		}
		switch k {
		case lua.LString("globals"):
			err = fieldMap(val, false, d)
		case lua.LString("read_globals"):
			err = fieldMap(val, true, d)
		default:
			err = fmt.Errorf("unknown field %s (a std has globals and read_globals)", luaShow(k))
		}
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

const maxFieldDepth = 16

// fieldMap reads luacheck's "array of strings or field definition map" and
// flattens it into lint's names: "name" (any field) or "name.field".
func fieldMap(v lua.LValue, readOnly bool, d *stdDef) error {
	t, ok := v.(*lua.LTable)
	if !ok {
		return fmt.Errorf("table expected, got %s", luaShow(v))
	}
	var err error
	t.ForEach(func(k, val lua.LValue) {
		if err != nil {
			return
		}
		switch key := k.(type) {
		case lua.LNumber:
			s, ok := val.(lua.LString)
			if !ok {
				err = fmt.Errorf("item %s: string expected, got %s", key.String(), luaShow(val))
				return
			}
			add(d, string(s), readOnly)
		case lua.LString:
			err = fieldDef(string(key), val, readOnly, d, 0)
		default:
			err = fmt.Errorf("key %s: string or array index expected", luaShow(k))
		}
	})
	return err
}

func add(d *stdDef, name string, readOnly bool) {
	if readOnly {
		d.readGlobals = append(d.readGlobals, name)
	} else {
		d.globals = append(d.globals, name)
	}
}

// fieldDef reads {fields = {...}, read_only = bool, other_fields = bool}.
func fieldDef(name string, v lua.LValue, readOnly bool, d *stdDef, depth int) error {
	t, ok := v.(*lua.LTable)
	if !ok {
		return fmt.Errorf("definition of %s: table expected, got %s", name, luaShow(v))
	}
	if depth > maxFieldDepth {
		return fmt.Errorf("definition of %s: nested more than %d levels", name, maxFieldDepth)
	}
	other := false
	var fields *lua.LTable
	var err error
	t.ForEach(func(k, val lua.LValue) {
		if err != nil {
			return
		}
		switch k {
		case lua.LString("read_only"), lua.LString("deep_read_only"):
			b, ok := val.(lua.LBool)
			if !ok {
				err = fmt.Errorf("definition of %s: %s must be a boolean, got %s", name, k.String(), luaShow(val))
				return
			}
			if k == lua.LString("read_only") || bool(b) {
				readOnly = bool(b)
			}
		case lua.LString("other_fields"):
			b, ok := val.(lua.LBool)
			if !ok {
				err = fmt.Errorf("definition of %s: other_fields must be a boolean, got %s", name, luaShow(val))
				return
			}
			other = bool(b)
		case lua.LString("fields"):
			ft, ok := val.(*lua.LTable)
			if !ok {
				err = fmt.Errorf("definition of %s: fields must be a table, got %s", name, luaShow(val))
				return
			}
			fields = ft
		default:
			err = fmt.Errorf("definition of %s: unknown key %s (use fields, read_only, other_fields)", name, luaShow(k))
		}
	})
	if err != nil {
		return err
	}
	n := 0
	if fields != nil {
		fields.ForEach(func(k, val lua.LValue) {
			if err != nil {
				return
			}
			n++
			switch key := k.(type) {
			case lua.LNumber:
				s, ok := val.(lua.LString)
				if !ok {
					err = fmt.Errorf("fields of %s: item %s must be a string, got %s", name, key.String(), luaShow(val))
					return
				}
				add(d, name+"."+string(s), readOnly)
			case lua.LString:
				err = fieldDef(name+"."+string(key), val, readOnly, d, depth+1)
			default:
				err = fmt.Errorf("fields of %s: key %s must be a string", name, luaShow(k))
			}
		})
	}
	if err != nil {
		return err
	}
	if n == 0 || other {
		add(d, name, readOnly)
	}
	return nil
}

// stringKeys lists a table's string keys in order, so a config is read
// the same way every time.
func stringKeys(t *lua.LTable) []string {
	var keys []string
	t.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			keys = append(keys, string(s))
		}
	})
	sort.Strings(keys)
	return keys
}
