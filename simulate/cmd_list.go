package simulate

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

func init() {
	commands["lpush"] = cmdPush(true)
	commands["rpush"] = cmdPush(false)
	commands["lpop"] = cmdPop(true)
	commands["rpop"] = cmdPop(false)
	commands["llen"] = cmdLen(kindList)
	commands["lrange"] = cmdLRange
	commands["lindex"] = cmdLIndex
	commands["lset"] = cmdLSet
	commands["lrem"] = cmdLRem
	commands["ltrim"] = cmdLTrim
	commands["rpoplpush"] = func(ks *Keyspace, cc *CallContext, a []string) Reply {
		return move(ks, cc, a[1], a[2], false, true)
	}
	commands["lmove"] = cmdLMove
	commands["lpos"] = cmdLPos
	// Blocking pops never block inside a script: they act as their plain form.
	commands["blpop"] = cmdBPop(true)
	commands["brpop"] = cmdBPop(false)
	commands["lpushx"] = cmdPushX(true)
	commands["rpushx"] = cmdPushX(false)
	commands["linsert"] = cmdLInsert
	commands["lmpop"] = cmdLMPop(false)
	commands["blmpop"] = cmdLMPop(true)
}

// cmdPushX implements LPUSHX and RPUSHX: a push that only an existing
// list takes.
func cmdPushX(left bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, done, ok := ks.lookupOrReply(cc, a[1], kindList, intReply(0))
		if !ok {
			return done
		}
		for _, x := range a[2:] {
			if left {
				v.list = append([]string{x}, v.list...)
			} else {
				v.list = append(v.list, x)
			}
		}
		return intReply(int64(len(v.list)))
	}
}

// cmdLInsert implements LINSERT key BEFORE|AFTER pivot element: the
// list's new length, 0 for a missing key and -1 when pivot is not found.
func cmdLInsert(ks *Keyspace, cc *CallContext, a []string) Reply {
	where := strings.ToUpper(a[2])
	if where != "BEFORE" && where != "AFTER" {
		return errorReply(errSyntax)
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindList, intReply(0))
	if !ok {
		return done
	}
	for i, x := range v.list {
		if x != a[3] {
			continue
		}
		if where == "AFTER" {
			i++
		}
		v.list = append(v.list, "")
		copy(v.list[i+1:], v.list[i:])
		v.list[i] = a[4]
		return intReply(int64(len(v.list)))
	}
	return intReply(-1)
}

// cmdLMPop implements LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT n]
// and (block) BLMPOP timeout numkeys ...: up to n elements from the first
// non-empty list, as [key, [elements]]. A script never blocks, so BLMPOP
// answers a null array at once when every list is empty, as Redis does
// for a client that may not block.
func cmdLMPop(block bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		numIdx := 1
		if block {
			numIdx = 2
		}
		numKeys, ok := parseInt(a[numIdx])
		if !ok || numKeys < 1 {
			return errorReply(errListNumKeys)
		}
		whereIdx := int64(numIdx) + numKeys + 1
		if numKeys >= int64(len(a)) || whereIdx >= int64(len(a)) {
			return errorReply(errSyntax)
		}
		where := strings.ToUpper(a[whereIdx])
		if where != "LEFT" && where != "RIGHT" {
			return errorReply(errSyntax)
		}
		count := int64(-1)
		for j := whereIdx + 1; j < int64(len(a)); j++ {
			if count == -1 && strings.EqualFold(a[j], "COUNT") && j+1 < int64(len(a)) {
				j++
				if count, ok = parseInt(a[j]); !ok || count < 1 {
					return errorReply(errListCount)
				}
				continue
			}
			return errorReply(errSyntax)
		}
		if count == -1 {
			count = 1
		}
		if block {
			if bad := blockTimeout(ks.profile, cc, a[1]); bad != nil {
				return *bad
			}
		}
		for _, key := range a[numIdx+1 : whereIdx] {
			v, wrong := ks.listFor(cc, key, false)
			if wrong != nil {
				return *wrong
			}
			if v == nil {
				continue
			}
			n := min(count, int64(len(v.list)))
			popped := make([]Reply, 0, n)
			for i := int64(0); i < n; i++ {
				var x string
				if where == "LEFT" {
					x, v.list = v.list[0], v.list[1:]
				} else {
					x, v.list = v.list[len(v.list)-1], v.list[:len(v.list)-1]
				}
				popped = append(popped, bulkReply(x))
			}
			ks.dropIfEmpty(key, v)
			return arrayReply([]Reply{bulkReply(key), arrayReply(popped)})
		}
		return Reply{Kind: KindNil} // a null array: nothing to pop, and no blocking in scripts
	}
}

func (ks *Keyspace) listFor(cc *CallContext, key string, create bool) (*value, *Reply) {
	return ks.valueFor(cc, key, kindList, create)
}

func cmdPush(left bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, wrong := ks.listFor(cc, a[1], true)
		if wrong != nil {
			return *wrong
		}
		for _, x := range a[2:] {
			if left {
				v.list = append([]string{x}, v.list...)
			} else {
				v.list = append(v.list, x)
			}
		}
		return intReply(int64(len(v.list)))
	}
}

func cmdPop(left bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		count, withCount, bad := optionalCount(a)
		if bad != nil {
			return *bad
		}
		v, done, ok := ks.lookupOrReply(cc, a[1], kindList, nilReply())
		if !ok {
			return done
		}
		if count > int64(len(v.list)) {
			count = int64(len(v.list))
		}
		popped := make([]Reply, 0, count)
		for i := int64(0); i < count; i++ {
			var x string
			if left {
				x, v.list = v.list[0], v.list[1:]
			} else {
				x, v.list = v.list[len(v.list)-1], v.list[:len(v.list)-1]
			}
			popped = append(popped, bulkReply(x))
		}
		ks.dropIfEmpty(a[1], v)
		if !withCount {
			return popped[0]
		}
		return arrayReply(popped)
	}
}

func cmdBPop(left bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if bad := blockTimeout(ks.profile, cc, a[len(a)-1]); bad != nil {
			return *bad
		}
		for _, key := range a[1 : len(a)-1] {
			v, wrong := ks.listFor(cc, key, false)
			if wrong != nil {
				return *wrong
			}
			if v == nil {
				continue
			}
			r := cmdPop(left)(ks, cc, []string{"pop", key})
			return arrayReply([]Reply{bulkReply(key), r})
		}
		return Reply{Kind: KindNil} // a null array: nothing to pop, and no blocking in scripts
	}
}

func cmdLRange(ks *Keyspace, cc *CallContext, a []string) Reply {
	start, stop, bad := parseIndexes(a[2], a[3])
	if bad != nil {
		return *bad
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindList, arrayReply([]Reply{}))
	if !ok {
		return done
	}
	out := []Reply{}
	if lo, hi, ok := span(start, stop, int64(len(v.list))); ok {
		for _, x := range v.list[lo : hi+1] {
			out = append(out, bulkReply(x))
		}
	}
	return arrayReply(out)
}

func cmdLIndex(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, i, done, ok := ks.listElem(cc, a, nilReply(), nilReply())
	if !ok {
		return done
	}
	return bulkReply(v.list[i])
}

func cmdLSet(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, i, done, ok := ks.listElem(cc, a, errorReply(errNoKey), errorReply(errIndexRange))
	if !ok {
		return done
	}
	v.list[i] = a[3]
	return okReply()
}

// listElem finds the element LINDEX and LSET key index address (a
// negative index counts from the end). As in Redis the key is looked up
// before the index is parsed; when ok is false done is the whole reply,
// missing for a missing key, an error for a bad index, or outside for one
// outside the list.
func (ks *Keyspace) listElem(cc *CallContext, a []string, missing, outside Reply) (v *value, i int64, done Reply, ok bool) {
	if v, done, ok = ks.lookupOrReply(cc, a[1], kindList, missing); !ok {
		return nil, 0, done, false
	}
	if i, ok = parseInt(a[2]); !ok {
		return nil, 0, errorReply(errNotInteger), false
	}
	if i < 0 {
		i += int64(len(v.list))
	}
	if i < 0 || i >= int64(len(v.list)) {
		return nil, 0, outside, false
	}
	return v, i, Reply{}, true
}

func cmdLRem(ks *Keyspace, cc *CallContext, a []string) Reply {
	count, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindList, intReply(0))
	if !ok {
		return done
	}
	var removed int64
	keep := make([]string, 0, len(v.list))
	if count >= 0 {
		for _, x := range v.list {
			if x == a[3] && (count == 0 || removed < count) {
				removed++
				continue
			}
			keep = append(keep, x)
		}
	} else {
		for i := len(v.list) - 1; i >= 0; i-- {
			if v.list[i] == a[3] && removed < -count {
				removed++
				continue
			}
			keep = append([]string{v.list[i]}, keep...)
		}
	}
	v.list = keep
	ks.dropIfEmpty(a[1], v)
	return intReply(removed)
}

func cmdLTrim(ks *Keyspace, cc *CallContext, a []string) Reply {
	start, stop, bad := parseIndexes(a[2], a[3])
	if bad != nil {
		return *bad
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindList, okReply())
	if !ok {
		return done
	}
	if lo, hi, ok := span(start, stop, int64(len(v.list))); ok {
		v.list = append([]string(nil), v.list[lo:hi+1]...)
	} else {
		v.list = nil
	}
	ks.dropIfEmpty(a[1], v)
	return okReply()
}

func cmdLMove(ks *Keyspace, cc *CallContext, a []string) Reply {
	from, to := strings.ToUpper(a[3]), strings.ToUpper(a[4])
	if (from != "LEFT" && from != "RIGHT") || (to != "LEFT" && to != "RIGHT") {
		return errorReply(errSyntax)
	}
	return move(ks, cc, a[1], a[2], from == "LEFT", to == "LEFT")
}

func move(ks *Keyspace, cc *CallContext, src, dst string, fromLeft, toLeft bool) Reply {
	sv, wrong := ks.listFor(cc, src, false)
	if wrong != nil {
		return *wrong
	}
	if sv == nil {
		return nilReply()
	}
	if _, wrong := ks.listFor(cc, dst, false); wrong != nil {
		return *wrong
	}
	var x string
	if fromLeft {
		x, sv.list = sv.list[0], sv.list[1:]
	} else {
		x, sv.list = sv.list[len(sv.list)-1], sv.list[:len(sv.list)-1]
	}
	ks.dropIfEmpty(src, sv)
	dv, _ := ks.listFor(cc, dst, true)
	if toLeft {
		dv.list = append([]string{x}, dv.list...)
	} else {
		dv.list = append(dv.list, x)
	}
	return bulkReply(x)
}

// cmdLPos implements LPOS key element [RANK rank] [COUNT num-matches]
// [MAXLEN len] as Redis 7.0 does, including its int64 arithmetic: RANK
// -9223372036854775808 negates to itself, so every match qualifies and
// COUNT never stops the scan.
func cmdLPos(ks *Keyspace, cc *CallContext, a []string) Reply {
	rank, count, maxlen := int64(1), int64(-1), int64(0) // count -1: not given
	for j := 3; j < len(a); j++ {
		opt := strings.ToUpper(a[j])
		moreArgs := j < len(a)-1
		switch {
		case opt == "RANK" && moreArgs:
			j++
			n, ok := parseInt(a[j])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n == 0 {
				return errorReply(errLPosRankZero)
			}
			if n == math.MinInt64 && ks.profile.since72() {
				return errorReply(errCountRange) // 7.2 refuses a rank it cannot negate
			}
			rank = n
		case (opt == "COUNT" || opt == "MAXLEN") && moreArgs:
			j++
			n, ok := parseInt(a[j])
			if !ok || n < 0 {
				return errorReply(fmt.Sprintf(errNegativeOption, opt))
			}
			if opt == "COUNT" {
				count = n
			} else {
				maxlen = n
			}
		default:
			return errorReply(errSyntax)
		}
	}
	fromTail := rank < 0
	if fromTail {
		rank = -rank
	}
	v, wrong := ks.listFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		if count != -1 {
			return arrayReply([]Reply{})
		}
		return nilReply()
	}
	n := int64(len(v.list))
	var out []Reply
	matches := int64(0)
	for index := int64(0); index < n && (maxlen == 0 || index < maxlen); index++ {
		pos := index
		if fromTail {
			pos = n - index - 1
		}
		if v.list[pos] != a[2] {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		if count == -1 {
			return intReply(pos)
		}
		out = append(out, intReply(pos))
		if count != 0 && matches-rank+1 >= count {
			break
		}
	}
	if count == -1 {
		return nilReply()
	}
	return arrayReply(append([]Reply{}, out...))
}

// blockTimeout checks a blocking command's timeout in seconds as Redis's
// getTimeoutFromObjectOrReply does: a long double (hex too, as strtold
// reads it) made milliseconds rounded up, so -0.0001 is 0; one too large
// for int64 milliseconds converts, on x86, to the most negative and is
// refused as negative.
func blockTimeout(p Profile, cc *CallContext, arg string) *Reply {
	f, ok := parseLongDouble(arg)
	if !ok {
		body := strings.TrimLeft(strings.ToLower(arg), "+-")
		h, hexOK := strtod(arg)
		if !strings.HasPrefix(body, "0x") || !hexOK || arg[0] == ' ' {
			r := errorReply(errTimeoutNotFloat)
			return &r
		}
		f = new(big.Float).SetPrec(longDoublePrec).SetFloat64(h)
	}
	ms := new(big.Float).SetPrec(longDoublePrec).Mul(f, big.NewFloat(1000))
	if p.since72() && ms.Cmp(big.NewFloat(-1)) <= 0 {
		r := errorReply(errTimeoutNegative)
		return &r
	}
	if ms.IsInf() || ms.Cmp(big.NewFloat(math.MaxInt64)) >= 0 || ms.Cmp(big.NewFloat(-1)) <= 0 {
		r := errorReply(p.timeoutRangeError())
		return &r
	}
	if p.since72() {
		// 7.2 also refuses a deadline (now plus the timeout) past int64.
		whole, _ := new(big.Float).Add(ms, big.NewFloat(0.999999)).Int64()
		if whole > 0 && whole > math.MaxInt64-cc.Now.UnixMilli() {
			r := errorReply(p.timeoutRangeError())
			return &r
		}
	}
	return nil
}
