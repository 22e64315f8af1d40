package lualib

import (
	"testing"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// callLib calls lib.fn(args...) unprotected and fails the test if it panics
// with anything but a Lua error: a Go runtime panic would be a bug.
func callLib(t *testing.T, L *lua.LState, lib, fn string, args ...lua.LValue) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*lua.ApiError); !ok {
				t.Fatalf("%s.%s panicked: %v", lib, fn, r)
			}
		}
		L.SetTop(0)
	}()
	f := L.GetField(L.GetGlobal(lib), fn)
	L.Push(f)
	for _, a := range args {
		L.Push(a)
	}
	L.Call(len(args), lua.MultRet)
}

func FuzzCJSONDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `[1e400, -0x10, inf]`,
		`"\u12`, `[[[[`, `{"a" 1}`, "\x00[", `-`, `1.5e+`, `nan(123)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		L := newLibState(t)
		callLib(t, L, "cjson", "decode", lua.LString(s))
		// Whatever decodes must encode again, or fail with a Lua error.
		if err := L.CallByParam(lua.P{Fn: L.GetField(L.GetGlobal("cjson"), "decode"), NRet: 1, Protect: true}, lua.LString(s)); err == nil {
			v := L.Get(-1)
			L.SetTop(0)
			callLib(t, L, "cjson", "encode", v)
		}
	})
}

func FuzzCMsgpackUnpack(f *testing.F) {
	for _, s := range []string{"\x93\x01\xc0\x03", "\x81\xa1a\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a",
		"\xdd\xff\xff\xff\xff", "\xdb\xff\xff\xff\xff", "\x81\xc0\x01", "\xc4\x01a", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff"} {
		f.Add(s, int64(0), int64(0))
	}
	f.Fuzz(func(t *testing.T, s string, limit, offset int64) {
		L := newLibState(t)
		callLib(t, L, "cmsgpack", "unpack", lua.LString(s))
		callLib(t, L, "cmsgpack", "unpack_one", lua.LString(s), lua.LNumber(offset))
		callLib(t, L, "cmsgpack", "unpack_limit", lua.LString(s), lua.LNumber(limit), lua.LNumber(offset))
	})
}

func FuzzStructUnpack(f *testing.F) {
	for _, s := range [][2]string{{">I2", "\x01\x02"}, {"!4bi", "\x01\x00\x00\x00\x02\x00\x00\x00"},
		{"Bc0", "\x03abc"}, {"s", "ab"}, {"i33", ""}, {"!3", ""}, {"c99999999999", "x"}, {"<i16", "0123456789abcdef"}} {
		f.Add(s[0], s[1], int64(1))
	}
	f.Fuzz(func(t *testing.T, format, data string, offset int64) {
		L := newLibState(t)
		callLib(t, L, "struct", "unpack", lua.LString(format), lua.LString(data), lua.LNumber(offset))
		callLib(t, L, "struct", "size", lua.LString(format))
	})
}
