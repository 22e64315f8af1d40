package simulate

import (
	"math"
	"strconv"
	"strings"
)

// formatLuaNumber renders n as Lua 5.1 does for tostring and "..": C's "%.14g"
// (so 0.1+0.2 is "0.3" and 1e15 is "1e+15"), where gopher-lua prints Go's
// shortest form ("0.30000000000000004", "1000000000000000").
func formatLuaNumber(n float64) string {
	return formatG(n, 14)
}

// formatArgNumber renders a number passed to redis.call: Redis 7.0 uses
// "%.17g" there, so 0.1+0.2 reaches the command as "0.30000000000000004".
func formatArgNumber(n float64) string {
	if n == math.Trunc(n) && math.Abs(n) < 1e17 {
		return strconv.FormatInt(int64(n), 10)
	}
	return formatG(n, 17)
}

// formatG is C's printf "%.<prec>g" for the values C prints differently
// from Go: infinities, NaN (glibc prints the sign bit: 0/0 is "-nan") and
// negative zero.
func formatG(n float64, prec int) string {
	switch {
	case math.IsInf(n, 1):
		return "inf"
	case math.IsInf(n, -1):
		return "-inf"
	case math.IsNaN(n):
		if math.Signbit(n) {
			return "-nan"
		}
		return "nan"
	case n == math.Trunc(n) && math.Abs(n) < 1e14:
		if n == 0 && math.Signbit(n) {
			return "-0"
		}
		return strconv.FormatInt(int64(n), 10)
	}
	return strconv.FormatFloat(n, 'g', prec, 64)
}

// parseLuaNumber is Lua 5.1's luaO_str2d, which tonumber and string
// arithmetic use: C strtod (decimal, exponents, "inf", "nan", hex) or, when
// strtod stops at an 'x', strtoul base 16; surrounding white space is
// allowed, anything else after the number is not.
func parseLuaNumber(s string) (float64, bool) {
	t := strings.Trim(s, " \t\n\r\f\v")
	if t == "" {
		return 0, false
	}
	body, neg := t, false
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		return parseHex(body, neg)
	}
	if !plainDecimal(body) {
		switch strings.ToLower(body) {
		case "inf", "infinity":
			return signed(math.Inf(1), neg), true
		case "nan":
			return signed(math.NaN(), neg), true
		}
		return 0, false
	}
	f, err := strconv.ParseFloat(body, 64)
	if err != nil {
		// ParseFloat reports range errors with ±Inf or 0, as strtod does.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return signed(f, neg), true
}

func signed(f float64, neg bool) float64 {
	if neg {
		return -f
	}
	return f
}

// plainDecimal reports whether s is digits, an optional '.', and an
// optional exponent: the subset of strtod's syntax that Go's ParseFloat
// must not widen (ParseFloat also takes "_" separators and hex floats).
func plainDecimal(s string) bool {
	i, digits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// parseLuaNumberBase is tonumber(s, base) for a base other than 10: Lua
// 5.1 uses strtoul, so only non-negative integers in that base are accepted.
func parseLuaNumberBase(s string, base int) (float64, bool) {
	t := strings.Trim(s, " \t\n\r\f\v")
	if t == "" {
		return 0, false
	}
	u, err := strconv.ParseUint(strings.ToLower(t), base, 64)
	if err != nil {
		return 0, false
	}
	return float64(u), true
}

// parseHex reads "0x..." as glibc's strtod does: hex digits with an
// optional fraction and binary exponent ("0x1.8" is 1.5, "0x1p4" is 16).
func parseHex(body string, neg bool) (float64, bool) {
	digits := body[2:]
	if strings.ContainsRune(digits, '_') || digits == "" {
		return 0, false
	}
	if !strings.ContainsAny(digits, ".pP") {
		u, err := strconv.ParseUint(digits, 16, 64)
		if err != nil {
			return 0, false
		}
		return signed(float64(u), neg), true
	}
	if !strings.ContainsAny(digits, "pP") {
		body += "p0" // Go requires the exponent that C makes optional
	}
	f, err := strconv.ParseFloat(body, 64)
	if err != nil {
		return 0, false
	}
	return signed(f, neg), true
}
