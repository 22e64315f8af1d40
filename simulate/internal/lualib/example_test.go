package lualib_test

import (
	"fmt"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

	"github.com/redlua/redlua/simulate/internal/lualib"
)

func Example() {
	L := lua.NewState()
	defer L.Close()
	lualib.OpenCJSON(L)
	lualib.OpenBit(L)
	lualib.OpenStruct(L)
	lualib.OpenCMsgpack(L)
	err := L.DoString(`
		json = cjson.encode({1, 2, {a = "x/y"}})
		hex = bit.tohex(-1, -4)
		packed = struct.pack(">I2", 258)
		mp = cmsgpack.pack({1, 2, 3})
	`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(L.GetGlobal("json"))
	fmt.Println(L.GetGlobal("hex"))
	fmt.Printf("%q\n", L.GetGlobal("packed").String())
	fmt.Printf("%q\n", L.GetGlobal("mp").String())
	// Output:
	// [1,2,{"a":"x\/y"}]
	// FFFF
	// "\x01\x02"
	// "\x93\x01\x02\x03"
}

func ExampleOpenCJSON() {
	L := lua.NewState()
	defer L.Close()
	lualib.OpenCJSON(L)
	err := L.DoString(`
		local t = cjson.decode('{"owner":null,"ttl":1500}')
		print(t.owner == cjson.null, t.ttl)
		local ok, err = pcall(cjson.decode, '[1,]')
		-- Lua puts the caller's position before the library's text.
		print(ok, (err:gsub('^.-:%d+: ', '')))
	`)
	fmt.Println(err)
	// Output:
	// true	1500
	// false	Expected value but found T_ARR_END at character 4
	// <nil>
}
