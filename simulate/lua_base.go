package simulate

import (
	"strings"

	"github.com/redlua/redlua/simulate/internal/lualib"
	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// luaToString is tostring with Lua 5.1's "%.14g" for numbers.
func luaToString(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(formatLuaNumber(float64(n))))
		return 1
	}
	if ud, ok := v.(*lua.LUserData); ok {
		if _, isNull := ud.Value.(lualib.NullPointer); isNull {
			L.Push(lua.LString("userdata: (nil)")) // glibc's %p of NULL
			return 1
		}
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// luaToNumber is Lua 5.1's tonumber: gopher-lua rejects "1e3" and " 10 ".
func luaToNumber(L *lua.LState) int {
	v := L.CheckAny(1)
	base := L.OptInt(2, 10)
	if base == 10 {
		switch x := v.(type) {
		case lua.LNumber:
			L.Push(x)
			return 1
		case lua.LString:
			if f, ok := parseLuaNumber(string(x)); ok {
				L.Push(lua.LNumber(f))
				return 1
			}
		}
		L.Push(lua.LNil)
		return 1
	}
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	s, ok := concatString(v)
	if !ok {
		L.TypeError(1, lua.LTString)
	}
	if f, ok := parseLuaNumberBase(s, base); ok {
		L.Push(lua.LNumber(f))
		return 1
	}
	L.Push(lua.LNil)
	return 1
}

// luaErrorFn is Lua 5.1's error: a string or number message gets the
// position of the caller at the given level; error() with no value raises nil.
func luaErrorFn(L *lua.LState) int {
	obj := L.Get(1)
	level := L.OptInt(2, 1)
	if s, ok := concatString(obj); ok && level > 0 {
		if where := L.Where(level); where != "" {
			s = where + " " + s
		}
		obj = lua.LString(s)
	}
	if s, ok := obj.(lua.LString); ok {
		L.Error(s, 0)
	}
	L.Error(obj, 0)
	return 0
}

// luaPCall is Redis 7.0's pcall (luaRedisPcall): like Lua's, except that an
// error table ({err=...}, as redis.call raises) comes back as its message.
func luaPCall(L *lua.LState) int {
	L.CheckAny(1)
	nargs := L.GetTop() - 1
	if err := L.PCall(nargs, lua.MultRet, pcallHandler(L)); err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		switch x := obj.(type) {
		case *lua.LTable:
			if s, ok := x.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// loadString is loadstring: the chunk is compiled as a script is (Lua 5.1
// syntax) and runs in the sandbox's protected environment.
func (sb *sandbox) loadString(L *lua.LState) int {
	src := L.CheckString(1)
	return sb.loadChunk(L, src, L.OptString(2, src))
}

// load is Lua 5.1's load(func [, chunkname]): the function returns pieces
// of the chunk until it returns nil or an empty string.
func (sb *sandbox) load(L *lua.LState) int {
	fn := L.CheckFunction(1)
	var b strings.Builder
	for {
		L.Push(fn)
		L.Call(0, 1)
		piece := L.Get(-1)
		L.Pop(1)
		s, ok := piece.(lua.LString)
		if !ok || s == "" {
			if piece != lua.LNil && !ok {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
			break
		}
		b.WriteString(string(s))
	}
	return sb.loadChunk(L, b.String(), L.OptString(2, "=(load)"))
}

func (sb *sandbox) loadChunk(L *lua.LState, src, chunkname string) int {
	id := chunkID(chunkname)
	if len(sb.chunkNames) < 1024 {
		sb.chunkNames[id] = chunkname
	}
	proto, err := compileLua(src, id)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = sb.env
	L.Push(fn)
	return 1
}

// chunkID is Lua 5.1's luaO_chunkid: "=name" and "@name" name a chunk
// directly, any other name is shown as [string "first line..."].
func chunkID(name string) string {
	switch {
	case strings.HasPrefix(name, "="), strings.HasPrefix(name, "@"):
		return name[1:]
	}
	line := name
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i] + "..."
	} else if len(line) > 45 {
		line = line[:45] + "..."
	}
	return `[string "` + line + `"]`
}

// tableConcat is table.concat with Lua 5.1's number formatting.
func tableConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, t.Len())
	var b strings.Builder
	for k := i; k <= j; k++ {
		s, ok := concatString(t.RawGetInt(k))
		if !ok {
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		L.CheckStringSize(int64(b.Len()) + int64(len(s)) + int64(len(sep)))
		b.WriteString(s)
		if k < j {
			b.WriteString(sep)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// tableForeach is Lua 5.1's deprecated table.foreach, still present in Redis.
func tableForeach(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if foreachCall(L, f, k, v) {
			return 1
		}
	}
	return 0
}

// tableForeachi is Lua 5.1's deprecated table.foreachi.
func tableForeachi(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	n := t.Len()
	for i := 1; i <= n; i++ {
		if foreachCall(L, f, lua.LNumber(i), t.RawGetInt(i)) {
			return 1
		}
	}
	return 0
}

// foreachCall calls f(k, v) for table.foreach and table.foreachi, which
// stop at the first value f returns other than nil: it reports whether f
// did, leaving that value on the stack.
func foreachCall(L *lua.LState, f *lua.LFunction, k, v lua.LValue) bool {
	L.Push(f)
	L.Push(k)
	L.Push(v)
	L.Call(2, 1)
	if L.Get(-1) != lua.LNil {
		return true
	}
	L.Pop(1)
	return false
}

// tableSetn is table.setn as Lua 5.1 builds it (without LUA_COMPAT_GETN).
func tableSetn(L *lua.LState) int {
	L.CheckTable(1)
	L.RaiseError("'setn' is obsolete")
	return 0
}

// pcallHandler rewrites string errors into Lua 5.1's wording while the
// failing function is still on the stack, so that pcall returns the same
// message Redis's pcall returns.
func pcallHandler(L *lua.LState) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		obj := L.Get(1)
		if s, ok := obj.(lua.LString); ok {
			obj = lua.LString(errorFrame(L).describe(string(s)))
		}
		L.Push(obj)
		return 1
	})
}

// maxLuaStack is the most values the interpreter's data stack holds (128
// MiB of them): room for LuaMaxCalls nested Lua functions of 250 registers
// and more, where Lua's own stack grows until memory runs out. Past it a
// script fails with "stack overflow".
const maxLuaStack = 1 << 23

// luaUnpack is Lua 5.1's unpack (lbaselib.c): the bounds are C ints, and a
// range that would put more than LuaMaxCStack values on the function's
// stack, its arguments included, fails with "too many results to unpack"
// (in Redis, 7,999 values from unpack(t) and an error from 8,000).
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := optCInt(L, 2, 1)
	var e int32
	if L.Get(3) == lua.LNil {
		e = int32(t.Len())
	} else {
		e = optCInt(L, 3, 0)
	}
	if i > e {
		return 0
	}
	n := int32(uint32(e) - uint32(i) + 1) // as C's int arithmetic wraps
	if n <= 0 || L.GetTop()+int(n) > lua.LuaMaxCStack {
		L.RaiseError("too many results to unpack")
	}
	for k := int64(i); k <= int64(e); k++ {
		L.Push(t.RawGetInt(int(k)))
	}
	return int(n)
}

// optCInt is luaL_optint: a number, or a string that converts to one,
// truncated as lua_tointeger does on x86-64 and then cut to a C int.
func optCInt(L *lua.LState, n int, def int32) int32 {
	var f float64
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return def
	case lua.LNumber:
		f = float64(v)
	case lua.LString:
		x, ok := parseLuaNumber(string(v))
		if !ok {
			L.TypeError(n, lua.LTNumber)
		}
		f = x
	default:
		L.TypeError(n, lua.LTNumber)
	}
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return 0 // lua_tointeger's out-of-range value, 1<<63, cut to 32 bits
	}
	return int32(int64(f))
}
