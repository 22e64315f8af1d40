package lua

import "testing"

// memoryError reports whether fn raised the memory error.
func memoryError(fn func()) (got bool) {
	defer func() {
		ae, ok := recover().(*ApiError)
		got = ok && ae.Type == ApiErrorMemory && ae.Object == LString(MemErrMsg)
	}()
	fn()
	return false
}

// A table part past MaxTableSlots is refused with the memory error before
// it is allocated.
func TestTableBudget(t *testing.T) {
	tb := newLTable(0, 0)
	if !memoryError(func() { tb.setArrayVector(MaxTableSlots + 1) }) {
		t.Error("an array part past MaxTableSlots was not refused with the memory error")
	}
	if !memoryError(func() { tb.setNodeVector(MaxTableSlots + 1) }) {
		t.Error("a hash part past MaxTableSlots was not refused with the memory error")
	}
	tb.setArrayVector(16)
	if len(tb.array) != 16 {
		t.Errorf("a small array part has %d slots", len(tb.array))
	}
}

// The memory error reaches Lua's pcall as its message, and a PCall with an
// error handler returns it without calling the handler, as Lua 5.1 does
// for LUA_ERRMEM.
func TestMemoryErrorSkipsTheHandler(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString("ok, msg = pcall(string.rep, 'x', 2^30)"); err != nil {
		t.Fatal(err)
	}
	if L.GetGlobal("ok") != LFalse || L.GetGlobal("msg") != LString(MemErrMsg) {
		t.Errorf("pcall(string.rep, 'x', 2^30) = %v, %v", L.GetGlobal("ok"), L.GetGlobal("msg"))
	}
	called := false
	handler := L.NewFunction(func(L *LState) int { called = true; return 1 })
	fn, err := L.LoadString("return string.rep('x', 2^30)")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	err = L.PCall(0, 1, handler)
	if ae, ok := err.(*ApiError); !ok || ae.Type != ApiErrorMemory || called {
		t.Errorf("PCall = %v (handler called: %v), want the memory error without the handler", err, called)
	}
}

// Nested calls through Go functions stop at LuaMaxCCalls with "C stack
// overflow"; Lua calls at the CallInfo limit with "stack overflow", which
// moves from 16,384 to 20,000 after the first overflow.
func TestCallLimits(t *testing.T) {
	L := NewState(Options{CallStackSize: 2*LuaMaxCalls + 16, MinimizeStackMemory: true, RegistryMaxSize: 1 << 22})
	defer L.Close()
	run := func(src string) string {
		t.Helper()
		if err := L.DoString(src); err != nil {
			return err.(*ApiError).Object.String()
		}
		return L.GetGlobal("r").String()
	}
	const recurse = "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end "
	if got := run(recurse + "r = f(16000)"); got != "16000" {
		t.Errorf("16,001 nested calls on a fresh state: %s", got)
	}
	if got := run(recurse + "r = f(17000)"); got != "<string>:1: stack overflow" {
		t.Errorf("17,001 nested calls on a fresh state: %s", got)
	}
	if got := run(recurse + "r = f(19000)"); got != "19000" {
		t.Errorf("19,001 nested calls after an overflow: %s", got)
	}
	if got := run("local function f() return pcall(f) end r = select('#', f())"); got != "200" {
		t.Errorf("nested pcalls returned %s values, want 200 (198 trues, false and the message)", got)
	}
	if got := run("local t = setmetatable({}, {__index = function(t, k) return t[k] end}) r = t.x"); got != "<string>:1: C stack overflow" {
		t.Errorf("unbounded __index: %s", got)
	}
}
