package lua

import (
	"math/rand"
	"testing"
)

// The table against a Go map: after any sequence of sets, removals,
// collections and table.insert/remove, every key reads back its value,
// next visits each present key exactly once, and # is a border.
func TestTableAgainstMap(t *testing.T) {
	L := NewState()
	defer L.Close()
	r := rand.New(rand.NewSource(1))
	tables := make([]LValue, 8)
	for i := range tables {
		tables[i] = L.NewTable()
	}
	key := func() LValue {
		switch r.Intn(6) {
		case 0, 1:
			return LNumber(r.Intn(70) + 1)
		case 2:
			return LString(string(rune('a' + r.Intn(26))))
		case 3:
			return LNumber([]float64{0, -1, 1.5, 2147483648, 1e300, -0.25}[r.Intn(6)])
		case 4:
			return LBool(r.Intn(2) == 0)
		}
		return tables[r.Intn(len(tables))]
	}
	for round := 0; round < 200; round++ {
		tb := L.NewTable()
		L.SetGlobal("t", tb)
		model := map[LValue]LValue{}
		for op := 0; op < 300; op++ {
			switch r.Intn(10) {
			case 0, 1, 2, 3:
				k, v := key(), LNumber(op)
				tb.RawSet(k, v)
				model[k] = v
			case 4, 5:
				k := key()
				tb.RawSet(k, LNil)
				delete(model, k)
			case 6:
				n := tb.Len()
				tb.Append(LNumber(op))
				model[LNumber(n+1)] = LNumber(op)
			case 7:
				n := tb.Len()
				if n > 0 {
					for i := 1; i < n; i++ {
						if v, ok := model[LNumber(i+1)]; ok {
							model[LNumber(i)] = v
						} else {
							delete(model, LNumber(i))
						}
					}
					delete(model, LNumber(n))
					tb.Remove(1)
				}
			case 8:
				L.MarkDeadKeys()
			case 9:
				k := r.Intn(40) + 1
				tb.RawSetInt(k, LNil)
				delete(model, LNumber(k))
			}
			if op%25 == 0 {
				checkAgainstModel(t, tb, model)
			}
		}
		checkAgainstModel(t, tb, model)
	}
}

func checkAgainstModel(t *testing.T, tb *LTable, model map[LValue]LValue) {
	t.Helper()
	for k, v := range model {
		if got := tb.RawGet(k); got != v {
			t.Fatalf("t[%v] = %v, want %v", k, got, v)
		}
	}
	seen := map[LValue]bool{}
	for k, v := tb.Next(LNil); k != LNil; k, v = tb.Next(k) {
		if seen[k] {
			t.Fatalf("next visited %v twice", k)
		}
		seen[k] = true
		if model[k] != v {
			t.Fatalf("next gave %v = %v, want %v", k, v, model[k])
		}
	}
	if len(seen) != len(model) {
		t.Fatalf("next visited %d keys, the table has %d", len(seen), len(model))
	}
	n := tb.Len()
	if n > 0 && tb.RawGetInt(n) == LNil || tb.RawGetInt(n+1) != LNil {
		t.Fatalf("#t = %d is not a border", n)
	}
}
