package lua

import (
	"strings"
	"testing"
)

// keysInOrder runs src (which must leave its table in global t) and lists
// t's keys in next order.
func keysInOrder(t *testing.T, src string) (string, int) {
	t.Helper()
	L := NewState()
	defer L.Close()
	if err := L.DoString(src); err != nil {
		t.Fatal(err)
	}
	tb := L.GetGlobal("t").(*LTable)
	var ks []string
	for k, _ := tb.Next(LNil); k != LNil; k, _ = tb.Next(k) {
		ks = append(ks, k.String())
	}
	return strings.Join(ks, " "), tb.Len()
}

// Answers recorded from Lua 5.1 inside redis-server 7.0.15.
func TestTableLayoutKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		src, keys string
		n         int
	}{
		// Strings hash to their main positions; the job options.
		{`t = {} t.attempts = 3 t.backoff = 1`, "backoff attempts", 0},
		{`t = {} for i=1,20 do t['k'..i] = i end t.k3 = nil t.k7 = nil t.x = 1`,
			"k16 k19 k11 x k17 k15 k20 k10 k8 k1 k12 k2 k9 k13 k18 k14 k6 k4 k5", 0},
		// Array part first, then numbers, booleans and strings by hash.
		{`t = {1,2,nil,4, [10]=5, a=1, [2.5]=3, [true]=1, [-1]=2}`, "1 2 4 a true 2.5 10 -1", 4},
		// # finds a border by doubling into the hash part.
		{`t = {} t[1]=1 t[2]=2 t[4]=4 t[5]=5`, "1 2 4 5", 5},
		{`t = {n=1} for i=1,10 do t[i]=i end t[5]=nil t[10]=nil`, "1 2 3 4 6 7 8 9 n", 9},
	} {
		keys, n := keysInOrder(t, c.src)
		if keys != c.keys || n != c.n {
			t.Errorf("%s: keys %q and #t %d, Redis gives %q and %d", c.src, keys, n, c.keys, c.n)
		}
	}
}

// A key set to nil keeps its node: next can still continue from it, and
// setting it again reuses the node instead of taking a free one.
func TestRemovedKeyKeepsItsNode(t *testing.T) {
	L := NewState()
	defer L.Close()
	tb := L.NewTable()
	tb.RawSetString("a", LNumber(1))
	tb.RawSetString("b", LNumber(2))
	before := len(tb.node)
	tb.RawSetString("a", LNil)
	if _, _, ok := tb.NextKey(LString("a")); !ok {
		t.Error("next from a removed key: key not found, want it kept until rehash")
	}
	tb.RawSetString("a", LNumber(3))
	if len(tb.node) != before {
		t.Errorf("setting a removed key again rehashed the table (%d nodes, had %d)", len(tb.node), before)
	}
	if _, _, ok := tb.NextKey(LString("zz")); ok {
		t.Error("next from a key never in the table: found, want invalid key")
	}
}

func TestTableSizesFollowRehash(t *testing.T) {
	L := NewState()
	defer L.Close()
	tb := L.NewTable()
	for i, want := range []int{1, 2, 4, 4, 8, 8, 8, 8, 16} {
		tb.RawSetInt(i+1, LTrue)
		if len(tb.array) != want {
			t.Errorf("after t[%d]: array part of %d, Lua 5.1 has %d", i+1, len(tb.array), want)
		}
	}
	if len(tb.node) != 0 {
		t.Errorf("integer keys 1..9 left %d hash nodes, want none", len(tb.node))
	}
}

// Tables and functions as keys: found again, iterated in a fixed order, and
// many of them do not collide into one chain.
func TestPointerKeys(t *testing.T) {
	L := NewState()
	defer L.Close()
	tb := L.NewTable()
	keys := make([]*LTable, 2000)
	for i := range keys {
		keys[i] = L.NewTable()
		tb.RawSet(keys[i], LNumber(i))
	}
	for i, k := range keys {
		if v := tb.RawGet(k); v != LNumber(i) {
			t.Fatalf("key %d: got %v", i, v)
		}
	}
	if v := tb.RawGet(L.NewTable()); v != LNil {
		t.Errorf("a table never set as a key: got %v, want nil", v)
	}
	n, prev := 0, LValue(LNil)
	for k, _ := tb.Next(LNil); k != LNil; k, _ = tb.Next(k) {
		n++
		prev = k
	}
	if n != len(keys) || prev == LNil {
		t.Errorf("next visited %d keys, want %d", n, len(keys))
	}
	longest := 0
	for i := range tb.node {
		l := 0
		for j := int32(i); j >= 0; j = tb.node[j].next {
			l++
		}
		if l > longest {
			longest = l
		}
	}
	if longest > 20 {
		t.Errorf("longest chain %d nodes: pointer keys collide", longest)
	}
}

// After a full collection a removed string key is dead: next still continues
// from it, but lookups no longer find its node, so setting it again goes
// through newkey (main position or a free node) instead of reusing it.
func TestDeadKeysAfterCollection(t *testing.T) {
	L := NewState()
	defer L.Close()
	tb := L.NewTable()
	L.SetGlobal("t", tb)
	for _, k := range []string{"a", "b", "c", "d"} {
		tb.RawSetString(k, LTrue)
	}
	tb.RawSetString("b", LNil)
	if tb.get(LString("b")) == nil {
		t.Fatal("removed key lost its slot before any collection")
	}
	L.MarkDeadKeys()
	if tb.get(LString("b")) != nil {
		t.Error("removed key still found after a collection, want a dead key")
	}
	if _, _, ok := tb.NextKey(LString("b")); !ok {
		t.Error("next from a dead key: not found, Lua 5.1 continues from it")
	}
	tb.RawSetString("b", LNumber(2))
	if tb.RawGetString("b") != LNumber(2) {
		t.Errorf("b set again after a collection reads %v, want 2", tb.RawGetString("b"))
	}
}
