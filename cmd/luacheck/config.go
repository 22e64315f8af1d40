package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// rcConfig is a loaded .luacheckrc.
type rcConfig struct {
	path   string // as found, for messages
	anchor string // absolute directory its globs are relative to
	top    *optionSet
	// overrides are its files["glob"] entries, globs made absolute.
	overrides []override
	stds      map[string]*stdDef
	// exclude and include are exclude_files/include_files, absolute.
	exclude, include []string
	// Report options a config may set; the command line wins.
	quiet                *int
	color, codes, ranges *bool
	formatter            *string
}

type override struct {
	glob string
	opts *optionSet
}

// overridesFor returns the files["glob"] layers matching a file, least
// specific first, as luacheck applies them.
func (c *rcConfig) overridesFor(file string) []*optionSet {
	abs := absPath(file)
	var m []override
	for _, o := range c.overrides {
		if globMatch(o.glob, abs) {
			m = append(m, o)
		}
	}
	sortOverrides(m)
	out := make([]*optionSet, len(m))
	for i, o := range m {
		out[i] = o.opts
	}
	return out
}

// configError is a problem in a config file; the CLI exits 4 with it.
type configError struct {
	file string
	line int // 0 when unknown
	msg  string
}

func (e *configError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

// Budgets for evaluating a config: it is code from the repository, run in
// CI, so it gets no I/O and a bounded amount of work.
const (
	rcMaxInstructions = 2_000_000
	rcMaxDuration     = 10 * time.Second // a backstop: the instruction budget stops loops first
	rcMaxAlloc        = 64 << 20         // bytes allocated while it runs
	rcMaxString       = 1 << 20          // longest string rep/concat/gsub/format may build
	rcMaxCallDepth    = 200
)

// budgetCtx is the context gopher-lua consults before every instruction:
// Done() counts instructions and samples the heap, and closes once the
// config has used its instructions, time or allocation budget.
type budgetCtx struct {
	context.Context
	done     chan struct{}
	closed   atomic.Bool
	n        int64
	deadline time.Time
	alloc0   uint64
	sample   []metrics.Sample
	err      error
}

func newBudgetCtx() *budgetCtx {
	c := &budgetCtx{Context: context.Background(), done: make(chan struct{}), deadline: time.Now().Add(rcMaxDuration)}
	c.sample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	c.alloc0 = c.allocated()
	return c
}

func (c *budgetCtx) allocated() uint64 {
	metrics.Read(c.sample)
	if c.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return c.sample[0].Value.Uint64()
}

func (c *budgetCtx) stop(err error) {
	if c.closed.CompareAndSwap(false, true) {
		c.err = err
		close(c.done)
	}
}

func (c *budgetCtx) Done() <-chan struct{} {
	if c.closed.Load() {
		return c.done
	}
	c.n++
	switch {
	case c.n > rcMaxInstructions:
		c.stop(fmt.Errorf("the config ran more than %d Lua instructions (an endless loop?); a .luacheckrc should only assign options", rcMaxInstructions))
	case c.n%4 == 0 && c.allocated()-c.alloc0 > rcMaxAlloc:
		c.stop(fmt.Errorf("the config allocated more than %d MB; a .luacheckrc should only assign options", rcMaxAlloc>>20))
	case c.n%1024 == 0 && time.Now().After(c.deadline):
		c.stop(fmt.Errorf("the config ran longer than %v; a .luacheckrc should only assign options", rcMaxDuration))
	}
	return c.done
}

func (c *budgetCtx) Err() error {
	if c.closed.Load() {
		return c.err
	}
	return nil
}

// forbidden globals: luacheck runs configs with its full environment; this
// driver does not, so a config cannot read files, run programs or load code.
var forbidden = map[string]bool{
	"os": true, "io": true, "require": true, "dofile": true, "loadfile": true, "load": true,
	"loadstring": true, "module": true, "package": true, "debug": true, "getfenv": true,
	"setfenv": true, "newproxy": true, "collectgarbage": true, "_printregs": true,
}

// loadConfigFile reads and evaluates a config file.
func loadConfigFile(path, anchor string) (*rcConfig, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &configError{file: path, msg: fmt.Sprintf("couldn't read the config: %v", err)}
	}
	return loadConfig(path, src, anchor)
}

// loadConfig evaluates a .luacheckrc in a sandbox and converts its options.
// It never panics and returns in bounded time whatever src holds.
func loadConfig(path string, src []byte, anchor string) (cfg *rcConfig, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, &configError{file: path, msg: fmt.Sprintf("evaluating the config failed: %v", r)}
		}
	}()
	ev, err := evalConfig(path, src)
	if err != nil {
		return nil, err
	}
	return ev.convert(path, anchor)
}

// evaluated is what a config's chunk left behind: its global assignments
// (and the table it returned), with the line of each assignment.
type evaluated struct {
	vals     *lua.LTable
	lines    map[string]int // top-level option -> line
	files    lua.LValue
	fileLine map[string]int // files[glob] -> line of its first assignment
	stds     lua.LValue
}

var luaErrLine = regexp.MustCompile(`line:(\d+)\(column:\d+\)`)
var luaRunLine = regexp.MustCompile(`^[^:\n]*:(\d+): `)

func evalConfig(path string, src []byte) (*evaluated, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: rcMaxCallDepth, RegistrySize: 4096, RegistryMaxSize: 64 * 1024})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	for name := range forbidden {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	limitStringLib(L)

	ev := &evaluated{vals: L.NewTable(), lines: map[string]int{}, fileLine: map[string]int{}}
	line := func() int {
		if dbg, ok := L.GetStack(1); ok {
			if _, err := L.GetInfo("l", dbg, lua.LNil); err == nil {
				return dbg.CurrentLine
			}
		}
		return 0
	}
	// files autovivifies, as in luacheck: files["src"].ignore = {...} works.
	filesMeta := L.NewTable()
	filesMeta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		t, k := L.CheckTable(1), L.Get(2)
		v := L.NewTable()
		t.RawSet(k, v)
		if s, ok := k.(lua.LString); ok {
			if _, seen := ev.fileLine[string(s)]; !seen {
				ev.fileLine[string(s)] = line()
			}
		}
		L.Push(v)
		return 1
	}))
	filesMeta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		t, k, v := L.CheckTable(1), L.Get(2), L.Get(3)
		if s, ok := k.(lua.LString); ok {
			ev.fileLine[string(s)] = line()
		}
		t.RawSet(k, v)
		return 0
	}))
	files := L.NewTable()
	L.SetMetatable(files, filesMeta)
	ev.files = files
	stds := L.NewTable()
	ev.stds = stds

	env := L.NewTable()
	envMeta := L.NewTable()
	envMeta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		if s, ok := k.(lua.LString); ok {
			switch name := string(s); {
			case name == "files":
				L.Push(ev.files)
				return 1
			case name == "stds":
				L.Push(ev.stds)
				return 1
			case forbidden[name]:
				L.RaiseError("%s is not available: redlua's luacheck evaluates .luacheckrc in a sandbox without os, io, require, load, loadstring, dofile or debug; set options with plain values", name)
			}
		}
		if v := ev.vals.RawGet(k); v != lua.LNil {
			L.Push(v)
			return 1
		}
		L.Push(g.RawGet(k))
		return 1
	}))
	envMeta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		k, v := L.Get(2), L.Get(3)
		if s, ok := k.(lua.LString); ok {
			ev.lines[string(s)] = line()
			switch string(s) {
			case "files":
				if t, ok := v.(*lua.LTable); ok {
					L.SetMetatable(t, filesMeta)
				}
				ev.files = v
				return 0
			case "stds":
				ev.stds = v
				return 0
			}
		}
		ev.vals.RawSet(k, v)
		return 0
	}))
	L.SetMetatable(env, envMeta)

	fn, err := L.Load(strings.NewReader(string(src)), path)
	if err != nil {
		ce := &configError{file: path, msg: "syntax error: " + firstLine(err.Error())}
		if m := luaErrLine.FindStringSubmatch(err.Error()); m != nil {
			ce.line, _ = strconv.Atoi(m[1])
			ce.msg = "syntax error: " + strings.TrimSpace(luaErrLine.ReplaceAllString(strings.TrimPrefix(firstLine(err.Error()), path), ""))
		} else if strings.Contains(err.Error(), " at EOF:") {
			ce.line = strings.Count(string(src), "\n") + 1
			ce.msg = "syntax error: unexpected end of file (an unclosed table, string or block?)"
		}
		return nil, ce
	}
	fn.Env = env
	ctx := newBudgetCtx()
	L.SetContext(ctx)
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		msg := err.Error()
		var ae *lua.ApiError
		if errors.As(err, &ae) {
			msg = ae.Object.String()
		}
		ce := &configError{file: path, msg: "error while running the config: " + firstLine(msg)}
		rest := strings.TrimPrefix(firstLine(msg), path)
		if m := luaRunLine.FindStringSubmatch(rest); m != nil && rest != firstLine(msg) {
			ce.line, _ = strconv.Atoi(m[1])
			ce.msg = "error while running the config: " + strings.TrimPrefix(rest, m[0])
		}
		if ctx.err != nil {
			ce.msg = ctx.err.Error()
		}
		return nil, ce
	}
	L.RemoveContext()
	// A config may return a table of options instead of setting globals.
	if ret, ok := L.Get(-1).(*lua.LTable); ok {
		ret.ForEach(func(k, v lua.LValue) {
			switch k {
			case lua.LString("files"):
				ev.files = v
			case lua.LString("stds"):
				ev.stds = v
			default:
				ev.vals.RawSet(k, v)
			}
			if s, ok := k.(lua.LString); ok {
				delete(ev.lines, string(s))
			}
		})
	}
	return ev, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// limitStringLib replaces the string and table functions that can build a
// huge string in one call with versions that refuse past rcMaxString.
func limitStringLib(L *lua.LState) {
	strlib, ok := L.GetGlobal("string").(*lua.LTable)
	if !ok {
		return
	}
	strlib.RawSetString("dump", lua.LNil)
	tooLong := func(L *lua.LState, fn string) int {
		L.RaiseError("%s would build a string longer than %d bytes, too long for a .luacheckrc", fn, rcMaxString)
		return 0
	}
	origRep := strlib.RawGetString("rep").(*lua.LFunction).GFunction
	strlib.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s, n := L.CheckString(1), L.CheckInt(2)
		if n > 0 && (n > rcMaxString || len(s)*n > rcMaxString) {
			return tooLong(L, "string.rep")
		}
		return origRep(L)
	}))
	origGsub := strlib.RawGetString("gsub").(*lua.LFunction).GFunction
	strlib.RawSetString("gsub", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		repl := L.Get(3)
		var most int
		switch r := repl.(type) {
		case lua.LString:
			most = len(r)
		case lua.LNumber:
			most = len(r.String())
		default:
			// A function or table may return any string: bound the input
			// instead, the replacements are checked as they come back.
			most = rcMaxString / (len(s) + 1)
			if tb, ok := r.(*lua.LTable); ok {
				tb.ForEach(func(_, v lua.LValue) {
					if sv, ok := v.(lua.LString); ok && len(sv) > most {
						most = rcMaxString // force the refusal below
					}
				})
			}
			if fnv, ok := r.(*lua.LFunction); ok {
				limit := most
				L.Replace(3, L.NewFunction(func(L *lua.LState) int {
					n := L.GetTop()
					L.Push(fnv)
					for i := 1; i <= n; i++ {
						L.Push(L.Get(i))
					}
					L.Call(n, 1)
					if sv, ok := L.Get(-1).(lua.LString); ok && len(sv) > limit {
						return tooLong(L, "string.gsub")
					}
					return 1
				}))
			}
		}
		if (len(s)+1)*(most+1) > rcMaxString {
			return tooLong(L, "string.gsub")
		}
		return origGsub(L)
	}))
	origFormat := strlib.RawGetString("format").(*lua.LFunction).GFunction
	strlib.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		f := L.CheckString(1)
		total := len(f)
		for i := 2; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(lua.LString); ok {
				total += len(s)
			}
			total += 32
		}
		if total > rcMaxString || widthTooBig(f) {
			return tooLong(L, "string.format")
		}
		return origFormat(L)
	}))
	if tablib, ok := L.GetGlobal("table").(*lua.LTable); ok {
		origConcat := tablib.RawGetString("concat").(*lua.LFunction).GFunction
		tablib.RawSetString("concat", L.NewFunction(func(L *lua.LState) int {
			t := L.CheckTable(1)
			sep := L.OptString(2, "")
			total := 0
			t.ForEach(func(_, v lua.LValue) {
				total += len(sep) + 32
				if s, ok := v.(lua.LString); ok {
					total += len(s)
				}
			})
			if total > rcMaxString {
				return tooLong(L, "table.concat")
			}
			return origConcat(L)
		}))
	}
}

// widthTooBig reports a format directive with a width or precision of
// three digits or more, which C's Lua rejects and Go would honour.
func widthTooBig(f string) bool {
	digits := 0
	in := false
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '%':
			in = !in || digits > 0
			digits = 0
		case in && c >= '0' && c <= '9':
			digits++
			if digits >= 3 {
				return true
			}
		case in && (c == '.' || c == '-' || c == '+' || c == ' ' || c == '#'):
			digits = 0
		default:
			in = false
			digits = 0
		}
	}
	return false
}

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
	if ev.stds != lua.LNil {
		t, ok := ev.stds.(*lua.LTable)
		if !ok {
			return nil, fail(ev.lines["stds"], "invalid option 'stds': table expected, got %s; write stds.name = {globals = {...}, read_globals = {...}}", ev.stds.Type())
		}
		for _, n := range stringKeys(t) {
			d, err := stdTable(t.RawGetString(n))
			if err != nil {
				return nil, fail(ev.lines["stds"], "invalid custom std '%s': %v", n, err)
			}
			c.stds[n] = d
		}
	}
	top, err := convertOptions(ev.vals, c.stds, func(opt string) int { return ev.lines[opt] })
	if err != nil {
		return nil, err.withFile(path)
	}
	c.top = top
	// Top-level-only options.
	get := func(name string) lua.LValue { return ev.vals.RawGetString(name) }
	if v := get("quiet"); v != lua.LNil {
		n, ok := v.(lua.LNumber)
		if !ok || float64(n) != float64(int(n)) || n < 0 || n > 3 {
			return nil, fail(ev.lines["quiet"], "invalid value of option 'quiet': integer in range 0..3 expected, got %s", luaShow(v))
		}
		q := int(n)
		c.quiet = &q
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"color", &c.color}, {"codes", &c.codes}, {"ranges", &c.ranges}} {
		if v := get(b.name); v != lua.LNil {
			bv, ok := v.(lua.LBool)
			if !ok {
				return nil, fail(ev.lines[b.name], "invalid value of option '%s': boolean expected, got %s; write %s = true or false", b.name, luaShow(v), b.name)
			}
			x := bool(bv)
			*b.dst = &x
		}
	}
	if v := get("formatter"); v != lua.LNil {
		s, ok := v.(lua.LString)
		if !ok {
			return nil, fail(ev.lines["formatter"], "invalid value of option 'formatter': string expected, got %s (custom formatter functions are not supported; use default, plain, JSON, sarif, github or JUnit)", luaShow(v))
		}
		f := string(s)
		c.formatter = &f
	}
	if v := get("cache"); v != lua.LNil {
		switch v.(type) {
		case lua.LString, lua.LBool:
		default:
			return nil, fail(ev.lines["cache"], "invalid value of option 'cache': string or boolean expected, got %s", luaShow(v))
		}
	}
	if v := get("jobs"); v != lua.LNil {
		n, ok := v.(lua.LNumber)
		if !ok || n < 1 || float64(n) != float64(int(n)) {
			return nil, fail(ev.lines["jobs"], "invalid value of option 'jobs': positive integer expected, got %s", luaShow(v))
		}
	}
	for _, o := range []struct {
		name string
		dst  *[]string
	}{{"exclude_files", &c.exclude}, {"include_files", &c.include}} {
		if v := get(o.name); v != lua.LNil {
			globs, err := stringArray(v)
			if err != nil {
				return nil, fail(ev.lines[o.name], "invalid value of option '%s': %v; write %s = {\"glob\", ...}", o.name, err, o.name)
			}
			for _, g := range globs {
				*o.dst = append(*o.dst, joinAnchor(anchor, g))
			}
		}
	}
	if ev.files != lua.LNil {
		ft, ok := ev.files.(*lua.LTable)
		if !ok {
			return nil, fail(ev.lines["files"], "invalid option 'files': table expected, got %s; write files[\"glob\"] = {option = value}", ev.files.Type())
		}
		for _, g := range stringKeys(ft) {
			v := ft.RawGetString(g)
			t, ok := v.(*lua.LTable)
			if !ok {
				return nil, fail(max(ev.fileLine[g], ev.lines["files"]), "invalid options for path '%s': option table expected, got %s", g, luaShow(v))
			}
			line := ev.fileLine[g]
			if line == 0 {
				line = ev.lines["files"]
			}
			opts, err := convertOptions(t, c.stds, func(string) int { return line })
			if err != nil {
				err.msg = fmt.Sprintf("invalid options for path '%s': %s", g, err.msg)
				return nil, err.withFile(path)
			}
			c.overrides = append(c.overrides, override{glob: joinAnchor(anchor, g), opts: opts})
		}
	}
	return c, nil
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
		switch name {
		case "std":
			switch sv := v.(type) {
			case lua.LString:
				if _, _, err := splitStd(string(sv), stds); err != nil {
					return nil, bad("%v", err)
				}
				o.std = string(sv)
			case *lua.LTable:
				d, err := stdTable(sv)
				if err != nil {
					return nil, bad("%v", err)
				}
				o.stdTable = d
			default:
				return nil, bad("string or table expected, got %s; write std = \"redis\"", luaShow(v))
			}
		case "globals", "read_globals", "new_globals", "new_read_globals":
			var d stdDef
			if err := fieldMap(v, name == "read_globals" || name == "new_read_globals", &d); err != nil {
				return nil, bad("%v; write %s = {\"name\", \"name.field\", ...}", err, name)
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
		case "ignore", "enable", "only", "not_globals", "operators":
			ps, err := stringArray(v)
			if err != nil {
				return nil, bad("%v; write %s = {\"211\", \"_.*\", ...}", err, name)
			}
			if name != "not_globals" && name != "operators" {
				if err := validatePatterns(name, ps); err != nil {
					return nil, &optError{line: lineOf(name), msg: err.Error()}
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
		case "max_line_length", "max_code_line_length", "max_string_line_length", "max_comment_line_length", "max_cyclomatic_complexity":
			switch nv := v.(type) {
			case lua.LBool:
				if bool(nv) {
					return nil, bad("number or false expected, got true")
				}
				if name == "max_line_length" {
					off := -1
					o.maxLineLength = &off
				}
			case lua.LNumber:
				if nv < 1 || float64(nv) != float64(int(nv)) || nv > 1<<30 {
					return nil, bad("a positive whole number or false expected, got %s", luaShow(v))
				}
				if name == "max_line_length" {
					n := int(nv)
					o.maxLineLength = &n
				}
			default:
				return nil, bad("number or false expected, got %s", luaShow(v))
			}
		default: // boolean options
			bv, ok := v.(lua.LBool)
			if !ok {
				return nil, bad("boolean expected, got %s; write %s = false", luaShow(v), name)
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
		}
	}
	return o, nil
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

// findConfig looks for name in dir and its parents, as luacheck does.
func findConfig(dir, name string) (string, bool) {
	for {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// defaultConfigPath is luacheck's global config location on Unix.
func defaultConfigPath() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "luacheck", ".luacheckrc")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "luacheck", ".luacheckrc")
	}
	return ""
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
