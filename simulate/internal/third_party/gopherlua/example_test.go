package lua_test

import (
	"fmt"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// pairs visits keys in Lua 5.1's order, as Redis's scripts see it: the
// array part first, then the hash part node by node.
func Example() {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString(`
		local t = {}
		t.attempts = 3
		t.backoff = 'fixed'
		t[1] = 'first'
		local ks = {}
		for k in pairs(t) do ks[#ks+1] = tostring(k) end
		print(table.concat(ks, ' '))`); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1 backoff attempts
}
