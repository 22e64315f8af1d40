package simulate

import (
	"math/big"
	"strings"
)

// Redis adds floats in C's long double (x87 extended: a 64-bit mantissa on
// amd64) and prints the result with "%.17Lf", trailing zeros trimmed.
// big.Float at 64 bits of precision, rounding to nearest even, reproduces
// both; float64 would print 0.1 as 0.10000000000000001.
const longDoublePrec = 64

// parseLongDouble parses like Redis's string2ld: the whole string, no
// leading space, no NaN.
func parseLongDouble(s string) (*big.Float, bool) {
	if s == "" || s[0] == ' ' || s[0] == '\t' || strings.TrimSpace(s) != s {
		return nil, false
	}
	lower := strings.ToLower(s)
	switch lower {
	case "inf", "+inf", "infinity", "+infinity":
		return new(big.Float).SetInf(false), true
	case "-inf", "-infinity":
		return new(big.Float).SetInf(true), true
	}
	if strings.Contains(lower, "nan") || strings.Contains(lower, "inf") || strings.Contains(lower, "0x") {
		// NaN is rejected as Redis does; hex floats, which C's strtold also
		// reads, are left out of the simulator.
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 10, longDoublePrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	return f, true
}

// formatLongDouble prints like "%.17Lf" with trailing zeros (and a bare
// point) removed.
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func addLongDouble(cur, by *big.Float) (*big.Float, bool) {
	if cur.IsInf() || by.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(cur, by)
	// x87 extended tops out near 1.19e4932; beyond it the sum is infinite.
	if sum.MantExp(nil) > 16384 {
		return nil, false
	}
	return sum, true
}
