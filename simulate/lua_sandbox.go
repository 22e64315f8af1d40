package simulate

import (
	stdmath "math"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

	"github.com/redlua/redlua/internal/cmdtable"
	"github.com/redlua/redlua/simulate/internal/lualib"
)

// sandbox is one Lua interpreter set up as Redis 7.0 sets up its scripting
// engine. Scripts run one at a time (under Server.mu), so a Server keeps one
// sandbox and reuses it: only KEYS, ARGV and the per-run state change.
type sandbox struct {
	srv *Server
	L   *lua.LState

	// globals is the real global table; env is the read-only proxy that
	// scripts see as their environment and as _G.
	globals *lua.LTable
	env     *lua.LTable
	// real maps each read-only proxy to the table behind it, so rawget,
	// next and pairs see through it as they would through Redis's
	// read-only tables.
	real map[*lua.LTable]*lua.LTable
	// hidden are proxies whose metatable getmetatable must not reveal.
	hidden map[*lua.LTable]bool

	errHandler *lua.LFunction
	cc         CallContext
	run        *runState
	runBuf     runState
	resp       int
	cmdCache   map[string]*cmdtable.Command
	publishFn  func(channel, message string, sharded bool) int64
	// chunkNames maps loadstring chunks' display names to their names.
	chunkNames map[string]string
}

// redisGlobals is the global allow-list of Redis 7.0's scripting engine
// (every other name reads as a nonexistent global). The libraries are
// added on top.
var redisGlobals = []string{
	"assert", "collectgarbage", "error", "gcinfo", "getmetatable", "ipairs",
	"load", "loadstring", "next", "pairs", "pcall", "rawequal", "rawget",
	"rawset", "select", "setmetatable", "tonumber", "tostring", "type",
	"unpack", "xpcall", "_VERSION",
}

func newSandbox(srv *Server) *sandbox {
	L := lua.NewState(lua.Options{
		SkipOpenLibs: true,
		// Lua's limits on nesting are the VM's (growCI: 16,384 calls on a
		// fresh state, 20,000 after its first overflow); the frame stack
		// only needs room for the error handler of an overflow beyond them.
		CallStackSize:       2*lua.LuaMaxCalls + 16,
		MinimizeStackMemory: true,
		// Lua's data stack grows with the calls: up to 250 registers per
		// Lua function and LuaMaxCStack values per Go function.
		RegistrySize:     lua.RegistrySize,
		RegistryMaxSize:  maxLuaStack,
		RegistryGrowStep: lua.RegistrySize,
	})
	sb := &sandbox{
		srv:        srv,
		L:          L,
		real:       map[*lua.LTable]*lua.LTable{},
		hidden:     map[*lua.LTable]bool{},
		resp:       2,
		cmdCache:   map[string]*cmdtable.Command{},
		chunkNames: map[string]string{},
	}
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	openExtraLibs(L)

	g := L.G.Global
	sb.globals = L.NewTable()
	for _, name := range redisGlobals {
		sb.globals.RawSetString(name, g.RawGetString(name))
	}
	sb.globals.RawSetString("_VERSION", lua.LString("Lua 5.1"))
	sb.overrideBase()
	sb.installProfileGlobals(g)
	sb.installLibraries(g)
	sb.installRedis()

	sb.publishFn = sb.publish
	sb.errHandler = L.NewFunction(sb.handleError)
	sb.globals.RawSetString("__redis__err__handler", sb.errHandler)
	sb.globals.RawSetString("KEYS", L.NewTable())
	sb.globals.RawSetString("ARGV", L.NewTable())

	// Reading a name that is not there fails as in Redis; the proxy
	// refuses every write, including new globals.
	gmt := L.NewTable()
	gmt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errNonexistentGlobal, L.ToString(2))
		return 0
	}))
	L.SetMetatable(sb.globals, gmt)
	sb.env = sb.protect(sb.globals, false)
	sb.globals.RawSetString("_G", sb.env)
	L.Env = sb.env
	return sb
}

// openExtraLibs opens cjson, bit, struct and cmsgpack; installLibraries
// then puts each behind a read-only proxy, as Redis 7 makes them read-only.
func openExtraLibs(L *lua.LState) {
	lualib.OpenCJSON(L)
	lualib.OpenBit(L)
	lualib.OpenStruct(L)
	lualib.OpenCMsgpack(L)
}

// extraLibs are the library globals Redis 7.0 adds beyond Lua's own.
var extraLibs = []string{"cjson", "bit", "struct", "cmsgpack"}

// installLibraries copies the allowed libraries into the sandbox's globals,
// each behind a read-only proxy, and trims them to Redis's function lists.
func (sb *sandbox) installLibraries(g *lua.LTable) {
	L := sb.L
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("__index", lua.LNil) // gopher-lua uses the library as the string metatable
	str.RawSetString("format", L.NewFunction(stringFormat))
	tbl := g.RawGetString("table").(*lua.LTable)
	tbl.RawSetString("foreach", L.NewFunction(tableForeach))
	tbl.RawSetString("foreachi", L.NewFunction(tableForeachi))
	tbl.RawSetString("setn", L.NewFunction(tableSetn))
	tbl.RawSetString("concat", L.NewFunction(tableConcat))
	math := g.RawGetString("math").(*lua.LTable)
	math.RawSetString("huge", lua.LNumber(stdmath.Inf(1))) // gopher-lua has MaxFloat64
	math.RawSetString("random", L.NewFunction(sb.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(sb.mathRandomSeed))

	// Lua's own libraries in the order luaL_register sets them (lstrlib.c,
	// ltablib.c, lmathlib.c, lbaselib.c), which decides what pairs shows.
	g.RawSetString("string", lualib.Reorder(L, str, 15, "byte", "char", "dump", "find", "format", "gfind", "gmatch",
		"gsub", "len", "lower", "match", "rep", "reverse", "sub", "upper"))
	g.RawSetString("table", lualib.Reorder(L, tbl, 9, "concat", "foreach", "foreachi", "getn", "maxn", "insert",
		"remove", "setn", "sort"))
	g.RawSetString("math", lualib.Reorder(L, math, 28, "abs", "acos", "asin", "atan2", "atan", "ceil", "cosh", "cos",
		"deg", "exp", "floor", "fmod", "frexp", "ldexp", "log10", "log", "max", "min", "modf", "pow", "rad", "random",
		"randomseed", "sinh", "sin", "sqrt", "tanh", "tan", "pi", "huge", "mod"))
	if co, ok := g.RawGetString("coroutine").(*lua.LTable); ok {
		g.RawSetString("coroutine", lualib.Reorder(L, co, 6, "create", "resume", "running", "status", "wrap", "yield"))
	}
	for _, name := range append([]string{"string", "table", "math", "coroutine"}, extraLibs...) {
		if lib, ok := g.RawGetString(name).(*lua.LTable); ok {
			sb.globals.RawSetString(name, sb.protect(lib, true))
		}
	}
	// Strings index the (protected) string library, and their metatable
	// itself cannot be changed.
	smt := L.NewTable()
	smt.RawSetString("__index", sb.globals.RawGetString("string"))
	view := L.NewTable()
	view.RawSetString("__index", sb.globals.RawGetString("string"))
	smt.RawSetString("__metatable", sb.protect(view, false))
	L.SetMetatable(lua.LString(""), smt)
}

// protect returns a read-only proxy for t: reads go through to t, writes
// fail with Redis's text. hide makes getmetatable return nil for the proxy
// (Redis's library tables have no metatable).
func (sb *sandbox) protect(t *lua.LTable, hide bool) *lua.LTable {
	L := sb.L
	proxy := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	}))
	view := L.NewTable()
	sb.real[view] = view
	mt.RawSetString("__metatable", view)
	L.SetMetatable(proxy, mt)
	sb.real[proxy] = t
	if hide {
		sb.hidden[proxy] = true
	}
	return proxy
}

// readonly reports whether t is one of the sandbox's protected tables.
func (sb *sandbox) readonly(t *lua.LTable) bool {
	_, ok := sb.real[t]
	return ok
}

// unproxy returns the table behind a proxy, or v itself.
func (sb *sandbox) unproxy(v lua.LValue) lua.LValue {
	if t, ok := v.(*lua.LTable); ok {
		if r, ok := sb.real[t]; ok {
			return r
		}
	}
	return v
}

// overrideBase replaces the base functions whose gopher-lua behaviour
// differs from Lua 5.1 inside Redis, or that could reach past the proxies.
func (sb *sandbox) overrideBase() {
	L, g := sb.L, sb.globals
	origSetMT := g.RawGetString("setmetatable").(*lua.LFunction).GFunction
	origGetMT := g.RawGetString("getmetatable").(*lua.LFunction).GFunction
	set := func(name string, fn lua.LGFunction) { g.RawSetString(name, L.NewFunction(fn)) }
	set("tostring", luaToString)
	set("tonumber", luaToNumber)
	set("error", luaErrorFn)
	// The collector is Go's: report a plausible Lua heap size (in KB), as
	// scripts only use these numbers for logging.
	set("gcinfo", func(L *lua.LState) int { L.Push(lua.LNumber(20)); return 1 })
	set("collectgarbage", func(L *lua.LState) int {
		switch L.OptString(1, "collect") {
		case "count":
			L.Push(lua.LNumber(20))
		case "step":
			L.Push(lua.LFalse)
		case "collect":
			// A full collection sweeps removed keys out of reachable
			// tables, which changes where they land when set again.
			L.MarkDeadKeys()
			L.Push(lua.LNumber(0))
		default:
			L.Push(lua.LNumber(0))
		}
		return 1
	})
	set("pcall", luaPCall)
	set("unpack", luaUnpack)
	set("loadstring", sb.loadString)
	set("load", sb.load)
	set("rawset", func(L *lua.LState) int {
		t := L.CheckTable(1)
		if sb.readonly(t) {
			L.Error(lua.LString(errReadonly), 0)
		}
		key := L.CheckAny(2)
		switch k := key.(type) {
		case *lua.LNilType:
			L.Error(lua.LString("table index is nil"), 0) // raised inside C: no position
		case lua.LNumber:
			if k != k {
				L.Error(lua.LString("table index is NaN"), 0)
			}
		}
		t.RawSet(key, L.CheckAny(3))
		L.SetTop(1)
		return 1
	})
	set("setmetatable", func(L *lua.LState) int {
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			L.TypeError(1, lua.LTTable) // gopher-lua also accepts other types
		}
		if sb.readonly(t) {
			L.Error(lua.LString(errReadonly), 0)
		}
		return origSetMT(L)
	})
	set("getmetatable", func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && sb.hidden[t] {
			L.Push(lua.LNil)
			return 1
		}
		return origGetMT(L)
	})
	set("rawget", func(L *lua.LState) int {
		t := L.CheckTable(1)
		L.Push(sb.unproxy(t).(*lua.LTable).RawGet(L.CheckAny(2)))
		return 1
	})
	set("next", func(L *lua.LState) int {
		t := sb.unproxy(L.CheckTable(1)).(*lua.LTable)
		k, v, found := t.NextKey(L.Get(2))
		if !found {
			L.Error(lua.LString("invalid key to 'next'"), 0) // raised by C: no position
		}
		if t == sb.globals && k == lua.LString(concatFn) {
			// The helper behind ".." is not one of Redis's globals.
			k, v = t.Next(k)
		}
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	})
	next := g.RawGetString("next")
	set("pairs", func(L *lua.LState) int {
		t := L.CheckTable(1)
		L.Push(next)
		L.Push(sb.unproxy(t))
		L.Push(lua.LNil)
		return 3
	})
}
