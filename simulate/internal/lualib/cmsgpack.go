package lualib

import (
	"encoding/binary"
	"math"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// cmsgpackMaxNesting is the depth at which pack writes nested tables as nil,
// which is how the C library survives cyclic tables.
const cmsgpackMaxNesting = 16

// OpenCMsgpack sets the global "cmsgpack" to lua-cmsgpack 0.4.0 as bundled
// with Redis 7.0: pack, unpack, unpack_one and unpack_limit.
func OpenCMsgpack(L *lua.LState) {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"pack":   msgpackPack,
		"unpack": func(L *lua.LState) int { return msgpackUnpack(L, 0, 0) },
		"unpack_one": func(L *lua.LState) int {
			offset := int(optInteger(L, 2, "unpack_one", 0))
			return msgpackUnpack(L, 1, offset)
		},
		"unpack_limit": func(L *lua.LState) int {
			limit := int(checkInteger(L, 2, "unpack_limit"))
			offset := int(optInteger(L, 3, "unpack_limit", 0))
			return msgpackUnpack(L, limit, offset)
		},
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	L.SetGlobal("cmsgpack", Reorder(L, t, 0, "pack", "unpack", "unpack_one", "unpack_limit", "_NAME", "_VERSION", "_COPYRIGHT", "_DESCRIPTION"))
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		raise(L, "bad argument #0 to 'pack' (MessagePack pack needs input.)")
	}
	var out []byte
	for i := 1; i <= n; i++ {
		out = msgpackEncode(out, L.Get(i), 0)
	}
	L.Push(lua.LString(out))
	return 1
}

func msgpackEncode(out []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return msgpackBytes(out, string(x))
	case lua.LBool:
		if x {
			return append(out, 0xc3)
		}
		return append(out, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if isInt64Equivalent(f) {
			return msgpackInt(out, int64(f))
		}
		return msgpackDouble(out, f)
	case *lua.LTable:
		if level == cmsgpackMaxNesting {
			return append(out, 0xc0)
		}
		if n, ok := msgpackArrayLen(x); ok {
			out = msgpackHeader(out, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				out = msgpackEncode(out, x.RawGetInt(i), level+1)
			}
			return out
		}
		n := 0
		x.ForEach(func(_, _ lua.LValue) { n++ })
		out = msgpackHeader(out, n, 0x80, 0xde, 0xdf)
		x.ForEach(func(k, val lua.LValue) {
			out = msgpackEncode(out, k, level+1)
			out = msgpackEncode(out, val, level+1)
		})
		return out
	}
	return append(out, 0xc0)
}

func isInt64Equivalent(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && f >= -9223372036854775808.0 &&
		f < 9223372036854775808.0 && float64(int64(f)) == f
}

// msgpackArrayLen applies the C library's rule: a table is an array when all
// keys are positive integers (within C int) and their count equals the
// largest, so an empty table is an empty array.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, max := 0, 0.0
	ok := true
	t.ForEach(func(k, _ lua.LValue) {
		if !ok {
			return
		}
		n, isNum := k.(lua.LNumber)
		f := float64(n)
		if !isNum || f <= 0 || f > math.MaxInt32 || math.Trunc(f) != f {
			ok = false
			return
		}
		if f > max {
			max = f
		}
		count++
	})
	return count, ok && float64(count) == max
}

func msgpackHeader(out []byte, n int, fix, b16, b32 byte) []byte {
	switch {
	case n <= 15:
		return append(out, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(out, b16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(out, b32), uint32(n))
}

func msgpackBytes(out []byte, s string) []byte {
	n := len(s)
	if int64(len(out))+int64(n)+5 > lua.MaxStringSize {
		panic(lua.NewMemoryError()) // the memory budget, before allocating
	}
	switch {
	case n < 32:
		out = append(out, 0xa0|byte(n))
	case n <= 0xff:
		out = append(out, 0xd9, byte(n))
	case n <= 0xffff:
		out = binary.BigEndian.AppendUint16(append(out, 0xda), uint16(n))
	default:
		out = binary.BigEndian.AppendUint32(append(out, 0xdb), uint32(n))
	}
	return append(out, s...)
}

func msgpackInt(out []byte, n int64) []byte {
	be := binary.BigEndian
	if n >= 0 {
		switch {
		case n <= 127:
			return append(out, byte(n))
		case n <= 0xff:
			return append(out, 0xcc, byte(n))
		case n <= 0xffff:
			return be.AppendUint16(append(out, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return be.AppendUint32(append(out, 0xce), uint32(n))
		}
		return be.AppendUint64(append(out, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(out, byte(int8(n)))
	case n >= -128:
		return append(out, 0xd0, byte(int8(n)))
	case n >= -32768:
		return be.AppendUint16(append(out, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return be.AppendUint32(append(out, 0xd2), uint32(int32(n)))
	}
	return be.AppendUint64(append(out, 0xd3), uint64(n))
}

// msgpackDouble writes a float when the value survives the round trip
// through float32, as the C library decides.
func msgpackDouble(out []byte, d float64) []byte {
	if f := float32(d); float64(f) == d {
		return binary.BigEndian.AppendUint32(append(out, 0xca), math.Float32bits(f))
	}
	return binary.BigEndian.AppendUint64(append(out, 0xcb), math.Float64bits(d))
}
