// Package lua is redlua's fork of gopher-lua v1.1.2 (github.com/yuin/gopher-lua,
// MIT licence, see LICENSE): its root package, copied unchanged except where
// listed below; its ast, parse and pm packages are used from upstream.
//
// Why a fork: the simulator must iterate tables exactly as Redis's Lua 5.1
// does (pairs, next, cjson and cmsgpack key order, # on tables with holes).
// gopher-lua's LTable keeps Go maps and an insertion list, its fields are
// unexported, and its VM creates and fills tables itself, so no wrapper can
// observe the operations Lua's order depends on.
//
// Changes from upstream:
//
//   - table.go, table51.go: LTable is Lua 5.1's table (ltable.c): array part,
//     hash part with main positions, free pointer and rehash, luaH_getn,
//     luaH_next. Same public methods; NextKey is new (next's invalid key).
//     Setting nil on an absent key creates its slot, as luaH_set does.
//     Table, function, userdata and thread keys hash by a number given per
//     table (Lua hashes their address).
//   - gc51.go: LState.MarkDeadKeys gives removed collectable keys of every
//     reachable table dead keys, as a full collection does.
//   - vm.go: OP_NEWTABLE decodes its size hints (fb2int); OP_SETLIST sizes
//     the array part to the last index, then stores from the last value.
//   - compile_expr.go: the hash size hint counts keyed fields only; list
//     items are flushed exactly every 50 items and at the end (upstream
//     flushed again after a keyed field that followed 50k items, and
//     misnumbered a trailing multi-value item after 50k items and batches
//     past 511).
//   - state.go: NewTable is lua_newtable (no preallocation); the vararg "arg"
//     table is sized as adjust_varargs sizes it.
//   - tablelib.go: insert, remove, maxn and sort follow ltablib.c (remove
//     outside 1..#t returns nothing; sort is Lua 5.1's quicksort).
//   - removed: the package (require, module, package.preload), io, os,
//     debug and channel libraries and their helpers. Redis 7.0 exposes
//     none of them to scripts or functions and the simulator never opened
//     them. linit.go opens base, table, string, math and coroutine.
//   - compile.go is split by concern into compile*.go (functions moved,
//     none changed).
//   - go vet: constant format strings, no self-assignments or unreachable
//     returns.
//   - config.go, state.go, vm.go: Lua 5.1's limits on nesting. callR counts
//     nested calls as luaD_call does ("C stack overflow" at LuaMaxCCalls;
//     CallAsInstruction for Go functions that stand in for an instruction);
//     growCI follows the CallInfo array's growth ("stack overflow" when it
//     doubles past LuaMaxCalls: 16,384 calls on a fresh state, 20,000 after
//     the first overflow); PCall restores both after an error, as
//     luaD_pcall does; Resume continues the resumer's count. The registry
//     grows geometrically and its overflow reads "stack overflow".
//   - config.go, state.go, table51.go, stringlib.go, vm.go: the memory
//     budget (MaxStringSize, MaxTableSlots): string.rep, concatenation and
//     gsub, and table resizes past it raise Lua's memory error
//     (RaiseMemoryError, ApiErrorMemory), which PCall returns without
//     calling its handler, as for LUA_ERRMEM; gsub builds its result in
//     one pass.
//   - state.go: a Go panic (not a Lua error) passes through inner PCalls
//     and comes out of the outermost as ApiErrorPanic, its handler not
//     called, so no script-level pcall catches it.
//   - stringlib.go: string.byte is str_byte (the end defaults to the start;
//     "string slice too long" past LuaMaxCStack values); string.rep takes a
//     C int count.
package lua
