package simulate

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

func init() {
	commands["zadd"] = cmdZAdd
	commands["zrem"] = cmdRemove(kindZSet)
	commands["zscore"] = cmdZScore
	commands["zcard"] = cmdLen(kindZSet)
	commands["zrank"] = cmdZRank(false)
	commands["zrevrank"] = cmdZRank(true)
	commands["zcount"] = cmdZCount
	commands["zlexcount"] = cmdZLexCount
	commands["zremrangebyscore"] = cmdZRemRangeBy(byScore)
	commands["zremrangebylex"] = cmdZRemRangeBy(byLex)
	commands["zincrby"] = cmdZIncrBy
	commands["zremrangebyrank"] = cmdZRemRangeByRank
	commands["zpopmin"] = cmdZPop(false)
	commands["zpopmax"] = cmdZPop(true)
	commands["zscan"] = cmdCollectionScan(kindZSet)
	commands["zmscore"] = cmdZMScore
	commands["zrandmember"] = cmdZRandMember
	commands["zmpop"] = cmdZMPop(false)
	commands["bzmpop"] = cmdZMPop(true)
	// The algebra (zalgebra.go).
	commands["zunion"] = cmdZSetAlgebra(zUnion, false, false)
	commands["zunionstore"] = cmdZSetAlgebra(zUnion, true, false)
	commands["zinter"] = cmdZSetAlgebra(zInter, false, false)
	commands["zinterstore"] = cmdZSetAlgebra(zInter, true, false)
	commands["zintercard"] = cmdZSetAlgebra(zInter, false, true)
	commands["zdiff"] = cmdZSetAlgebra(zDiff, false, false)
	commands["zdiffstore"] = cmdZSetAlgebra(zDiff, true, false)
	// The range commands (zrange.go).
	commands["zrange"] = cmdZRangeGeneric(byAuto, dirAuto)
	commands["zrevrange"] = cmdZRangeGeneric(byRank, dirReverse)
	commands["zrangebyscore"] = cmdZRangeGeneric(byScore, dirForward)
	commands["zrevrangebyscore"] = cmdZRangeGeneric(byScore, dirReverse)
	commands["zrangebylex"] = cmdZRangeGeneric(byLex, dirForward)
	commands["zrevrangebylex"] = cmdZRangeGeneric(byLex, dirReverse)
	commands["zrangestore"] = cmdZRangeStore
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
	c, n := readConditions(a[2:], true)
	nx, xx, gt, lt, incr := c.nx, c.xx, c.gt, c.lt, c.incr
	pairs := a[2+n:]
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
				return errorReply(errScoreNaN)
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
		if v.big {
			v.zset[m] = s // a skiplist keeps the double itself, -0 included
		} else {
			v.zset[m] = storedScore(s)
		}
		v.noteZSetMember(m)
		if incr {
			return doubleReply(s)
		}
	}
	ks.dropIfEmpty(a[1], v)
	if c.ch {
		return intReply(added + changed)
	}
	return intReply(added)
}

// storedScore is a score as a listpack-encoded sorted set keeps it: a
// score that is an integer is stored as one, so -0 comes back as 0 (the
// reply of ZADD INCR still says -0).
func storedScore(s float64) float64 {
	if s == 0 {
		return 0
	}
	return s
}

func cmdZScore(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, nilReply())
	if !ok {
		return done
	}
	s, ok := v.zset[a[2]]
	if !ok {
		return nilReply()
	}
	return doubleReply(s)
}

// cmdZRank is ZRANK and ZREVRANK key member, and from 7.2 (whose table
// gives them arity -3) [WITHSCORE]: [rank, score], or a null array.
func cmdZRank(rev bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		withScore := false
		if len(a) > 4 {
			return errorReply(fmt.Sprintf(errWrongArgs, strings.ToLower(a[0])))
		}
		if len(a) == 4 {
			if !strings.EqualFold(a[3], "withscore") {
				return errorReply(errSyntax)
			}
			withScore = true
		}
		v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, nilReply())
		if !ok {
			return done
		}
		if !v.has(a[2]) {
			return nilReply()
		}
		// The rank is how many members sort before it (by score, then
		// member): one pass, not a sort of the whole set per call.
		score, i := v.zset[a[2]], int64(0)
		for m, s := range v.zset {
			if s < score || s == score && m < a[2] {
				i++
			}
		}
		if rev {
			i = int64(len(v.zset)) - 1 - i
		}
		if !withScore {
			return intReply(i)
		}
		if cc.RESP == 3 {
			return arrayReply([]Reply{intReply(i), doubleReply(score)})
		}
		return arrayReply([]Reply{intReply(i), bulkReply(cc.profile.formatDouble(score))})
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
			out = append(out, bulkReply(m.Member), bulkReply(cc.profile.formatDouble(m.Score)))
		}
	}
	return arrayReply(out)
}

func cmdZIncrBy(ks *Keyspace, cc *CallContext, a []string) Reply {
	return cmdZAdd(ks, cc, []string{"zadd", a[1], "INCR", a[2], a[3]})
}

func cmdZRemRangeByRank(ks *Keyspace, cc *CallContext, a []string) Reply {
	start, stop, bad := parseIndexes(a[2], a[3])
	if bad != nil {
		return *bad
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, intReply(0))
	if !ok {
		return done
	}
	ms := sortedMembers(v.zset)
	lo, hi, ok := span(start, stop, int64(len(ms)))
	if !ok {
		return intReply(0)
	}
	return intReply(ks.removeMembers(a[1], v, ms[lo:hi+1]))
}

// removeMembers deletes the members ms from the sorted set v under key,
// and the key once it is empty; it returns how many went.
func (ks *Keyspace) removeMembers(key string, v *value, ms []ZMember) int64 {
	for _, m := range ms {
		delete(v.zset, m.Member)
	}
	ks.dropIfEmpty(key, v)
	return int64(len(ms))
}

// cmdZPop implements ZPOPMIN/ZPOPMAX key [count]: RESP2 gives a flat
// member, score list; RESP3 nests pairs when a count was given.
func cmdZPop(max bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		count, withCount, bad := optionalCount(a)
		if bad != nil {
			return *bad
		}
		v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, arrayReply([]Reply{}))
		if !ok {
			return done
		}
		ms := sortedMembers(v.zset)
		if max {
			for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
				ms[i], ms[j] = ms[j], ms[i]
			}
		}
		count = int64(math.Min(float64(count), float64(len(ms))))
		popped := ms[:count]
		ks.removeMembers(a[1], v, popped)
		if cc.RESP == 3 && !withCount && len(popped) == 1 {
			return arrayReply([]Reply{bulkReply(popped[0].Member), doubleReply(popped[0].Score)})
		}
		return withScores(cc, popped, true)
	}
}

// cmdZMScore implements ZMSCORE key member [member ...]: a missing key
// answers a nil per member.
func cmdZMScore(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	out := make([]Reply, 0, len(a)-2)
	for _, m := range a[2:] {
		s, ok := 0.0, false
		if v != nil {
			s, ok = v.zset[m]
		}
		if !ok {
			out = append(out, nilReply())
			continue
		}
		out = append(out, doubleReply(s))
	}
	return arrayReply(out)
}

// cmdZRandMember implements ZRANDMEMBER key [count [WITHSCORES]], with
// SRANDMEMBER's rules for counts (randomPicks); when the count reaches
// the size Redis lists the whole set from the highest score down.
func cmdZRandMember(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) == 2 {
		v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, nilReply())
		if !ok {
			return done
		}
		ms := sortedMembers(v.zset)
		return bulkReply(ms[ks.random().Intn(len(ms))].Member)
	}
	l, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	withScores := len(a) == 4
	if len(a) > 4 || (withScores && !strings.EqualFold(a[3], "withscores")) {
		return errorReply(errSyntax)
	}
	if withScores && (l < math.MinInt64/2 || l > math.MaxInt64/2) {
		return errorReply(errValueRange)
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, arrayReply([]Reply{}))
	if !ok {
		return done
	}
	if l < -maxRandomPicks {
		return errorReply(fmt.Sprintf(errTooManyPicks, "zrandmember", l))
	}
	ms := sortedMembers(v.zset)
	reverseMembers(ms)
	return withScoresReply(cc, randomPicks(ks.random(), ms, l), withScores)
}

func reverseMembers(ms []ZMember) {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
}

// withScoresReply is withScores, an empty array for no members.
func withScoresReply(cc *CallContext, ms []ZMember, scores bool) Reply {
	if len(ms) == 0 {
		return arrayReply([]Reply{})
	}
	return withScores(cc, ms, scores)
}

// cmdZMPop implements ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
// and BZMPOP timeout numkeys ...: the first non-empty sorted set gives up
// to count members, answered as [key, [[member, score], ...]]; none gives
// a null array. A script cannot block, so BZMPOP answers as if its timeout
// had passed at once.
func cmdZMPop(block bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		at := 1
		if block {
			at = 2
		}
		n, ok := parseInt(a[at])
		if !ok || n < 1 {
			return errorReply(errNumKeysPositive)
		}
		where := at + 1 + int(min(n, int64(len(a))))
		if where >= len(a) {
			return errorReply(errSyntax)
		}
		var max bool
		switch strings.ToLower(a[where]) {
		case "min":
		case "max":
			max = true
		default:
			return errorReply(errSyntax)
		}
		count := int64(-1)
		for j := where + 1; j < len(a); j++ {
			if count != -1 || !strings.EqualFold(a[j], "count") || j+1 >= len(a) {
				return errorReply(errSyntax)
			}
			j++
			c, ok := parseInt(a[j])
			if !ok || c < 1 {
				return errorReply(errCountPositive)
			}
			count = c
		}
		if count == -1 {
			count = 1
		}
		if block {
			timeout, ok := parseFloat(a[1])
			if !ok {
				return errorReply(errTimeoutNotFloat)
			}
			if timeout < 0 {
				return errorReply(errTimeoutNegative)
			}
		}
		for _, key := range a[at+1 : where] {
			v, wrong := ks.zsetFor(cc, key, false)
			if wrong != nil {
				return *wrong
			}
			if v == nil {
				continue
			}
			ms := sortedMembers(v.zset)
			if max {
				reverseMembers(ms)
			}
			popped := ms[:min(count, int64(len(ms)))]
			ks.removeMembers(key, v, popped)
			pairs := make([]Reply, len(popped))
			for i, m := range popped {
				pairs[i] = arrayReply([]Reply{bulkReply(m.Member), doubleReply(m.Score)})
			}
			return arrayReply([]Reply{bulkReply(key), arrayReply(pairs)})
		}
		return nilReply()
	}
}
