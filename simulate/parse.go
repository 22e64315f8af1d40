package simulate

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
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
		r := errorReply(errNotPositive)
		return 0, false, &r
	}
	return n, true, nil
}

// parseIndexes parses the start and stop indexes of LRANGE, LTRIM,
// GETRANGE, ZRANGE and ZREMRANGEBYRANK; Redis reads both before it looks
// the key up.
func parseIndexes(start, stop string) (int64, int64, *Reply) {
	lo, ok1 := parseInt(start)
	hi, ok2 := parseInt(stop)
	if !ok1 || !ok2 {
		r := errorReply(errNotInteger)
		return 0, 0, &r
	}
	return lo, hi, nil
}

// span turns Redis start/stop indexes (negative ones count from the end)
// into a slice range of a sequence of n, or ok=false when it is empty.
func span(start, stop, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if stop >= n {
		stop = n - 1
	}
	if start > stop || start >= n {
		return 0, 0, false
	}
	return start, stop, true
}

// addInt64 adds as Redis does before it stores a sum (INCRBY, HINCRBY, an
// expire time): ok is false when the sum would overflow int64.
func addInt64(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// expireAt turns the expire argument n of SET or EXPIRE into Unix
// milliseconds: seconds are scaled, a relative time is added to now; ok
// is false when either step overflows int64.
func expireAt(n int64, seconds, relative bool, now time.Time) (int64, bool) {
	ms := n
	if seconds {
		if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
			return 0, false
		}
		ms = n * 1000
	}
	if !relative {
		return ms, true
	}
	return addInt64(ms, now.UnixMilli())
}

// conditions are the words that make EXPIRE and ZADD change only some
// keys or members: NX (none yet), XX (one already), GT and LT (compared
// with the current one); ZADD also takes CH and INCR.
type conditions struct{ nx, xx, gt, lt, ch, incr bool }

// readConditions reads the condition words at the start of args (CH and
// INCR only for zadd) and returns how many it read.
func readConditions(args []string, zadd bool) (c conditions, n int) {
	for ; n < len(args); n++ {
		switch word := strings.ToUpper(args[n]); {
		case word == "NX":
			c.nx = true
		case word == "XX":
			c.xx = true
		case word == "GT":
			c.gt = true
		case word == "LT":
			c.lt = true
		case zadd && word == "CH":
			c.ch = true
		case zadd && word == "INCR":
			c.incr = true
		default:
			return c, n
		}
	}
	return c, n
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
