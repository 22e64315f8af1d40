package main

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/redlua/redlua/internal/luasyntax"
)

// The sandbox a .luacheckrc runs in: Lua's base, table, string and math
// libraries without I/O or code loading, bounded work (config_budget.go)
// and bounded strings (config_strings.go). Its global assignments are
// collected with their lines for the conversion (config_convert.go).

// forbidden globals: luacheck runs configs with its full environment; this
// driver does not, so a config cannot read files, run programs or load code.
var forbidden = map[string]bool{
	"os": true, "io": true, "require": true, "dofile": true, "loadfile": true, "load": true,
	"loadstring": true, "module": true, "package": true, "debug": true, "getfenv": true,
	"setfenv": true, "newproxy": true, "collectgarbage": true, "_printregs": true,
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

// evalConfig runs a config and returns what it assigned.
func evalConfig(path string, src []byte) (*evaluated, error) {
	// The syntax is judged by redlua's strict Lua 5.1 parser, whose error
	// carries its position, before gopher-lua compiles the chunk.
	if _, synErr := luasyntax.Parse(path, src); synErr != nil {
		return nil, &configError{file: path, line: synErr.Pos.Line, msg: "syntax error: " + synErr.Msg}
	}
	L := newConfigState()
	defer L.Close()
	ev := &evaluated{vals: L.NewTable(), lines: map[string]int{}, fileLine: map[string]int{}}
	fn, err := L.Load(strings.NewReader(string(src)), path)
	if err != nil {
		// luasyntax accepted it; gopher-lua's parser is the only judge left.
		return nil, &configError{file: path, msg: "syntax error: " + firstLine(err.Error())}
	}
	fn.Env = ev.environment(L)
	ctx := newBudgetCtx()
	L.SetContext(ctx)
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return nil, runError(path, err, ctx)
	}
	L.RemoveContext()
	ev.takeReturned(L.Get(-1))
	return ev, nil
}

// newConfigState opens the libraries a config may use, without what could
// read files, run programs or load code.
func newConfigState() *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: rcMaxCallDepth, RegistrySize: 4096, RegistryMaxSize: 64 * 1024})
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
	return L
}

// currentLine is the line of the config running in L.
func currentLine(L *lua.LState) int {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("l", dbg, lua.LNil); err == nil {
			return dbg.CurrentLine
		}
	}
	return 0
}

// environment is the config's _ENV: reads fall back to the sandbox's
// globals, writes are collected in ev with their lines, and files and
// stds are tables of their own.
func (ev *evaluated) environment(L *lua.LState) *lua.LTable {
	filesMeta := ev.filesMetatable(L)
	files := L.NewTable()
	L.SetMetatable(files, filesMeta)
	ev.files, ev.stds = files, L.NewTable()
	g := L.G.Global
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
			ev.lines[string(s)] = currentLine(L)
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
	env := L.NewTable()
	L.SetMetatable(env, envMeta)
	return env
}

// filesMetatable makes files autovivify, as in luacheck (files["src"].ignore
// = {...} works), and records the line of each entry.
func (ev *evaluated) filesMetatable(L *lua.LState) *lua.LTable {
	meta := L.NewTable()
	meta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		t, k := L.CheckTable(1), L.Get(2)
		v := L.NewTable()
		t.RawSet(k, v)
		if s, ok := k.(lua.LString); ok {
			if _, seen := ev.fileLine[string(s)]; !seen {
				ev.fileLine[string(s)] = currentLine(L)
			}
		}
		L.Push(v)
		return 1
	}))
	meta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		t, k, v := L.CheckTable(1), L.Get(2), L.Get(3)
		if s, ok := k.(lua.LString); ok {
			ev.fileLine[string(s)] = currentLine(L)
		}
		t.RawSet(k, v)
		return 0
	}))
	return meta
}

var luaRunLine = regexp.MustCompile(`^[^:\n]*:(\d+): `)

// runError turns a failed run into a configError: the budget's own
// message when a budget stopped it, else Lua's, with its line.
func runError(path string, err error, ctx *budgetCtx) error {
	msg := err.Error()
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		msg = ae.Object.String()
	}
	ce := &configError{file: path, msg: "error while running the config: " + firstLine(msg)}
	// A runtime error is a Lua string "path:line: message", the only
	// shape gopher-lua gives it; there is no typed position to read.
	rest := strings.TrimPrefix(firstLine(msg), path)
	if m := luaRunLine.FindStringSubmatch(rest); m != nil && rest != firstLine(msg) {
		ce.line, _ = strconv.Atoi(m[1])
		ce.msg = "error while running the config: " + strings.TrimPrefix(rest, m[0])
	}
	if ctx.err != nil {
		ce.msg = ctx.err.Error()
	}
	return ce
}

// takeReturned reads the table a config may return instead of setting
// globals.
func (ev *evaluated) takeReturned(ret lua.LValue) {
	t, ok := ret.(*lua.LTable)
	if !ok {
		return
	}
	t.ForEach(func(k, v lua.LValue) {
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
