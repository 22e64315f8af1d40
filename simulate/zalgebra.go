package simulate

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// The sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms and
// ZINTERCARD, as t_zset.c's zunionInterDiffGenericCommand computes them.
// Inputs may be sets (each member scoring 1). Scores are combined in the
// order Redis combines them (inputs by size, smallest first, stable), so
// float sums round as Redis's do.

type zsetOp uint8

const (
	zUnion zsetOp = iota
	zInter
	zDiff
)

type zaggregate uint8

const (
	aggrSum zaggregate = iota
	aggrMin
	aggrMax
)

// zsource is one input: its value (nil for a missing key), its weight.
type zsource struct {
	v      *value
	weight float64
}

func (s zsource) size() int {
	if s.v == nil {
		return 0
	}
	return s.v.size()
}

// members lists a source's members with their scores.
func (s zsource) members() []ZMember {
	if s.v == nil {
		return nil
	}
	if s.v.kind == kindZSet {
		return sortedMembers(s.v.zset)
	}
	out := make([]ZMember, 0, len(s.v.set))
	for m := range s.v.set {
		out = append(out, ZMember{Member: m, Score: 1})
	}
	return out
}

// find returns member m's score in the source.
func (s zsource) find(m string) (float64, bool) {
	switch {
	case s.v == nil:
		return 0, false
	case s.v.kind == kindZSet:
		sc, ok := s.v.zset[m]
		return sc, ok
	}
	_, ok := s.v.set[m]
	return 1, ok
}

// aggregate folds val into target as zunionInterAggregate does: a sum
// that is NaN (inf + -inf) becomes 0; MIN and MAX ignore a NaN.
func aggregate(target *float64, val float64, how zaggregate) {
	switch how {
	case aggrSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggrMin:
		if val < *target {
			*target = val
		}
	case aggrMax:
		if val > *target {
			*target = val
		}
	}
}

// zalgebraArgs is a parsed ZUNION/ZINTER/ZDIFF call.
type zalgebraArgs struct {
	src        []zsource
	how        zaggregate
	withScores bool
	limit      int64
}

// parseZAlgebra reads numkeys at a[at], the keys (looked up and type
// checked before the options, as Redis does) and the options the command
// takes.
func (ks *Keyspace) parseZAlgebra(cc *CallContext, a []string, at int, op zsetOp, store, cardOnly bool) (zalgebraArgs, *Reply) {
	fail := func(text string) (zalgebraArgs, *Reply) {
		r := errorReply(text)
		return zalgebraArgs{}, &r
	}
	var z zalgebraArgs
	n, ok := parseInt(a[at])
	if !ok {
		return fail(errNotInteger)
	}
	if n < 1 {
		return fail(fmt.Sprintf(errAtLeastOneKey, strings.ToLower(a[0])))
	}
	if n > int64(len(a)-(at+1)) {
		return fail(errSyntax)
	}
	j := at + 1
	for i := int64(0); i < n; i, j = i+1, j+1 {
		v := ks.lookup(cc.Now, a[j])
		if v != nil && v.kind != kindZSet && v.kind != kindSet {
			return fail(errWrongType)
		}
		z.src = append(z.src, zsource{v: v, weight: 1})
	}
	for j < len(a) {
		remaining := len(a) - j
		opt := strings.ToLower(a[j])
		switch {
		case op != zDiff && !cardOnly && remaining >= int(n)+1 && opt == "weights":
			j++
			for i := range z.src {
				w, ok := parseFloat(a[j])
				if !ok {
					return fail(errWeightNotFloat)
				}
				z.src[i].weight = w
				j++
			}
		case op != zDiff && !cardOnly && remaining >= 2 && opt == "aggregate":
			switch strings.ToLower(a[j+1]) {
			case "sum":
				z.how = aggrSum
			case "min":
				z.how = aggrMin
			case "max":
				z.how = aggrMax
			default:
				return fail(errSyntax)
			}
			j += 2
		case !store && !cardOnly && opt == "withscores":
			z.withScores = true
			j++
		case cardOnly && remaining >= 2 && opt == "limit":
			l, ok := parseInt(a[j+1])
			if !ok || l < 0 {
				return fail(errLimitNegative)
			}
			z.limit = l
			j += 2
		default:
			return fail(errSyntax)
		}
	}
	return z, nil
}

// compute returns the result's members (unordered) and their scores.
func (z zalgebraArgs) compute(op zsetOp, cardOnly bool) (map[string]float64, int64) {
	src := z.src
	if op != zDiff {
		src = append([]zsource(nil), src...)
		sort.SliceStable(src, func(i, j int) bool { return src[i].size() < src[j].size() })
	}
	out := map[string]float64{}
	var card int64
	switch op {
	case zInter:
		if src[0].size() == 0 {
			break
		}
		for _, m := range src[0].members() {
			score := src[0].weight * m.Score
			if math.IsNaN(score) {
				score = 0
			}
			in := true
			for _, o := range src[1:] {
				var val float64
				if o.v == src[0].v {
					val = m.Score * o.weight
				} else if s, ok := o.find(m.Member); ok {
					val = s * o.weight
				} else {
					in = false
					break
				}
				aggregate(&score, val, z.how)
			}
			if !in {
				continue
			}
			if cardOnly {
				card++
				if z.limit > 0 && card >= z.limit {
					break
				}
				continue
			}
			out[m.Member] = score
		}
	case zUnion:
		for _, s := range src {
			for _, m := range s.members() {
				score := s.weight * m.Score
				if math.IsNaN(score) {
					score = 0
				}
				if cur, ok := out[m.Member]; ok {
					aggregate(&cur, score, z.how)
					out[m.Member] = cur
				} else {
					out[m.Member] = score
				}
			}
		}
	case zDiff:
		if src[0].size() == 0 {
			break
		}
		for _, o := range src[1:] {
			if o.v == src[0].v {
				return out, 0 // the first key again: nothing is left
			}
		}
		for _, m := range src[0].members() {
			found := false
			for _, o := range src[1:] {
				if _, ok := o.find(m.Member); ok {
					found = true
					break
				}
			}
			if !found {
				out[m.Member] = m.Score
			}
		}
	}
	return out, card
}

// cmdZSetAlgebra implements ZUNION, ZINTER, ZDIFF numkeys key [key ...]
// [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES], their STORE forms
// (destination first) and ZINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdZSetAlgebra(op zsetOp, store, cardOnly bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		at := 1
		if store {
			at = 2
		}
		z, bad := ks.parseZAlgebra(cc, a, at, op, store, cardOnly)
		if bad != nil {
			return *bad
		}
		result, card := z.compute(op, cardOnly)
		if cardOnly {
			return intReply(card)
		}
		ms := sortedMembers(result)
		if !store {
			return withScoresReply(cc, ms, z.withScores)
		}
		return ks.storeZSet(cc.Now, a[1], ms)
	}
}

// storeZSet replaces dst with the sorted set ms (in order), as setKey
// does, or deletes dst when ms is empty; it answers the result's size. A
// result that fits is a listpack, whose scores lose the sign of -0.
func (ks *Keyspace) storeZSet(now time.Time, dst string, ms []ZMember) Reply {
	if len(ms) == 0 {
		delete(ks.keys, dst)
		return intReply(0)
	}
	v := &value{kind: kindZSet, lru: lruClock(now), zset: make(map[string]float64, len(ms)), big: !zsetFits(ms)}
	for _, m := range ms {
		if v.big {
			v.zset[m.Member] = m.Score
		} else {
			v.zset[m.Member] = storedScore(m.Score)
		}
	}
	ks.keys[dst] = v
	return intReply(int64(len(ms)))
}
