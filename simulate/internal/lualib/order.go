package lualib

import (
	"sort"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// Reorder returns a table with t's entries, set in the order a C library
// sets its fields: into a table created with a hash size hint of hint
// (luaL_register's number of functions, 0 for lua_newtable), names first in
// the given order, any other keys of t after them in sorted order. Go
// registers functions from maps, in random order; where Lua 5.1 puts each
// key, and so what pairs shows, depends on the order they were set in.
func Reorder(L *lua.LState, t *lua.LTable, hint int, names ...string) *lua.LTable {
	out := L.CreateTable(0, hint)
	named := make(map[string]bool, len(names))
	for _, name := range names {
		named[name] = true
		if v := t.RawGetString(name); v != lua.LNil {
			out.RawSetString(name, v)
		}
	}
	var rest []string
	t.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok && !named[string(s)] {
			rest = append(rest, string(s))
		}
	})
	sort.Strings(rest)
	for _, name := range rest {
		out.RawSetString(name, t.RawGetString(name))
	}
	return out
}
