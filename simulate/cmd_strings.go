package simulate

import (
	"math"
	"strconv"
	"strings"
)

func init() {
	commands["get"] = cmdGet
	commands["set"] = cmdSet
	commands["setnx"] = cmdSetNX
	commands["incr"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return incrBy(ks, cc, a[1], 1) }
	commands["decr"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return incrBy(ks, cc, a[1], -1) }
	commands["incrby"] = cmdIncrBy(1)
	commands["decrby"] = cmdIncrBy(-1)
	commands["strlen"] = cmdStrlen
	commands["mget"] = cmdMGet
	commands["mset"] = cmdMSet
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
		return errorReply("ERR wrong number of arguments for 'mset' command")
	}
	for i := 1; i+1 < len(a); i += 2 {
		ks.keys[a[i]] = &value{kind: kindString, str: a[i+1]}
	}
	return okReply()
}

func cmdGet(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return nilReply()
	}
	return bulkReply(v.str)
}

func cmdStrlen(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	return intReply(int64(len(v.str)))
}

func cmdSetNX(ks *Keyspace, cc *CallContext, a []string) Reply {
	if ks.lookup(cc.Now, a[1]) != nil {
		return intReply(0)
	}
	ks.keys[a[1]] = &value{kind: kindString, str: a[2]}
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
		if n <= 0 {
			return errorReply(errInvalidSetEx)
		}
		ms := n
		if unit == "EX" || unit == "EXAT" {
			if n > math.MaxInt64/1000 {
				return errorReply(errInvalidSetEx)
			}
			ms = n * 1000
		}
		if unit == "EX" || unit == "PX" {
			now := cc.Now.UnixMilli()
			if ms > math.MaxInt64-now {
				return errorReply(errInvalidSetEx)
			}
			ms += now
		}
		exp = ms
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
	v := &value{kind: kindString, str: a[2], exp: exp}
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
				return errorReply("ERR decrement would overflow")
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
		n, ok := parseInt(v.str)
		if !ok {
			return errorReply(errNotInteger)
		}
		cur = n
	}
	if (by > 0 && cur > math.MaxInt64-by) || (by < 0 && cur < math.MinInt64-by) {
		return errorReply(errOverflow)
	}
	cur += by
	if v == nil {
		v = &value{kind: kindString}
		ks.keys[key] = v
	}
	v.str = strconv.FormatInt(cur, 10)
	return intReply(cur)
}
