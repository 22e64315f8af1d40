package lua

// This file is the redlua fork's replacement of gopher-lua's table.go: the
// public LTable API of gopher-lua v1.1.2 on top of Lua 5.1's table layout
// (table51.go), so that next/pairs, # and everything built on them behave as
// in Redis's Lua 5.1.

type lValueArraySorter struct {
	L      *LState
	Fn     *LFunction
	Values []LValue
}

func (lv lValueArraySorter) Len() int {
	return len(lv.Values)
}

func (lv lValueArraySorter) Swap(i, j int) {
	lv.Values[i], lv.Values[j] = lv.Values[j], lv.Values[i]
}

func (lv lValueArraySorter) Less(i, j int) bool {
	if lv.Fn != nil {
		lv.L.Push(lv.Fn)
		lv.L.Push(lv.Values[i])
		lv.L.Push(lv.Values[j])
		lv.L.Call(2, 1)
		return LVAsBool(lv.L.reg.Pop())
	}
	return lessThan(lv.L, lv.Values[i], lv.Values[j])
}

// newLTable is Lua 5.1's luaH_new: an array part of exactly acap slots and a
// hash part of hcap rounded up to a power of two.
func newLTable(acap int, hcap int) *LTable {
	if acap < 0 {
		acap = 0
	}
	if hcap < 0 {
		hcap = 0
	}
	tb := &LTable{Metatable: LNil}
	tb.setArrayVector(acap)
	tb.setNodeVector(hcap)
	return tb
}

// Len returns the border Lua 5.1's length operator picks (luaH_getn),
// without using __len.
func (tb *LTable) Len() int {
	return tb.getn()
}

// Append sets t[#t+1] = value, as table.insert(t, value) does.
func (tb *LTable) Append(value LValue) {
	*tb.setInt(tb.getn() + 1) = value
}

// Insert inserts value at position i, moving up the elements from i to #t,
// as Lua 5.1's table.insert(t, i, value) does.
func (tb *LTable) Insert(i int, value LValue) {
	e := tb.getn() + 1
	if i > e {
		e = i
	}
	for k := e; k > i; k-- {
		*tb.setInt(k) = tb.RawGetInt(k - 1)
	}
	*tb.setInt(i) = value
}

// MaxN returns the largest positive numeric key (Lua 5.1's table.maxn),
// truncated to an int.
func (tb *LTable) MaxN() int {
	return int(tb.maxn())
}

// maxn is Lua 5.1's table.maxn: the largest positive number among the keys.
func (tb *LTable) maxn() float64 {
	max := 0.0
	for k, _ := tb.Next(LNil); k != LNil; k, _ = tb.Next(k) {
		if n, ok := k.(LNumber); ok && float64(n) > max {
			max = float64(n)
		}
	}
	return max
}

// Remove removes the element at pos (the last one, #t, when pos is -1) and
// moves down the elements above it, as Lua 5.1's table.remove does. Outside
// 1..#t it removes nothing and returns nil.
func (tb *LTable) Remove(pos int) LValue {
	e := tb.getn()
	if pos == -1 {
		pos = e
	}
	if !(1 <= pos && pos <= e) {
		return LNil
	}
	old := tb.RawGetInt(pos)
	for ; pos < e; pos++ {
		*tb.setInt(pos) = tb.RawGetInt(pos + 1)
	}
	*tb.setInt(e) = LNil
	return old
}

// RawSet sets a given LValue to a given index without the __newindex
// metamethod. As in Lua 5.1, setting nil to an absent key still creates its
// slot. A nil or NaN key is ignored (LState.RawSet raises the error).
func (tb *LTable) RawSet(key LValue, value LValue) {
	if !validKey(key) {
		return
	}
	*tb.set(key) = value
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	*tb.setInt(key) = value
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	*tb.set(LString(key)) = value
}

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	tb.RawSet(key, value)
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	if p := tb.get(key); p != nil {
		return *p
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	if p := tb.getInt(key); p != nil {
		return *p
	}
	return LNil
}

// RawGetH returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	return tb.RawGet(key)
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	if p := tb.getStr(key); p != nil {
		return *p
	}
	return LNil
}

// ForEach calls cb for every key with a non-nil value, in the order Lua
// 5.1's next visits them.
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	for i, v := range tb.array {
		if v != LNil {
			cb(LNumber(i+1), v)
		}
	}
	for i := range tb.node {
		n := &tb.node[i]
		if n.val != LNil {
			cb(n.key, n.val)
		}
	}
}

// Next is lua_next: the key and value after key (the first ones for nil),
// or nil, nil at the end. A key that is not in the table also gives nil,
// nil; NextKey tells that case apart.
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	k, v, _ := tb.NextKey(key)
	return k, v
}

// NextKey is Next that also reports whether key was found in the table (Lua
// 5.1 raises "invalid key to 'next'" when it was not).
func (tb *LTable) NextKey(key LValue) (LValue, LValue, bool) {
	i, ok := tb.findIndex(key)
	if !ok {
		return LNil, LNil, false
	}
	for i++; i < len(tb.array); i++ {
		if v := tb.array[i]; v != LNil {
			return LNumber(i + 1), v, true
		}
	}
	for i -= len(tb.array); i < len(tb.node); i++ {
		if n := &tb.node[i]; n.val != LNil {
			return n.key, n.val, true
		}
	}
	return LNil, LNil, true
}
