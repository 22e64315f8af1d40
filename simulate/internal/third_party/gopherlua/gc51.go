package lua

// What a full collection of Lua 5.1 does to tables, as far as iteration can
// tell: every reachable table's removed entries (nil value) whose key is a
// collectable object (string, table, function, userdata, thread) get a dead
// key. A dead key no longer matches lookups, so setting that key again
// takes its main position or a free node instead of its old node, and next
// can still continue from it. Go's collector frees the memory; this only
// copies the layout effect, for scripts that call collectgarbage().

// MarkDeadKeys marks the removed entries of every table reachable from the
// registry, the globals, the stack and metatables, as lgc.c's
// traversetable does.
func (ls *LState) MarkDeadKeys() {
	seen := map[LValue]bool{}
	var pending []LValue
	push := func(v LValue) {
		switch v.(type) {
		case *LTable, *LFunction, *LUserData, *LState:
			if !seen[v] {
				seen[v] = true
				pending = append(pending, v)
			}
		}
	}
	push(ls.G.Registry)
	push(ls.G.Global)
	push(ls.G.MainThread)
	push(ls)
	for _, mt := range ls.G.builtinMts {
		push(mt)
	}
	for len(pending) > 0 {
		v := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		switch x := v.(type) {
		case *LTable:
			x.markDeadKeys()
			push(x.Metatable)
			for _, e := range x.array {
				push(e)
			}
			for i := range x.node {
				if n := &x.node[i]; n.key != nil {
					push(n.key)
					push(n.val)
				}
			}
		case *LFunction:
			if x.Env != nil {
				push(x.Env)
			}
			for _, uv := range x.Upvalues {
				if uv != nil {
					push(uv.Value())
				}
			}
		case *LUserData:
			if x.Env != nil {
				push(x.Env)
			}
			push(x.Metatable)
		case *LState:
			if x.Env != nil {
				push(x.Env)
			}
			if x.reg != nil {
				for i := 0; i < x.reg.Top(); i++ {
					push(x.reg.Get(i))
				}
			}
		}
	}
}

// markDeadKeys is removeentry over the hash part.
func (tb *LTable) markDeadKeys() {
	for i := range tb.node {
		n := &tb.node[i]
		if n.val == LNil && n.key != nil && isCollectable(n.key) {
			n.dead = true
		}
	}
}

// isCollectable reports whether Lua 5.1 allocates key on its heap.
func isCollectable(key LValue) bool {
	switch key.(type) {
	case LNumber, LBool, *LNilType:
		return false
	}
	return true
}
