package lualib

import (
	"fmt"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// The helpers here check arguments as Lua 5.1's luaL_check* do, so errors
// read "bad argument #1 to 'pack' (number expected, got no value)" as in
// Redis rather than in gopher-lua's wording.

func argTypeName(L *lua.LState, i int) string {
	if i > L.GetTop() {
		return "no value"
	}
	return L.Get(i).Type().String()
}

func argError(L *lua.LState, i int, fname, msg string) {
	raise(L, "bad argument #%d to '%s' (%s)", i, fname, msg)
}

func typeError(L *lua.LState, i int, fname, want string) {
	argError(L, i, fname, fmt.Sprintf("%s expected, got %s", want, argTypeName(L, i)))
}

func checkNumber(L *lua.LState, i int, fname string) float64 {
	switch v := L.Get(i).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if n, err := parseLuaNumber(string(v)); err == nil {
			return n
		}
	}
	typeError(L, i, fname, "number")
	return 0
}

// checkInteger truncates like lua_tointeger on x86-64.
func checkInteger(L *lua.LState, i int, fname string) int64 {
	return cInt64(checkNumber(L, i, fname))
}

func optInteger(L *lua.LState, i int, fname string, def int64) int64 {
	if L.Get(i) == lua.LNil {
		return def
	}
	return checkInteger(L, i, fname)
}

func cInt64(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return -1 << 63
	}
	return int64(f)
}

func checkString(L *lua.LState, i int, fname string) string {
	switch v := L.Get(i).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return formatG(float64(v), 14)
	}
	typeError(L, i, fname, "string")
	return ""
}

// raise raises a Lua error as luaL_error does: the text gets the position of
// the calling Lua function, or none when a Go function (pcall, say) called
// the library directly. gopher-lua's RaiseError always finds a Lua frame.
func raise(L *lua.LState, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			msg = fmt.Sprintf("%s:%d: %s", dbg.Source, dbg.CurrentLine, msg)
		}
	}
	L.Error(lua.LString(msg), 0)
}
