package simulate

import (
	"math"
	"strconv"
	"strings"
)

// parseInt parses like Redis's string2ll: an optional '-', digits, no
// leading zeros, no spaces or '+', within int64.
func parseInt(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || (len(digits) > 1 && digits[0] == '0') || (s[0] == '-' && digits == "0") {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseFloat parses a score as Redis does: strtod, "inf"/"-inf" allowed,
// NaN and trailing garbage rejected.
func parseFloat(s string) (float64, bool) {
	if s == "" || strings.TrimSpace(s) != s {
		return 0, false
	}
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// optionalCount parses the count of LPOP, RPOP, SPOP, ZPOPMIN and ZPOPMAX:
// argv[2] when present. withCount says whether it was given.
func optionalCount(a []string) (count int64, withCount bool, bad *Reply) {
	if len(a) > 3 {
		r := errorReply(errSyntax)
		return 0, false, &r
	}
	if len(a) < 3 {
		return 1, false, nil
	}
	n, ok := parseInt(a[2])
	if !ok || n < 0 {
		r := errorReply("ERR value is out of range, must be positive")
		return 0, false, &r
	}
	return n, true, nil
}
