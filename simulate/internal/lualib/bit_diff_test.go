package lualib

import "testing"

func TestBitMatchesRedis(t *testing.T) {
	runDiff(t, []diffCase{
		{"tobit small", "return bit.tobit(1)"},
		{"tobit wrap", "return bit.tobit(0xffffffff)"},
		{"tobit 2^32+1", "return bit.tobit(2^32 + 1)"},
		{"tobit round half even", "return bit.tobit(2.5), bit.tobit(3.5), bit.tobit(-2.5)"},
		{"tobit fraction", "return bit.tobit(1.4), bit.tobit(-1.6)"},
		{"tobit big", "return bit.tobit(2^40 + 7), bit.tobit(-2^40 - 7)"},
		{"tobit string", "return bit.tobit('12')"},
		{"tobit hex string", "return bit.tobit('0x10')"},
		{"tobit bad", "return bit.tobit('x')"},
		{"tobit none", "return bit.tobit()"},
		{"tohex default", "return bit.tohex(1)"},
		{"tohex negative", "return bit.tohex(-1)"},
		{"tohex width", "return bit.tohex(255, 2), bit.tohex(255, 4), bit.tohex(0x12345678, 3)"},
		{"tohex upper", "return bit.tohex(255, -4), bit.tohex(-1, -8)"},
		{"tohex wide", "return bit.tohex(1, 12)"},
		{"tohex zero width", "return bit.tohex(1, 0)"},
		{"tohex nil width", "return bit.tohex(1, nil)"},
		{"bnot", "return bit.bnot(0), bit.bnot(-1), bit.bnot(0x7fffffff)"},
		{"band", "return bit.band(0xff, 0x0f), bit.band(-1, 0x12345678, 0xff00)"},
		{"bor", "return bit.bor(1, 2, 4, 8), bit.bor(0x80000000, 0)"},
		{"bxor", "return bit.bxor(0xff, 0x0f), bit.bxor(1)"},
		{"band none", "return bit.band()"},
		{"lshift", "return bit.lshift(1, 0), bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33)"},
		{"rshift", "return bit.rshift(-1, 1), bit.rshift(0x80000000, 31), bit.rshift(-1, 0)"},
		{"arshift", "return bit.arshift(-256, 4), bit.arshift(0x80000000, 31), bit.arshift(256, 4)"},
		{"shift negative count", "return bit.lshift(1, -1), bit.rshift(1, -31)"},
		{"rol", "return bit.rol(0x12345678, 8), bit.rol(-1, 5), bit.rol(1, 0), bit.rol(1, 32)"},
		{"ror", "return bit.ror(0x12345678, 8), bit.ror(1, 1), bit.ror(1, 0)"},
		{"bswap", "return bit.bswap(0x12345678), bit.bswap(-1), bit.bswap(0xff)"},
		{"shift bad", "return bit.lshift(1, 'a')"},
		{"band bad", "return bit.band(1, {})"},
	})
}
