package simulate

import (
	"math"
	"sort"
	"strings"
)

func init() {
	commands["zadd"] = cmdZAdd
	commands["zrem"] = cmdZRem
	commands["zscore"] = cmdZScore
	commands["zcard"] = cmdZCard
	commands["zrank"] = cmdZRank(false)
	commands["zrevrank"] = cmdZRank(true)
	commands["zrange"] = cmdZRange
	commands["zcount"] = cmdZCount
	commands["zrangebyscore"] = cmdZRangeByScore
	commands["zremrangebyscore"] = cmdZRemRangeByScore
}

// sortedMembers orders a sorted set by score, then member, as Redis does.
func sortedMembers(z map[string]float64) []ZMember {
	out := make([]ZMember, 0, len(z))
	for m, s := range z {
		out = append(out, ZMember{Member: m, Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score < out[j].Score
		}
		return out[i].Member < out[j].Member
	})
	return out
}

func (ks *Keyspace) zsetFor(cc *CallContext, key string, create bool) (*value, *Reply) {
	return ks.valueFor(cc, key, kindZSet, create)
}

func cmdZAdd(ks *Keyspace, cc *CallContext, a []string) Reply {
	var nx, xx, gt, lt, ch, incr bool
	i := 2
flags:
	for ; i < len(a); i++ {
		switch strings.ToUpper(a[i]) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		case "CH":
			ch = true
		case "INCR":
			incr = true
		default:
			break flags
		}
	}
	pairs := a[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return errorReply(errSyntax)
	}
	if nx && xx {
		return errorReply(errZaddNXXX)
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		return errorReply(errZaddGTLTNX)
	}
	if incr && len(pairs) > 2 {
		return errorReply(errZaddIncr)
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		s, ok := parseFloat(pairs[2*j])
		if !ok {
			return errorReply(errNotFloat)
		}
		scores[j] = s
	}
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		if xx {
			if incr {
				return nilReply()
			}
			return intReply(0)
		}
		v, _ = ks.zsetFor(cc, a[1], true)
	}
	var added, changed int64
	for j, s := range scores {
		m := pairs[2*j+1]
		cur, exists := v.zset[m]
		if (nx && exists) || (xx && !exists) {
			if incr {
				return nilReply()
			}
			continue
		}
		if incr && exists { // a new member takes the increment as is: -0 stays -0
			s += cur
			if math.IsNaN(s) {
				return errorReply("ERR resulting score is not a number (NaN)")
			}
		}
		if exists && ((gt && s <= cur) || (lt && s >= cur)) {
			if incr {
				return nilReply()
			}
			continue
		}
		if !exists {
			added++
		} else if s != cur {
			changed++
		}
		v.zset[m] = s
		if incr {
			return doubleReply(s)
		}
	}
	if len(v.zset) == 0 {
		delete(ks.keys, a[1])
	}
	if ch {
		return intReply(added + changed)
	}
	return intReply(added)
}

func cmdZRem(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	var n int64
	for _, m := range a[2:] {
		if _, ok := v.zset[m]; ok {
			delete(v.zset, m)
			n++
		}
	}
	if len(v.zset) == 0 {
		delete(ks.keys, a[1])
	}
	return intReply(n)
}

func cmdZScore(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return nilReply()
	}
	s, ok := v.zset[a[2]]
	if !ok {
		return nilReply()
	}
	return doubleReply(s)
}

func cmdZCard(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	return intReply(int64(len(v.zset)))
}

func cmdZRank(rev bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, wrong := ks.zsetFor(cc, a[1], false)
		if wrong != nil {
			return *wrong
		}
		if v == nil {
			return nilReply()
		}
		if _, ok := v.zset[a[2]]; !ok {
			return nilReply()
		}
		members := sortedMembers(v.zset)
		for i, m := range members {
			if m.Member == a[2] {
				if rev {
					return intReply(int64(len(members) - 1 - i))
				}
				return intReply(int64(i))
			}
		}
		return nilReply()
	}
}

// withScores renders members as Redis does: RESP3 nests [member, score]
// pairs; RESP2 gives one flat list, member then score (as a bulk string).
func withScores(cc *CallContext, ms []ZMember, scores bool) Reply {
	out := make([]Reply, 0, len(ms)*2)
	for _, m := range ms {
		switch {
		case !scores:
			out = append(out, bulkReply(m.Member))
		case cc.RESP == 3:
			out = append(out, arrayReply([]Reply{bulkReply(m.Member), doubleReply(m.Score)}))
		default:
			out = append(out, bulkReply(m.Member), bulkReply(formatDouble(m.Score)))
		}
	}
	return arrayReply(out)
}

// cmdZRange implements ZRANGE key start stop [REV] [WITHSCORES] by index;
// BYSCORE and BYLEX are not implemented and say so.
func cmdZRange(ks *Keyspace, cc *CallContext, a []string) Reply {
	var rev, scores bool
	for _, opt := range a[4:] {
		switch strings.ToUpper(opt) {
		case "REV":
			rev = true
		case "WITHSCORES":
			scores = true
		case "BYSCORE", "BYLEX", "LIMIT":
			return errorReply("ERR simulate: ZRANGE " + strings.ToUpper(opt) + " is not implemented")
		default:
			return errorReply(errSyntax)
		}
	}
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
		return arrayReply([]Reply{})
	}
	ms := sortedMembers(v.zset)
	if rev {
		for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
			ms[i], ms[j] = ms[j], ms[i]
		}
	}
	n := int64(len(ms))
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
		return arrayReply([]Reply{})
	}
	return withScores(cc, ms[start:stop+1], scores)
}

// scoreBound parses a ZRANGEBYSCORE bound: a float, "(" for exclusive, or ±inf.
func scoreBound(s string) (float64, bool, bool) {
	excl := strings.HasPrefix(s, "(")
	f, ok := parseFloat(strings.TrimPrefix(s, "("))
	return f, excl, ok
}

func inRange(x, min float64, minEx bool, max float64, maxEx bool) bool {
	return (x > min || (!minEx && x == min)) && (x < max || (!maxEx && x == max))
}

func (ks *Keyspace) byScore(cc *CallContext, a []string) ([]ZMember, *value, *Reply) {
	min, minEx, ok1 := scoreBound(a[2])
	max, maxEx, ok2 := scoreBound(a[3])
	if !ok1 || !ok2 {
		r := errorReply(errMinMaxFloat)
		return nil, nil, &r
	}
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil || v == nil {
		return nil, v, wrong
	}
	var out []ZMember
	for _, m := range sortedMembers(v.zset) {
		if inRange(m.Score, min, minEx, max, maxEx) {
			out = append(out, m)
		}
	}
	return out, v, nil
}

func cmdZCount(ks *Keyspace, cc *CallContext, a []string) Reply {
	ms, _, errR := ks.byScore(cc, a)
	if errR != nil {
		return *errR
	}
	return intReply(int64(len(ms)))
}

func cmdZRangeByScore(ks *Keyspace, cc *CallContext, a []string) Reply {
	var scores bool
	offset, count := int64(0), int64(-1)
	for i := 4; i < len(a); i++ {
		switch strings.ToUpper(a[i]) {
		case "WITHSCORES":
			scores = true
		case "LIMIT":
			if i+2 >= len(a) {
				return errorReply(errSyntax)
			}
			o, ok1 := parseInt(a[i+1])
			c, ok2 := parseInt(a[i+2])
			if !ok1 || !ok2 {
				return errorReply(errNotInteger)
			}
			offset, count = o, c
			i += 2
		default:
			return errorReply(errSyntax)
		}
	}
	ms, _, errR := ks.byScore(cc, a)
	if errR != nil {
		return *errR
	}
	if offset < 0 || offset >= int64(len(ms)) {
		ms = nil
	} else {
		ms = ms[offset:]
		if count >= 0 && count < int64(len(ms)) {
			ms = ms[:count]
		}
	}
	return withScores(cc, ms, scores)
}

func cmdZRemRangeByScore(ks *Keyspace, cc *CallContext, a []string) Reply {
	ms, v, errR := ks.byScore(cc, a)
	if errR != nil {
		return *errR
	}
	for _, m := range ms {
		delete(v.zset, m.Member)
	}
	if v != nil && len(v.zset) == 0 {
		delete(ks.keys, a[1])
	}
	return intReply(int64(len(ms)))
}
