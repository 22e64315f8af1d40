package lua

import "fmt"

// luaLError raises msg as luaL_error does from a C library function: with
// the position of its caller when that is a Lua function, none when a Go
// function (pcall, say) called it. RaiseError would look past Go frames.
func luaLError(L *LState, msg string) {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, LNil); err == nil && dbg.CurrentLine > 0 {
			msg = fmt.Sprintf("%s:%d: %s", dbg.Source, dbg.CurrentLine, msg)
		}
	}
	L.Error(LString(msg), 0)
}

func OpenTable(L *LState) int {
	tabmod := L.RegisterModule(TabLibName, tableFuncs)
	L.Push(tabmod)
	return 1
}

var tableFuncs = map[string]LGFunction{
	"getn":   tableGetN,
	"concat": tableConcat,
	"insert": tableInsert,
	"maxn":   tableMaxN,
	"remove": tableRemove,
	"sort":   tableSort,
}

// tableSort is Lua 5.1's table.sort: its quicksort, comparing and swapping
// in the same sequence, so ties and inconsistent order functions end up as
// in Redis.
func tableSort(L *LState) int {
	tbl := L.CheckTable(1)
	n := tbl.Len()
	var fn *LFunction
	if L.GetTop() >= 2 && L.Get(2) != LNil {
		fn = L.CheckFunction(2)
	}
	less := func(a, b LValue) bool {
		if fn != nil {
			L.Push(fn)
			L.Push(a)
			L.Push(b)
			L.Call(2, 1)
			return LVAsBool(L.reg.Pop())
		}
		return lessThan(L, a, b)
	}
	auxSort(L, tbl, 1, n, less)
	return 0
}

func auxSort(L *LState, t *LTable, l, u int, less func(a, b LValue) bool) {
	get := t.RawGetInt
	swap := func(i, j int) {
		vi, vj := get(i), get(j)
		*t.setInt(i) = vj
		*t.setInt(j) = vi
	}
	for l < u {
		if less(get(u), get(l)) {
			swap(l, u)
		}
		if u-l == 1 {
			break
		}
		i := (l + u) / 2
		if less(get(i), get(l)) {
			swap(i, l)
		} else if less(get(u), get(i)) {
			swap(i, u)
		}
		if u-l == 2 {
			break
		}
		pivot := get(i)
		swap(i, u-1)
		i, j := l, u-1
		for {
			for i++; less(get(i), pivot); i++ {
				if i > u {
					luaLError(L, "invalid order function for sorting")
				}
			}
			for j--; less(pivot, get(j)); j-- {
				if j < l {
					luaLError(L, "invalid order function for sorting")
				}
			}
			if j < i {
				break
			}
			swap(i, j)
		}
		swap(u-1, i)
		if i-l < u-i {
			j, i, l = l, i-1, i+1
		} else {
			j, i, u = i+1, u, i-1
		}
		auxSort(L, t, j, i, less)
	}
}

func tableGetN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).Len()))
	return 1
}

func tableMaxN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).maxn()))
	return 1
}

// tableRemove is Lua 5.1's table.remove: nothing (no value at all) outside
// 1..#t.
func tableRemove(L *LState) int {
	tbl := L.CheckTable(1)
	e := tbl.Len()
	pos := L.OptInt(2, e)
	if !(1 <= pos && pos <= e) {
		return 0
	}
	L.Push(tbl.Remove(pos))
	return 1
}

func tableConcat(L *LState) int {
	tbl := L.CheckTable(1)
	sep := LString(L.OptString(2, ""))
	i := L.OptInt(3, 1)
	j := L.OptInt(4, tbl.Len())
	if L.GetTop() == 3 {
		if i > tbl.Len() || i < 1 {
			L.Push(emptyLString)
			return 1
		}
	}
	i = intMax(intMin(i, tbl.Len()), 1)
	j = intMin(intMin(j, tbl.Len()), tbl.Len())
	if i > j {
		L.Push(emptyLString)
		return 1
	}
	//TODO should flushing?
	retbottom := L.GetTop()
	for ; i <= j; i++ {
		v := tbl.RawGetInt(i)
		if !LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type().String(), i)
		}
		L.Push(v)
		if i != j {
			L.Push(sep)
		}
	}
	L.Push(stringConcat(L, L.GetTop()-retbottom, L.reg.Top()-1))
	return 1
}

// tableInsert is Lua 5.1's table.insert.
func tableInsert(L *LState) int {
	tbl := L.CheckTable(1)
	switch L.GetTop() {
	case 2:
		tbl.Append(L.Get(2))
	case 3:
		tbl.Insert(L.CheckInt(2), L.Get(3))
	default:
		luaLError(L, "wrong number of arguments to 'insert'")
	}
	return 0
}

//
