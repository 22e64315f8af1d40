package simulate

import (
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

	"github.com/redlua/redlua/registry"
)

// registerFunction is redis.register_function, callable only while
// FUNCTION LOAD runs a library's top level: (name, callback) or one table
// of named arguments function_name, callback, flags and description.
func (e *functionEngine) registerFunction(L *lua.LState) int {
	lib := e.loading
	if lib == nil {
		raise(L, errRegisterOutsideLoad)
	}
	f, msg := readRegisterArgs(L)
	if msg != "" {
		raise(L, msg)
	}
	if !validFunctionName(f.name) {
		raise(L, strings.TrimPrefix(errFunctionName, "ERR "))
	}
	for _, g := range lib.funcs {
		if g.name == f.name {
			raise(L, errRegisterDuplicate)
		}
	}
	f.lib = lib
	lib.funcs = append(lib.funcs, f)
	return 0
}

func readRegisterArgs(L *lua.LState) (*libFunction, string) {
	switch L.GetTop() {
	case 1:
		return readNamedRegisterArgs(L)
	case 2:
		name, ok := luaStringArg(L.Get(1))
		if !ok {
			return nil, errRegisterFirstArg
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, errRegisterSecondArg
		}
		return &libFunction{name: name, fn: fn}, ""
	}
	return nil, errRegisterArgCount
}

func readNamedRegisterArgs(L *lua.LState) (*libFunction, string) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, errRegisterSingleArg
	}
	f := &libFunction{}
	named := false
	var msg string
	t.ForEach(func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaStringArg(k)
		if !ok {
			msg = errRegisterKeyType
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.name, ok = luaStringArg(v); !ok {
				msg = errRegisterNameType
			}
			named = ok
		case "description":
			d, ok := luaStringArg(v)
			if !ok {
				msg = errRegisterDescType
			}
			f.description = &d
		case "callback":
			if f.fn, ok = v.(*lua.LFunction); !ok {
				msg = errRegisterCallbackType
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = errRegisterFlagsType
				return
			}
			if !f.readFlags(ft) {
				msg = errRegisterUnknownFlag
			}
		default:
			msg = errRegisterUnknownArg
		}
	})
	switch {
	case msg != "":
		return nil, msg
	case !named:
		return nil, errRegisterNoName
	case f.fn == nil:
		return nil, errRegisterNoCallback
	}
	return f, ""
}

// readFlags reads flags[1], flags[2], ... until the first nil, each one of
// Redis's script flags (without case).
func (f *libFunction) readFlags(t *lua.LTable) bool {
	set := map[string]bool{}
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			break
		}
		s, ok := luaStringArg(v)
		if !ok {
			return false
		}
		name := strings.ToLower(s)
		if !isScriptFlag(name) {
			return false
		}
		set[name] = true
	}
	for _, name := range registry.KnownFlags {
		if set[name] {
			f.flags = append(f.flags, name)
		}
	}
	f.noWrites, f.crossSlot = set[registry.FlagNoWrites], set[registry.FlagAllowCrossSlotKeys]
	return true
}

func isScriptFlag(name string) bool {
	for _, k := range registry.KnownFlags {
		if k == name {
			return true
		}
	}
	return false
}

// luaStringArg is lua_isstring + lua_tostring: strings, and numbers as
// Lua 5.1 formats them.
func luaStringArg(v lua.LValue) (string, bool) { return concatString(v) }
