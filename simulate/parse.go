package simulate

import (
	"errors"
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

// strtod parses s as C's strtod does when the whole string must be
// consumed (Redis's zslParseRange): leading white space is skipped, hex
// floats ("0x1p3", "0x10") and overflow to ±inf are accepted, the empty
// string is 0, NaN is rejected.
func strtod(s string) (float64, bool) {
	if s == "" {
		return 0, true // strtod consumes nothing and stops at the terminator
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" || strings.ContainsRune(t, '_') {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, false
	}
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') && !strings.ContainsAny(body, "pP") {
		t += "p0" // C accepts a hex float without a binary exponent; Go does not
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
