package lualib

import (
	"math"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// OpenBit sets the global "bit" to LuaBitOp 1.0.2 as bundled with Redis:
// every operation works on 32-bit integers and returns a signed result.
func OpenBit(L *lua.LState) {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { return pushBits(L, bitArg(L, 1, "tobit")) },
		"bnot":    func(L *lua.LState) int { return pushBits(L, ^bitArg(L, 1, "bnot")) },
		"band":    bitFold("band", func(a, b uint32) uint32 { return a & b }),
		"bor":     bitFold("bor", func(a, b uint32) uint32 { return a | b }),
		"bxor":    bitFold("bxor", func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  bitShift("lshift", func(b uint32, n uint) uint32 { return b << n }),
		"rshift":  bitShift("rshift", func(b uint32, n uint) uint32 { return b >> n }),
		"arshift": bitShift("arshift", func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) }),
		"rol":     bitShift("rol", func(b uint32, n uint) uint32 { return b<<n | b>>(32-n) }),
		"ror":     bitShift("ror", func(b uint32, n uint) uint32 { return b>>n | b<<(32-n) }),
		"bswap": func(L *lua.LState) int {
			b := bitArg(L, 1, "bswap")
			return pushBits(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
		},
		"tohex": bitToHex,
	})
	L.SetGlobal("bit", Reorder(L, t, 12, "tobit", "bnot", "band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "ror", "bswap", "tohex"))
}

// bitArg normalises a number the way LuaBitOp does: adding 2^52+2^51 rounds
// it to an integer (ties to even) and leaves its low 32 bits in the low word
// of the double, which also wraps values outside the 32-bit range.
func bitArg(L *lua.LState, i int, fname string) uint32 {
	n := checkNumber(L, i, fname)
	return uint32(math.Float64bits(n + 6755399441055744.0))
}

func pushBits(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

func bitFold(fname string, op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1, fname)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, bitArg(L, i, fname))
		}
		return pushBits(L, b)
	}
}

func bitShift(fname string, op func(b uint32, n uint) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1, fname)
		n := uint(bitArg(L, 2, fname) & 31)
		return pushBits(L, op(b, n))
	}
}

// bitToHex formats the low n hex digits (default 8); a negative n asks for
// upper-case digits, and n is capped at 8.
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1, "tohex")
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2, "tohex"))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
