package simulate

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["get"] = cmdGet
	commands["set"] = cmdSet
	commands["setnx"] = cmdSetNX
	commands["incr"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return incrBy(ks, cc, a[1], 1) }
	commands["decr"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return incrBy(ks, cc, a[1], -1) }
	commands["incrby"] = cmdIncrBy(1)
	commands["decrby"] = cmdIncrBy(-1)
	commands["strlen"] = cmdLen(kindString)
	commands["mget"] = cmdMGet
	commands["mset"] = cmdMSet
	commands["getset"] = cmdGetSet
	commands["getdel"] = cmdGetDel
	commands["msetnx"] = cmdMSetNX
	commands["append"] = cmdAppend
	commands["getrange"] = cmdGetRange
	commands["setrange"] = cmdSetRange
	commands["incrbyfloat"] = cmdIncrByFloat
	commands["setex"] = cmdSetEx("setex", true)
	commands["psetex"] = cmdSetEx("psetex", false)
	commands["getex"] = cmdGetEx
	commands["substr"] = cmdGetRange
	commands["lcs"] = cmdLCS
}

func cmdMGet(ks *Keyspace, cc *CallContext, a []string) Reply {
	out := make([]Reply, 0, len(a)-1)
	for _, k := range a[1:] {
		if v := ks.lookup(cc.Now, k); v != nil && v.kind == kindString {
			out = append(out, bulkReply(v.str))
		} else {
			out = append(out, nilReply()) // MGET answers nil for keys of other types
		}
	}
	return arrayReply(out)
}

func cmdMSet(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a)%2 != 1 {
		return errorReply(fmt.Sprintf(errWrongArgs, "mset"))
	}
	for i := 1; i+1 < len(a); i += 2 {
		ks.keys[a[i]] = &value{kind: kindString, lru: lruClock(cc.Now), str: a[i+1]}
	}
	return okReply()
}

func cmdGet(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, done, ok := ks.lookupOrReply(cc, a[1], kindString, nilReply())
	if !ok {
		return done
	}
	return bulkReply(v.str)
}

func cmdSetNX(ks *Keyspace, cc *CallContext, a []string) Reply {
	if ks.lookup(cc.Now, a[1]) != nil {
		return intReply(0)
	}
	ks.keys[a[1]] = &value{kind: kindString, lru: lruClock(cc.Now), str: a[2]}
	return intReply(1)
}

// cmdSet implements SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT n|KEEPTTL].
// As in Redis, every option is parsed first (a conflict is a syntax error)
// and the expire time is validated afterwards.
func cmdSet(ks *Keyspace, cc *CallContext, a []string) Reply {
	var nx, xx, get, keepTTL bool
	unit, expArg := "", ""
	for i := 3; i < len(a); i++ {
		opt := strings.ToUpper(a[i])
		switch {
		case opt == "NX" && !xx:
			nx = true
		case opt == "XX" && !nx:
			xx = true
		case opt == "GET":
			get = true
		case opt == "KEEPTTL" && unit == "":
			keepTTL = true
		case (opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") && unit == "" && !keepTTL && i+1 < len(a):
			unit, expArg = opt, a[i+1]
			i++
		default:
			return errorReply(errSyntax)
		}
	}
	var exp int64
	if unit != "" {
		n, ok := parseInt(expArg)
		if !ok {
			return errorReply(errNotInteger)
		}
		if exp, ok = expireAt(n, unit == "EX" || unit == "EXAT", unit == "EX" || unit == "PX", cc.Now); n <= 0 || !ok {
			return errorReply(errInvalidSetEx)
		}
	}
	old := ks.lookup(cc.Now, a[1])
	var prev Reply
	if get {
		switch {
		case old == nil:
			prev = nilReply()
		case old.kind != kindString:
			return errorReply(errWrongType)
		default:
			prev = bulkReply(old.str)
		}
	}
	if (nx && old != nil) || (xx && old == nil) {
		if get {
			return prev
		}
		return nilReply()
	}
	v := &value{kind: kindString, lru: lruClock(cc.Now), str: a[2], exp: exp}
	if keepTTL && old != nil {
		v.exp = old.exp
	}
	ks.keys[a[1]] = v
	if get {
		return prev
	}
	return okReply()
}

func cmdIncrBy(sign int64) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		n, ok := parseInt(a[2])
		if !ok {
			return errorReply(errNotInteger)
		}
		if sign < 0 {
			if n == math.MinInt64 {
				return errorReply(errDecrOverflow)
			}
			n = -n
		}
		return incrBy(ks, cc, a[1], n)
	}
}

func incrBy(ks *Keyspace, cc *CallContext, key string, by int64) Reply {
	v, wrong := ks.getTyped(cc.Now, key, kindString)
	if wrong != nil {
		return *wrong
	}
	var cur int64
	if v != nil {
		var ok bool
		if cur, ok = parseInt(v.str); !ok {
			return errorReply(errNotInteger)
		}
	}
	sum, ok := addInt64(cur, by)
	if !ok {
		return errorReply(errOverflow)
	}
	if v == nil {
		v = &value{kind: kindString, lru: lruClock(cc.Now)}
		ks.keys[key] = v
	}
	v.str = strconv.FormatInt(sum, 10)
	v.strEnc = "" // a new integer object, whatever the old encoding
	return intReply(sum)
}

func cmdGetSet(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	prev := nilReply()
	if v != nil {
		prev = bulkReply(v.str)
	}
	ks.keys[a[1]] = &value{kind: kindString, lru: lruClock(cc.Now), str: a[2]} // GETSET drops the TTL
	return prev
}

func cmdGetDel(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, done, ok := ks.lookupOrReply(cc, a[1], kindString, nilReply())
	if !ok {
		return done
	}
	delete(ks.keys, a[1])
	return bulkReply(v.str)
}

func cmdMSetNX(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a)%2 != 1 {
		return errorReply(fmt.Sprintf(errWrongArgs, "msetnx"))
	}
	for i := 1; i < len(a); i += 2 {
		if ks.lookup(cc.Now, a[i]) != nil {
			return intReply(0)
		}
	}
	for i := 1; i+1 < len(a); i += 2 {
		ks.keys[a[i]] = &value{kind: kindString, lru: lruClock(cc.Now), str: a[i+1]}
	}
	return intReply(1)
}

const maxStringLength = 512 << 20 // proto-max-bulk-len's default

func cmdAppend(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		// A new key stores the argument itself, encoded as SET would.
		ks.keys[a[1]] = &value{kind: kindString, lru: lruClock(cc.Now), str: a[2]}
		return intReply(int64(len(a[2])))
	}
	if len(v.str)+len(a[2]) > maxStringLength {
		return errorReply(errStringTooLong)
	}
	v.str += a[2]
	v.strEnc = "raw"
	return intReply(int64(len(v.str)))
}

func cmdGetRange(ks *Keyspace, cc *CallContext, a []string) Reply {
	start, end, bad := parseIndexes(a[2], a[3])
	if bad != nil {
		return *bad
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindString, bulkReply(""))
	if !ok {
		return done
	}
	n := int64(len(v.str))
	if start < 0 && end < 0 && start > end {
		return bulkReply("")
	}
	if end < 0 && end+n < 0 {
		if ks.profile == Redis80 {
			return bulkReply("") // 8.0: an end before the string's start is an empty range
		}
		end = 0 // unlike LRANGE's, GETRANGE's end before the start means the first byte
	}
	lo, hi, ok := span(start, end, n)
	if !ok {
		return bulkReply("")
	}
	return bulkReply(v.str[lo : hi+1])
}

func cmdSetRange(ks *Keyspace, cc *CallContext, a []string) Reply {
	off, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	if off < 0 {
		return errorReply(errOffsetRange)
	}
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		if a[3] == "" {
			return intReply(0)
		}
		v = &value{kind: kindString, lru: lruClock(cc.Now)}
		ks.keys[a[1]] = v
	}
	if a[3] == "" {
		return intReply(int64(len(v.str)))
	}
	if off+int64(len(a[3])) > maxStringLength {
		return errorReply(errStringTooLong)
	}
	b := []byte(v.str)
	if need := int(off) + len(a[3]); need > len(b) {
		b = append(b, make([]byte, need-len(b))...)
	}
	copy(b[off:], a[3])
	v.str = string(b)
	v.strEnc = "raw"
	return intReply(int64(len(v.str)))
}

func cmdIncrByFloat(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	cur := new(big.Float).SetPrec(longDoublePrec)
	if v != nil {
		f, ok := parseLongDouble(v.str)
		if !ok {
			return errorReply(errNotFloat)
		}
		cur = f
	}
	by, ok := parseLongDouble(a[2])
	if !ok {
		return errorReply(errNotFloat)
	}
	sum, ok := addLongDouble(cur, by)
	if !ok {
		return errorReply(errIncrNaN)
	}
	out := formatLongDouble(sum)
	if v == nil {
		v = &value{kind: kindString, lru: lruClock(cc.Now)}
		ks.keys[a[1]] = v
	}
	v.str = out
	v.strEnc = embstrOrRaw(out)
	return bulkReply(out)
}

// expireArg turns the expire argument of SET, SETEX, PSETEX and GETEX into
// Unix milliseconds as Redis's getExpireMillisecondsOrReply does: not an
// integer is errNotInteger, zero, negative or overflowing is the invalid
// expire time error naming the command.
func expireArg(arg, name string, seconds, relative bool, now time.Time) (int64, *Reply) {
	n, ok := parseInt(arg)
	if !ok {
		r := errorReply(errNotInteger)
		return 0, &r
	}
	at, ok := expireAt(n, seconds, relative, now)
	if n <= 0 || !ok || at <= 0 {
		r := errorReply(fmt.Sprintf(errExpireRange, name))
		return 0, &r
	}
	return at, nil
}

// cmdSetEx implements SETEX and PSETEX key ttl value: SET with EX or PX,
// the expire time checked before the key is touched.
func cmdSetEx(name string, seconds bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		at, bad := expireArg(a[2], name, seconds, true, cc.Now)
		if bad != nil {
			return *bad
		}
		v := &value{kind: kindString, lru: lruClock(cc.Now), str: a[3], exp: at}
		if ks.profile.since72() && v.refcount() == sharedRefcount {
			v.lru = 0 // 7.2 stores the shared integer, which SETEX does not stamp
		}
		ks.keys[a[1]] = v
		return okReply()
	}
}

// cmdGetEx implements GETEX key [EX|PX|EXAT|PXAT n|PERSIST]: the options
// are parsed first (two of them are a syntax error), then the key is read,
// and only then the expire time is checked, as Redis 7.0 orders it.
func cmdGetEx(ks *Keyspace, cc *CallContext, a []string) Reply {
	unit, expArg, persist := "", "", false
	for i := 2; i < len(a); i++ {
		opt := strings.ToUpper(a[i])
		switch {
		case opt == "PERSIST" && unit == "":
			persist = true
		case (opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") && unit == "" && !persist && i+1 < len(a):
			unit, expArg = opt, a[i+1]
			i++
		default:
			return errorReply(errSyntax)
		}
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindString, nilReply())
	if !ok {
		return done
	}
	reply := bulkReply(v.str)
	switch {
	case unit != "":
		at, bad := expireArg(expArg, "getex", unit == "EX" || unit == "EXAT", unit == "EX" || unit == "PX", cc.Now)
		if bad != nil {
			return *bad
		}
		if at <= cc.Now.UnixMilli() {
			delete(ks.keys, a[1]) // an absolute time already past deletes the key
		} else {
			v.exp = at
		}
	case persist:
		v.exp = 0
	}
	return reply
}

// cmdLCS implements LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n]
// [WITHMATCHLEN] with Redis's dynamic programming table, so that among
// several longest common subsequences it picks the one Redis picks.
func cmdLCS(ks *Keyspace, cc *CallContext, a []string) Reply {
	va, vb := ks.lookup(cc.Now, a[1]), ks.lookup(cc.Now, a[2])
	if (va != nil && va.kind != kindString) || (vb != nil && vb.kind != kindString) {
		return errorReply(errLCSNotStrings)
	}
	var sa, sb string
	if va != nil {
		sa = va.str
	}
	if vb != nil {
		sb = vb.str
	}
	var getLen, getIdx, withMatchLen bool
	var minMatch int64
	for j := 3; j < len(a); j++ {
		switch opt := strings.ToUpper(a[j]); {
		case opt == "IDX":
			getIdx = true
		case opt == "LEN":
			getLen = true
		case opt == "WITHMATCHLEN":
			withMatchLen = true
		case opt == "MINMATCHLEN" && j+1 < len(a):
			n, ok := parseInt(a[j+1])
			if !ok {
				return errorReply(errNotInteger)
			}
			minMatch = max(n, 0)
			j++
		default:
			return errorReply(errSyntax)
		}
	}
	if getLen && getIdx {
		return errorReply(errLCSLenAndIdx)
	}
	alen, blen := len(sa), len(sb)
	if int64(alen+1)*int64(blen+1)*4 > maxStringLength {
		return errorReply(errLCSMemory)
	}
	w := blen + 1
	t := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if sa[i-1] == sb[j-1] {
				t[i*w+j] = t[(i-1)*w+j-1] + 1
			} else {
				t[i*w+j] = max(t[(i-1)*w+j], t[i*w+j-1])
			}
		}
	}
	total := t[alen*w+blen]
	if getLen {
		return intReply(int64(total))
	}
	result := make([]byte, total)
	idx := total
	var matches []Reply
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no range open
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if sa[i-1] == sb[j-1] {
			result[idx-1] = sa[i-1]
			switch {
			case aStart == alen:
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			case aStart == i && bStart == j:
				aStart--
				bStart--
			default:
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			matchLen := int64(aEnd - aStart + 1)
			if getIdx && (minMatch == 0 || matchLen >= minMatch) {
				m := []Reply{
					arrayReply([]Reply{intReply(int64(aStart)), intReply(int64(aEnd))}),
					arrayReply([]Reply{intReply(int64(bStart)), intReply(int64(bEnd))}),
				}
				if withMatchLen {
					m = append(m, intReply(matchLen))
				}
				matches = append(matches, arrayReply(m))
			}
			aStart = alen
		}
	}
	if getIdx {
		if matches == nil {
			matches = []Reply{}
		}
		return Reply{Kind: KindMap, Elems: []Reply{bulkReply("matches"), arrayReply(matches), bulkReply("len"), intReply(int64(total))}}
	}
	return bulkReply(string(result))
}
