package lualib

import "testing"

// TestSweepsMatchRedis runs each library over a few hundred generated values
// in one chunk, to cover number formatting and integer edges broadly.
func TestSweepsMatchRedis(t *testing.T) {
	const numbers = `local ns = {0, -0.0, 1, -1, 0.5, 2^31, -2^31, 2^31 - 1, 2^32, 2^53, 2^53 + 1, 2^63, -2^63, 2^64, 1e300, 5e-324, 2.2250738585072014e-308}
for i = 1, 240 do ns[#ns + 1] = ((i * 7919) % 1000 - 500) / 7 * 10 ^ (i % 44 - 22) end
for i = 1, 40 do ns[#ns + 1] = 2 ^ i - 1 ns[#ns + 1] = -(2 ^ i) ns[#ns + 1] = 2 ^ i + 0.5 end
`
	runDiff(t, []diffCase{
		{"cjson numbers", numbers + "return cjson.encode(ns)"},
		{"cjson numbers roundtrip", numbers + "return cjson.decode(cjson.encode(ns))"},
		{"cmsgpack numbers", numbers + "return cmsgpack.pack(unpack(ns))"},
		{"cmsgpack numbers roundtrip", numbers + "return cmsgpack.unpack(cmsgpack.pack(ns))"},
		{"struct doubles", numbers + "local out = {} for i, n in ipairs(ns) do out[i] = struct.pack('<d>f', n, n) end return table.concat(out)"},
		{"struct ints", numbers + "local out = {} for i, n in ipairs(ns) do if n > -2^62 and n < 2^62 then out[#out + 1] = struct.pack('<i8>I4h', n, n, n) end end return table.concat(out)"},
		{"bit ops", numbers + "local out = {} for i, n in ipairs(ns) do if n == n and n > -2^51 and n < 2^51 then out[#out + 1] = bit.tohex(n) .. bit.tobit(n) .. bit.rol(n, i) .. bit.arshift(n, i) .. bit.bswap(n) end end return table.concat(out, ',')"},
		{"cjson strings", "local s = {} for i = 0, 255 do s[#s + 1] = string.char(i) end return cjson.encode(table.concat(s))"},
		{"cjson decode strings", "local s = {} for i = 0, 255 do s[#s + 1] = string.char(i) end local j = cjson.encode(table.concat(s)) return cjson.decode(j) == table.concat(s)"},
		{"cjson escapes", "local out = {} for c = 32, 126 do out[#out + 1] = tostring(pcall(cjson.decode, '\"\\\\' .. string.char(c) .. '\"')) end return table.concat(out, ',')"},
		{"cjson number texts", "local out = {} for _, s in ipairs({'1', '-1', '1.0', '1e5', '1E+5', '1e-5', '0.5', '-0', '1e999', '-1e999', '0x1p4', '0X1F', '1_0', '00', '-01', '.1', '1..2', '1e+-2', 'Infinity', 'NaN', '-nan', '  7  ', '1 2'}) do local ok, v = pcall(cjson.decode, s) out[#out + 1] = tostring(ok) .. ':' .. (ok and cjson.encode_invalid_numbers(true) and cjson.encode(v) or tostring(v)) end cjson.encode_invalid_numbers(false) return table.concat(out, ',')"},
	})
}
