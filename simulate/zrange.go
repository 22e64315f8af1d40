package simulate

import (
	"cmp"
	"strings"
)

// The range commands of sorted sets, after Redis 7.0's zrangeGenericCommand:
// ZRANGE with BYSCORE, BYLEX, REV and LIMIT, the older ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX and ZREVRANGE, and
// ZRANGESTORE, all through zrangeGeneric; ZCOUNT, ZLEXCOUNT and
// ZREMRANGEBYSCORE/BYLEX share its range parsers. cmd_zset.go registers
// them with the other sorted-set commands.

const zrangeNoLimit int64 = -1

type zrangeBy uint8

const (
	byAuto zrangeBy = iota
	byRank
	byScore
	byLex
)

type zrangeDir uint8

const (
	dirAuto zrangeDir = iota
	dirForward
	dirReverse
)

// interval is a range of scores or members as zslParseRange and
// zslParseLexRange read it: two ends, each inclusive or exclusive, in the
// order cmp gives.
type interval[T any] struct {
	min, max     T
	minEx, maxEx bool
	cmp          func(a, b T) int
}

// parseInterval reads min and max with parseEnd, which reports whether an
// end is exclusive and whether it is well formed.
func parseInterval[T any](min, max string, parseEnd func(string) (T, bool, bool), cmp func(a, b T) int) (interval[T], bool) {
	r := interval[T]{cmp: cmp}
	var ok1, ok2 bool
	r.min, r.minEx, ok1 = parseEnd(min)
	r.max, r.maxEx, ok2 = parseEnd(max)
	return r, ok1 && ok2
}

func (r interval[T]) gteMin(x T) bool {
	c := r.cmp(x, r.min)
	return c > 0 || (c == 0 && !r.minEx)
}

func (r interval[T]) lteMax(x T) bool {
	c := r.cmp(x, r.max)
	return c < 0 || (c == 0 && !r.maxEx)
}

func (r interval[T]) alwaysEmpty() bool {
	c := r.cmp(r.min, r.max)
	return c > 0 || (c == 0 && (r.minEx || r.maxEx))
}

func parseScoreBound(s string) (f float64, ex, ok bool) {
	if strings.HasPrefix(s, "(") {
		f, ok = strtod(s[1:])
		return f, true, ok
	}
	f, ok = strtod(s)
	return f, false, ok
}

// lexBound is one end of a lex range: "-" (inf -1), "+" (inf 1) or a string.
type lexBound struct {
	s   string
	inf int
}

// cmpLex compares as Redis's sdscmplex: "-" below and "+" above every string.
func cmpLex(a, b lexBound) int {
	switch {
	case a.inf != 0 && a.inf == b.inf:
		return 0
	case a.inf < 0 || b.inf > 0:
		return -1
	case a.inf > 0 || b.inf < 0:
		return 1
	}
	return strings.Compare(a.s, b.s)
}

func parseLexBound(s string) (b lexBound, ex, ok bool) {
	switch {
	case s == "+":
		return lexBound{inf: 1}, true, true
	case s == "-":
		return lexBound{inf: -1}, true, true
	case strings.HasPrefix(s, "("):
		return lexBound{s: s[1:]}, true, true
	case strings.HasPrefix(s, "["):
		return lexBound{s: s[1:]}, false, true
	}
	return lexBound{}, false, false
}

// zrange is what a range of a sorted set is judged by: the two sides of
// its interval. Score and lex ranges both have this shape.
type zrange interface {
	gteMin(m ZMember) bool
	lteMax(m ZMember) bool
	alwaysEmpty() bool
}

type byScoreRange struct{ interval[float64] }

func (r byScoreRange) gteMin(m ZMember) bool { return r.interval.gteMin(m.Score) }
func (r byScoreRange) lteMax(m ZMember) bool { return r.interval.lteMax(m.Score) }

type byLexRange struct{ interval[lexBound] }

func (r byLexRange) gteMin(m ZMember) bool { return r.interval.gteMin(lexBound{s: m.Member}) }
func (r byLexRange) lteMax(m ZMember) bool { return r.interval.lteMax(lexBound{s: m.Member}) }

// parseZRange parses min and max as a score or lex range, replying the
// error Redis gives for each.
func parseZRange(by zrangeBy, min, max string) (zrange, *Reply) {
	if by == byLex {
		r, ok := parseInterval(min, max, parseLexBound, cmpLex)
		if !ok {
			e := errorReply(errMinMaxLex)
			return nil, &e
		}
		return byLexRange{r}, nil
	}
	r, ok := parseInterval(min, max, parseScoreBound, cmp.Compare[float64])
	if !ok {
		e := errorReply(errMinMaxFloat)
		return nil, &e
	}
	return byScoreRange{r}, nil
}

// firstInRange walks ms (in score order) as Redis walks a listpack-encoded
// sorted set (zzlFirstInRange, zzlFirstInLexRange): the first member at or
// above min, provided it is at or below max; -1 when there is none. With
// mixed scores a lex range is only meaningful this way, as in Redis.
func firstInRange(ms []ZMember, r zrange) int {
	if r.alwaysEmpty() || len(ms) == 0 || !r.gteMin(ms[len(ms)-1]) || !r.lteMax(ms[0]) {
		return -1
	}
	for i, m := range ms {
		if r.gteMin(m) {
			if r.lteMax(m) {
				return i
			}
			return -1
		}
	}
	return -1
}

// lastInRange is firstInRange from the other end (zzlLastInRange).
func lastInRange(ms []ZMember, r zrange) int {
	if r.alwaysEmpty() || len(ms) == 0 || !r.gteMin(ms[len(ms)-1]) || !r.lteMax(ms[0]) {
		return -1
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if r.lteMax(ms[i]) {
			if r.gteMin(ms[i]) {
				return i
			}
			return -1
		}
	}
	return -1
}

// inRange lists the members of ms in r, in order (reversed for rev),
// after skipping offset of them and taking at most limit (negative: all),
// as genericZrangebyscoreCommand and genericZrangebylexCommand do.
func inRange(ms []ZMember, r zrange, rev bool, offset, limit int64) []ZMember {
	var i int
	step := 1
	if rev {
		i, step = lastInRange(ms, r), -1
	} else {
		i = firstInRange(ms, r)
	}
	if i < 0 {
		return nil
	}
	if offset < 0 || offset >= int64(len(ms)) { // a negative offset: Redis's "while (offset--)" runs off the end
		return nil
	}
	i += step * int(offset)
	var out []ZMember
	for ; i >= 0 && i < len(ms) && limit != 0; i += step {
		if (rev && !r.gteMin(ms[i])) || (!rev && !r.lteMax(ms[i])) {
			break
		}
		out = append(out, ms[i])
		if limit > 0 {
			limit--
		}
	}
	return out
}

// zrangeArgs are the parsed arguments of one range command.
type zrangeArgs struct {
	by            zrangeBy
	rev           bool
	scores        bool
	start, end    int64 // by rank
	rng           zrange
	offset, limit int64
}

// parseZRangeArgs parses a[keyIdx+1:] as zrangeGenericCommand does: the
// options, their conflicts, then the range. store is ZRANGESTORE, which
// takes no WITHSCORES.
func parseZRangeArgs(a []string, keyIdx int, store bool, by zrangeBy, dir zrangeDir) (zrangeArgs, *Reply) {
	fail := func(text string) (zrangeArgs, *Reply) { r := errorReply(text); return zrangeArgs{}, &r }
	z := zrangeArgs{limit: zrangeNoLimit}
	for j := keyIdx + 3; j < len(a); j++ {
		opt := strings.ToUpper(a[j])
		switch {
		case !store && opt == "WITHSCORES":
			z.scores = true
		case opt == "LIMIT" && len(a)-j-1 >= 2:
			o, ok1 := parseInt(a[j+1])
			if !ok1 {
				return fail(errNotInteger)
			}
			l, ok2 := parseInt(a[j+2])
			if !ok2 {
				return fail(errNotInteger)
			}
			z.offset, z.limit = o, l
			j += 2
		case dir == dirAuto && opt == "REV":
			dir = dirReverse
		case by == byAuto && opt == "BYLEX":
			by = byLex
		case by == byAuto && opt == "BYSCORE":
			by = byScore
		default:
			return fail(errSyntax)
		}
	}
	if by == byAuto {
		by = byRank
	}
	z.by, z.rev = by, dir == dirReverse
	if z.limit != zrangeNoLimit && by == byRank {
		return fail(errZRangeLimit)
	}
	if z.scores && by == byLex {
		return fail(errZRangeLexScores)
	}
	min, max := a[keyIdx+1], a[keyIdx+2]
	if z.rev && by != byRank {
		min, max = max, min // given as max, min
	}
	var bad *Reply
	if by == byRank {
		z.start, z.end, bad = parseIndexes(min, max)
	} else {
		z.rng, bad = parseZRange(by, min, max)
	}
	if bad != nil {
		return zrangeArgs{}, bad
	}
	return z, nil
}

// run selects the members of a sorted set (nil: a missing key).
func (z zrangeArgs) run(v *value) []ZMember {
	if v == nil {
		return nil
	}
	ms := sortedMembers(v.zset)
	if z.by != byRank {
		return inRange(ms, z.rng, z.rev, z.offset, z.limit)
	}
	if z.rev {
		for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
			ms[i], ms[j] = ms[j], ms[i]
		}
	}
	lo, hi, ok := span(z.start, z.end, int64(len(ms)))
	if !ok {
		return nil
	}
	return ms[lo : hi+1]
}

// zrangeSelect is what the range commands share: parse a[keyIdx+1:] (see
// parseZRangeArgs), look the sorted set a[keyIdx] up, select its members.
func (ks *Keyspace) zrangeSelect(cc *CallContext, a []string, keyIdx int, store bool, by zrangeBy, dir zrangeDir) (zrangeArgs, []ZMember, *Reply) {
	z, bad := parseZRangeArgs(a, keyIdx, store, by, dir)
	if bad != nil {
		return z, nil, bad
	}
	v, wrong := ks.zsetFor(cc, a[keyIdx], false)
	if wrong != nil {
		return z, nil, wrong
	}
	return z, z.run(v), nil
}

func cmdZRangeGeneric(by zrangeBy, dir zrangeDir) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		z, ms, done := ks.zrangeSelect(cc, a, 1, false, by, dir)
		if done != nil {
			return *done
		}
		return withScores(cc, ms, z.scores)
	}
}

// cmdZRangeStore implements ZRANGESTORE dst src min max [BYSCORE|BYLEX]
// [REV] [LIMIT offset count]: dst becomes the result (without a TTL), or
// is deleted when the result is empty.
func cmdZRangeStore(ks *Keyspace, cc *CallContext, a []string) Reply {
	_, ms, done := ks.zrangeSelect(cc, a, 2, true, byAuto, dirAuto)
	if done != nil {
		return *done
	}
	if len(ms) == 0 {
		delete(ks.keys, a[1])
		return intReply(0)
	}
	dst := &value{kind: kindZSet, lru: lruClock(cc.Now), zset: make(map[string]float64, len(ms)), big: !zsetFits(ms)}
	for _, m := range ms {
		if dst.big {
			dst.zset[m.Member] = m.Score
		} else {
			dst.zset[m.Member] = storedScore(m.Score)
		}
	}
	ks.keys[a[1]] = dst
	return intReply(int64(len(ms)))
}

// countInRange counts from the first member in range while members stay
// at or below max, as ZCOUNT and ZLEXCOUNT do on a listpack.
func countInRange(ms []ZMember, r zrange) (first, n int) {
	first = firstInRange(ms, r)
	if first < 0 {
		return 0, 0
	}
	for i := first; i < len(ms) && r.lteMax(ms[i]); i++ {
		n++
	}
	return first, n
}

// zsetInRange parses a ZCOUNT-style range and finds the sorted set's
// members in it; a reply is returned for a bad range, a wrong type, or a
// missing key (count 0).
func zsetInRange(ks *Keyspace, cc *CallContext, a []string, by zrangeBy) (*value, []ZMember, *Reply) {
	r, bad := parseZRange(by, a[2], a[3])
	if bad != nil {
		return nil, nil, bad
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, intReply(0))
	if !ok {
		r := done // a copy, so that only this path allocates
		return nil, nil, &r
	}
	ms := sortedMembers(v.zset)
	first, n := countInRange(ms, r)
	return v, ms[first : first+n], nil
}

func cmdZCountBy(by zrangeBy) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		_, in, done := zsetInRange(ks, cc, a, by)
		if done != nil {
			return *done
		}
		return intReply(int64(len(in)))
	}
}

var (
	cmdZCount    = cmdZCountBy(byScore)
	cmdZLexCount = cmdZCountBy(byLex)
)

// cmdZRemRangeBy implements ZREMRANGEBYSCORE and ZREMRANGEBYLEX.
func cmdZRemRangeBy(by zrangeBy) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, in, done := zsetInRange(ks, cc, a, by)
		if done != nil {
			return *done
		}
		return intReply(ks.removeMembers(a[1], v, in))
	}
}
