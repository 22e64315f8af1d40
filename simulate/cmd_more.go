package simulate

import (
	"math"
)

func init() {
	commands["getset"] = cmdGetSet
	commands["getdel"] = cmdGetDel
	commands["msetnx"] = cmdMSetNX
	commands["append"] = cmdAppend
	commands["getrange"] = cmdGetRange
	commands["setrange"] = cmdSetRange
	commands["expiretime"] = cmdExpireTime(false)
	commands["pexpiretime"] = cmdExpireTime(true)
	commands["rename"] = cmdRename
	commands["zincrby"] = cmdZIncrBy
	commands["zremrangebyrank"] = cmdZRemRangeByRank
	commands["zpopmin"] = cmdZPop(false)
	commands["zpopmax"] = cmdZPop(true)
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
	ks.keys[a[1]] = &value{kind: kindString, str: a[2]} // GETSET drops the TTL
	return prev
}

func cmdGetDel(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return nilReply()
	}
	delete(ks.keys, a[1])
	return bulkReply(v.str)
}

func cmdMSetNX(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a)%2 != 1 {
		return errorReply("ERR wrong number of arguments for 'msetnx' command")
	}
	for i := 1; i < len(a); i += 2 {
		if ks.lookup(cc.Now, a[i]) != nil {
			return intReply(0)
		}
	}
	for i := 1; i+1 < len(a); i += 2 {
		ks.keys[a[i]] = &value{kind: kindString, str: a[i+1]}
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
		v = &value{kind: kindString}
		ks.keys[a[1]] = v
	}
	if len(v.str)+len(a[2]) > maxStringLength {
		return errorReply("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	}
	v.str += a[2]
	return intReply(int64(len(v.str)))
}

func cmdGetRange(ks *Keyspace, cc *CallContext, a []string) Reply {
	start, ok1 := parseInt(a[2])
	end, ok2 := parseInt(a[3])
	if !ok1 || !ok2 {
		return errorReply(errNotInteger)
	}
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return bulkReply("")
	}
	n := int64(len(v.str))
	if start < 0 && end < 0 && start > end {
		return bulkReply("")
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return bulkReply("")
	}
	return bulkReply(v.str[start : end+1])
}

func cmdSetRange(ks *Keyspace, cc *CallContext, a []string) Reply {
	off, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	if off < 0 {
		return errorReply("ERR offset is out of range")
	}
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		if a[3] == "" {
			return intReply(0)
		}
		v = &value{kind: kindString}
		ks.keys[a[1]] = v
	}
	if a[3] == "" {
		return intReply(int64(len(v.str)))
	}
	if off+int64(len(a[3])) > maxStringLength {
		return errorReply("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	}
	b := []byte(v.str)
	if need := int(off) + len(a[3]); need > len(b) {
		b = append(b, make([]byte, need-len(b))...)
	}
	copy(b[off:], a[3])
	v.str = string(b)
	return intReply(int64(len(v.str)))
}

func cmdExpireTime(millis bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v := ks.lookup(cc.Now, a[1])
		switch {
		case v == nil:
			return intReply(-2)
		case v.exp == 0:
			return intReply(-1)
		case millis:
			return intReply(v.exp)
		}
		return intReply((v.exp + 500) / 1000)
	}
}

func cmdRename(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		return errorReply(errNoKey)
	}
	if a[1] != a[2] {
		delete(ks.keys, a[1])
		ks.keys[a[2]] = v // the TTL moves with the value
	}
	return okReply()
}

func cmdZIncrBy(ks *Keyspace, cc *CallContext, a []string) Reply {
	return cmdZAdd(ks, cc, []string{"zadd", a[1], "INCR", a[2], a[3]})
}

func cmdZRemRangeByRank(ks *Keyspace, cc *CallContext, a []string) Reply {
	start, ok1 := parseInt(a[2])
	stop, ok2 := parseInt(a[3])
	if !ok1 || !ok2 {
		return errorReply(errNotInteger)
	}
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	ms := sortedMembers(v.zset)
	lo, hi, ok := span(start, stop, int64(len(ms)))
	if !ok {
		return intReply(0)
	}
	for _, m := range ms[lo : hi+1] {
		delete(v.zset, m.Member)
	}
	if len(v.zset) == 0 {
		delete(ks.keys, a[1])
	}
	return intReply(hi - lo + 1)
}

// cmdZPop implements ZPOPMIN/ZPOPMAX key [count]: RESP2 gives a flat
// member, score list; RESP3 nests pairs when a count was given.
func cmdZPop(max bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		count, withCount, bad := optionalCount(a)
		if bad != nil {
			return *bad
		}
		v, wrong := ks.zsetFor(cc, a[1], false)
		if wrong != nil {
			return *wrong
		}
		if v == nil {
			return arrayReply([]Reply{})
		}
		ms := sortedMembers(v.zset)
		if max {
			for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
				ms[i], ms[j] = ms[j], ms[i]
			}
		}
		count = int64(math.Min(float64(count), float64(len(ms))))
		popped := ms[:count]
		for _, m := range popped {
			delete(v.zset, m.Member)
		}
		if len(v.zset) == 0 {
			delete(ks.keys, a[1])
		}
		if cc.RESP == 3 && !withCount && len(popped) == 1 {
			return arrayReply([]Reply{bulkReply(popped[0].Member), doubleReply(popped[0].Score)})
		}
		return withScores(cc, popped, true)
	}
}
