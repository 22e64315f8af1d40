package lualib

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// formatG formats f like C's printf("%.<prec>g") on glibc.
func formatG(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		// Redis prints NaN without a sign whichever bit Lua's arithmetic
		// left set (checked against the server's cjson).
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if prec == 0 {
		prec = 1
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= prec {
		mant := trimZeros(e[:i])
		sign := e[i+1]
		digits := strings.TrimLeft(e[i+2:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + string(sign) + digits
	}
	return trimZeros(strconv.FormatFloat(f, 'f', prec-1-exp, 64))
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// cStrtod parses the longest prefix of s that C's strtod accepts (decimal,
// hexadecimal, inf, infinity, nan) and returns the value and the length used;
// n == 0 means no number was found.
func cStrtod(s string) (v float64, n int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(x float64) float64 {
		if neg {
			return -x
		}
		return x
	}
	rest := strings.ToLower(s[i:])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return sign(math.Inf(1)), i + 8
	case strings.HasPrefix(rest, "inf"):
		return sign(math.Inf(1)), i + 3
	case strings.HasPrefix(rest, "nan"):
		j := i + 3
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (isAlnum(s[k]) || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return sign(math.NaN()), j
	}
	if strings.HasPrefix(rest, "0x") {
		start := i + 2
		j, digits := scanMantissa(s, start, isHex)
		if digits == 0 {
			return 0, i + 1 // just the "0"
		}
		mant := s[start:j]
		if k := scanExponent(s, j, 'p'); k > j {
			x, _ := strconv.ParseFloat("0x"+mant+s[j:k], 64)
			return sign(x), k
		}
		x, _ := strconv.ParseFloat("0x"+mant+"p0", 64)
		return sign(x), j
	}
	j, digits := scanMantissa(s, i, isDigit)
	if digits == 0 {
		return 0, 0
	}
	j = scanExponent(s, j, 'e')
	x, err := strconv.ParseFloat(s[i:j], 64)
	var ne *strconv.NumError
	if err != nil && !(errors.As(err, &ne) && ne.Err == strconv.ErrRange) {
		return 0, 0
	}
	return sign(x), j
}

// scanExponent returns the end of an exponent part starting at j, or j if
// there is no complete one.
// scanMantissa reads digits (those digit accepts), an optional point and
// more digits from s[j:], as strtod reads a mantissa; it returns where the
// mantissa ends and how many digits it has.
func scanMantissa(s string, j int, digit func(byte) bool) (end, digits int) {
	for j < len(s) && digit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && digit(s[j]) {
			j++
			digits++
		}
	}
	return j, digits
}

func scanExponent(s string, j int, mark byte) int {
	if j >= len(s) || (s[j]|0x20) != mark {
		return j
	}
	k := j + 1
	if k < len(s) && (s[k] == '+' || s[k] == '-') {
		k++
	}
	if k >= len(s) || !isDigit(s[k]) {
		return j
	}
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	return k
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

func isSpace(c byte) bool {
	return c == ' ' || ('\t' <= c && c <= '\r')
}

var errNotNumber = errors.New("not a number")

// parseLuaNumber converts a string to a number as Lua 5.1 does: strtod,
// then hexadecimal integers, surrounded by optional white space.
func parseLuaNumber(s string) (float64, error) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	v, n := cStrtod(s[i:])
	if n == 0 {
		return 0, errNotNumber
	}
	i += n
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i != len(s) {
		return 0, errNotNumber
	}
	return v, nil
}
