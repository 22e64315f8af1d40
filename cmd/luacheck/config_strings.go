package main

import (
	lua "github.com/yuin/gopher-lua"
)

// limitStringLib replaces the string and table functions that can build a
// huge string in one call with versions that refuse past rcMaxString.
func limitStringLib(L *lua.LState) {
	strlib, ok := L.GetGlobal("string").(*lua.LTable)
	if !ok {
		return
	}
	strlib.RawSetString("dump", lua.LNil)
	limitRep(L, strlib)
	limitGsub(L, strlib)
	limitFormat(L, strlib)
	if tablib, ok := L.GetGlobal("table").(*lua.LTable); ok {
		limitConcat(L, tablib)
	}
}

func tooLong(L *lua.LState, fn string) int {
	L.RaiseError("%s would build a string longer than %d bytes, too long for a .luacheckrc", fn, rcMaxString)
	return 0
}

// guard replaces lib[name] with a version that refuses, as too long, a
// call for which tooBig says so, and otherwise runs the original.
func guard(L *lua.LState, lib *lua.LTable, name, label string, tooBig func(L *lua.LState) bool) {
	orig := lib.RawGetString(name).(*lua.LFunction).GFunction
	lib.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
		if tooBig(L) {
			return tooLong(L, label)
		}
		return orig(L)
	}))
}

func limitRep(L *lua.LState, strlib *lua.LTable) {
	guard(L, strlib, "rep", "string.rep", func(L *lua.LState) bool {
		s, n := L.CheckString(1), L.CheckInt(2)
		return n > 0 && (n > rcMaxString || len(s)*n > rcMaxString)
	})
}

func limitGsub(L *lua.LState, strlib *lua.LTable) {
	guard(L, strlib, "gsub", "string.gsub", func(L *lua.LState) bool {
		s := L.CheckString(1)
		most := gsubReplacementBound(L, len(s))
		return (len(s)+1)*(most+1) > rcMaxString
	})
}

// gsubReplacementBound is the longest replacement gsub may insert. A
// function or table may return any string: the input is bounded instead,
// and a function's replacements are checked as they come back.
func gsubReplacementBound(L *lua.LState, inputLen int) int {
	switch r := L.Get(3).(type) {
	case lua.LString:
		return len(r)
	case lua.LNumber:
		return len(r.String())
	case *lua.LTable:
		most := rcMaxString / (inputLen + 1)
		r.ForEach(func(_, v lua.LValue) {
			if sv, ok := v.(lua.LString); ok && len(sv) > most {
				most = rcMaxString // force the refusal
			}
		})
		return most
	case *lua.LFunction:
		limit := rcMaxString / (inputLen + 1)
		L.Replace(3, L.NewFunction(func(L *lua.LState) int {
			n := L.GetTop()
			L.Push(r)
			for i := 1; i <= n; i++ {
				L.Push(L.Get(i))
			}
			L.Call(n, 1)
			if sv, ok := L.Get(-1).(lua.LString); ok && len(sv) > limit {
				return tooLong(L, "string.gsub")
			}
			return 1
		}))
		return limit
	}
	return rcMaxString / (inputLen + 1)
}

func limitFormat(L *lua.LState, strlib *lua.LTable) {
	guard(L, strlib, "format", "string.format", func(L *lua.LState) bool {
		f := L.CheckString(1)
		total := len(f)
		for i := 2; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(lua.LString); ok {
				total += len(s)
			}
			total += 32
		}
		return total > rcMaxString || widthTooBig(f)
	})
}

func limitConcat(L *lua.LState, tablib *lua.LTable) {
	guard(L, tablib, "concat", "table.concat", func(L *lua.LState) bool {
		t := L.CheckTable(1)
		sep := L.OptString(2, "")
		total := 0
		t.ForEach(func(_, v lua.LValue) {
			total += len(sep) + 32
			if s, ok := v.(lua.LString); ok {
				total += len(s)
			}
		})
		return total > rcMaxString
	})
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
