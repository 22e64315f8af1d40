package simulate

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"time"
)

func init() {
	commands["sadd"] = cmdSAdd
	commands["srem"] = cmdRemove(kindSet)
	commands["sismember"] = cmdHas(kindSet)
	commands["smismember"] = cmdSMIsMember
	commands["scard"] = cmdLen(kindSet)
	commands["smembers"] = cmdSMembers
	commands["spop"] = cmdSPop
	commands["sscan"] = cmdCollectionScan(kindSet)
	commands["smove"] = cmdSMove
	commands["srandmember"] = cmdSRandMember
	commands["sinter"] = cmdSInter(false)
	commands["sinterstore"] = cmdSInter(true)
	commands["sintercard"] = cmdSInterCard
	commands["sunion"] = cmdSUnionDiff(setUnion, false)
	commands["sunionstore"] = cmdSUnionDiff(setUnion, true)
	commands["sdiff"] = cmdSUnionDiff(setDiff, false)
	commands["sdiffstore"] = cmdSUnionDiff(setDiff, true)
}

func sortedSet(s map[string]struct{}) []string {
	out := make([]string, 0, len(s))
	for m := range s {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func (ks *Keyspace) setFor(cc *CallContext, key string, create bool) (*value, *Reply) {
	return ks.valueFor(cc, key, kindSet, create)
}

func cmdSAdd(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.setFor(cc, a[1], true)
	if wrong != nil {
		return *wrong
	}
	var added int64
	for _, m := range a[2:] {
		if _, ok := v.set[m]; !ok {
			v.set[m] = struct{}{}
			v.noteSetMember(m, ks.profile)
			added++
		}
	}
	return intReply(added)
}

func cmdSMIsMember(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.setFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	out := make([]Reply, 0, len(a)-2)
	for _, m := range a[2:] {
		out = append(out, intReply(boolInt(v != nil && v.has(m))))
	}
	return arrayReply(out)
}

// cmdSMembers lists members sorted; Redis's order is unspecified.
func cmdSMembers(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, done, ok := ks.lookupOrReply(cc, a[1], kindSet, Reply{Kind: KindSet, Elems: []Reply{}})
	if !ok {
		return done
	}
	out := []Reply{}
	for _, m := range ks.setMembers(v) {
		out = append(out, bulkReply(m))
	}
	return Reply{Kind: KindSet, Elems: out}
}

// cmdSPop removes random members; the choice comes from a fixed-seed
// generator per keyspace call, so runs are reproducible (not Redis's picks).
func cmdSPop(ks *Keyspace, cc *CallContext, a []string) Reply {
	count, withCount, bad := optionalCount(a)
	if bad != nil {
		return *bad
	}
	missing := nilReply()
	if withCount {
		missing = Reply{Kind: KindSet, Elems: []Reply{}}
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindSet, missing)
	if !ok {
		return done
	}
	members := sortedSet(v.set)
	rng := rand.New(rand.NewSource(int64(len(members))))
	rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	if count > int64(len(members)) {
		count = int64(len(members))
	}
	out := make([]Reply, 0, count)
	for _, m := range members[:count] {
		delete(v.set, m)
		out = append(out, bulkReply(m))
	}
	ks.dropIfEmpty(a[1], v)
	if !withCount {
		return out[0]
	}
	return Reply{Kind: KindSet, Elems: out}
}

// setMembers lists a set in listing order: numeric for an intset, as
// Redis keeps it; for a hash table (whose order Redis leaves undefined)
// sorted as strings, shuffled under UndefinedOrderShuffled.
func (ks *Keyspace) setMembers(v *value) []string {
	if v.setLP {
		return v.listpackSetMembers()
	}
	ms := sortedSet(v.set)
	if !v.big {
		intsetOrder(ms)
		return ms
	}
	ks.shuffleUndefined(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	return ms
}

// random is the generator behind SRANDMEMBER, ZRANDMEMBER, HRANDFIELD and
// RANDOMKEY: seeded per keyspace (randomSeed, or WithSeed's), so a run of
// the same commands picks the same members (not the members a redis-server
// would pick).
func (ks *Keyspace) random() *rand.Rand {
	if ks.rng == nil {
		ks.rng = rand.New(rand.NewSource(randomSeed))
	}
	return ks.rng
}

// maxRandomPicks bounds a negative SRANDMEMBER or ZRANDMEMBER count: the
// reply would hold that many elements, which Redis streams to a client
// but the simulator would have to hold in memory at once.
const maxRandomPicks = 1 << 22

// randomSeed seeds each keyspace's random picks.
const randomSeed = 20261127

// newSetValue is a set built at once from members, each added as
// setTypeAdd adds it to a new intset: it stays an intset while every
// member is an integer and there are at most 512.
func newSetValue(members []string, p Profile) *value {
	v := &value{kind: kindSet, set: make(map[string]struct{}, len(members))}
	for _, m := range members {
		v.set[m] = struct{}{}
	}
	v.big = !fitsIntset(members)
	if v.big && p.since72() && fitsSetListpack(members) {
		v.big, v.setLP, v.setOrder = false, true, append([]string(nil), members...)
	}
	return v
}

// fitsIntset reports whether a set of these (distinct) members is an
// intset.
func fitsIntset(members []string) bool {
	if len(members) > setMaxIntsetEntries {
		return false
	}
	for _, m := range members {
		if _, ok := parseInt(m); !ok {
			return false
		}
	}
	return true
}

// setReply renders members as a RESP3 set (an array under RESP2).
func setReply(members []string) Reply {
	out := make([]Reply, len(members))
	for i, m := range members {
		out[i] = bulkReply(m)
	}
	return Reply{Kind: KindSet, Elems: out}
}

// storeSet replaces dst with the result of a *STORE command, as setKey
// does (the old value and its TTL go), or deletes dst when the result is
// empty; it returns the command's reply, the result's size.
func (ks *Keyspace) storeSet(now time.Time, dst string, v *value) Reply {
	if len(v.set) == 0 {
		delete(ks.keys, dst)
		return intReply(0)
	}
	v.lru = lruClock(now)
	ks.keys[dst] = v
	return intReply(int64(len(v.set)))
}

// setInputs looks up the keys of a set-algebra command, checking each
// type in order as Redis does; a missing key is a nil entry.
func (ks *Keyspace) setInputs(cc *CallContext, keys []string) ([]*value, *Reply) {
	sets := make([]*value, len(keys))
	for i, k := range keys {
		v, wrong := ks.getTyped(cc.Now, k, kindSet)
		if wrong != nil {
			return nil, wrong
		}
		sets[i] = v
	}
	return sets, nil
}

// interSets is SINTER's result over existing sets: the members of the
// smallest set (in its iteration order) that every other set holds; limit
// > 0 stops after that many.
func (ks *Keyspace) interSets(sets []*value, limit int) []string {
	sorted := append([]*value(nil), sets...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i].set) < len(sorted[j].set) })
	var out []string
	for _, m := range ks.setMembers(sorted[0]) {
		in := true
		for _, o := range sorted[1:] {
			if o == sorted[0] {
				continue
			}
			if _, ok := o.set[m]; !ok {
				in = false
				break
			}
		}
		if in {
			out = append(out, m)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	return out
}

// cmdSInter implements SINTER key [key ...] and SINTERSTORE destination
// key [key ...]. A missing key makes the result empty, but only after
// every key's type was checked.
func cmdSInter(store bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		keys := a[1:]
		if store {
			keys = a[2:]
		}
		sets, wrong := ks.setInputs(cc, keys)
		if wrong != nil {
			return *wrong
		}
		var members []string
		if !hasNilSet(sets) {
			members = ks.interSets(sets, 0)
		}
		if store {
			return ks.storeSet(cc.Now, a[1], newSetValue(members, ks.profile))
		}
		return setReply(members)
	}
}

func hasNilSet(sets []*value) bool {
	for _, s := range sets {
		if s == nil {
			return true
		}
	}
	return false
}

// cmdSInterCard implements SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSInterCard(ks *Keyspace, cc *CallContext, a []string) Reply {
	keys, limit, bad := parseInterCard(a)
	if bad != nil {
		return *bad
	}
	sets, wrong := ks.setInputs(cc, keys)
	if wrong != nil {
		return *wrong
	}
	if hasNilSet(sets) {
		return intReply(0)
	}
	return intReply(int64(len(ks.interSets(sets, limit))))
}

// parseInterCard reads the arguments SINTERCARD takes: numkeys (at least
// one, at most the arguments left), the keys, and LIMIT (0: none; given
// more than once, the last counts).
func parseInterCard(a []string) (keys []string, limit int, bad *Reply) {
	fail := func(text string) ([]string, int, *Reply) {
		r := errorReply(text)
		return nil, 0, &r
	}
	n, ok := parseInt(a[1])
	if !ok || n < 1 {
		return fail(errNumKeysPositive)
	}
	if n > int64(len(a)-2) {
		return fail(errNumKeysTooMany)
	}
	keys = a[2 : 2+n]
	for j := 2 + int(n); j < len(a); j++ {
		if !strings.EqualFold(a[j], "limit") || j+1 >= len(a) {
			return fail(errSyntax)
		}
		j++
		l, ok := parseInt(a[j])
		if !ok || l < 0 {
			return fail(errLimitNegative)
		}
		limit = int(min(l, math.MaxInt32))
	}
	return keys, limit, nil
}

type setOp uint8

const (
	setUnion setOp = iota
	setDiff
)

// cmdSUnionDiff implements SUNION, SDIFF and their *STORE forms: every
// key's type is checked, a missing key is an empty set. The result is
// built as Redis builds it in a new intset, so its encoding (and with it
// the reply's order) is Redis's: SDIFF's second algorithm, which Redis
// picks when the first set is large against the others, adds the whole
// first set before removing, and keeps a hash table the removals no
// longer need.
func cmdSUnionDiff(op setOp, store bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		keys := a[1:]
		if store {
			keys = a[2:]
		}
		sets, wrong := ks.setInputs(cc, keys)
		if wrong != nil {
			return *wrong
		}
		result := map[string]struct{}{}
		big := false
		switch op {
		case setUnion:
			for _, s := range sets {
				if s == nil {
					continue
				}
				for m := range s.set {
					result[m] = struct{}{}
				}
			}
		case setDiff:
			big = diffInto(result, sets)
		}
		members := make([]string, 0, len(result))
		if ks.profile.since72() {
			members = ks.setResultOrder(op, sets, result)
		} else {
			for m := range result {
				members = append(members, m)
			}
		}
		v := newSetValue(members, ks.profile)
		if big {
			v.big, v.setLP, v.setOrder = true, false, nil
			if ks.profile.since72() && fitsSetListpack(members) {
				// 7.2's result turned a listpack, which removals keep.
				v.big, v.setLP, v.setOrder = false, true, members
			}
		}
		if store {
			return ks.storeSet(cc.Now, a[1], v)
		}
		return setReply(ks.setMembers(v))
	}
}

// diffInto fills result with sets[0] minus the others, and reports
// whether Redis's second algorithm left the result a hash table
// regardless of what remains in it.
func diffInto(result map[string]struct{}, sets []*value) (big bool) {
	first := sets[0]
	if first == nil {
		return false
	}
	var one, two int
	for i, s := range sets {
		if s == nil {
			continue
		}
		if i > 0 && s == first {
			return false // the same key again: the difference is empty
		}
		one += len(first.set)
		two += len(s.set)
	}
	for m := range first.set {
		result[m] = struct{}{}
	}
	for _, s := range sets[1:] {
		if s == nil {
			continue
		}
		for m := range s.set {
			delete(result, m)
		}
	}
	if one/2 <= two {
		return false // algorithm 1 adds only the members that stay
	}
	members := make([]string, 0, len(first.set))
	for m := range first.set {
		members = append(members, m)
	}
	return !fitsIntset(members)
}

// cmdSMove implements SMOVE source destination member: a missing source
// answers 0 before the destination's type is looked at.
func cmdSMove(ks *Keyspace, cc *CallContext, a []string) Reply {
	src, dst, m := a[1], a[2], a[3]
	sv := ks.lookup(cc.Now, src)
	if sv == nil {
		return intReply(0)
	}
	dv := ks.lookup(cc.Now, dst)
	if sv.kind != kindSet || (dv != nil && dv.kind != kindSet) {
		return errorReply(errWrongType)
	}
	if sv == dv {
		return intReply(boolInt(sv.has(m)))
	}
	if !sv.has(m) {
		return intReply(0)
	}
	delete(sv.set, m)
	ks.dropIfEmpty(src, sv)
	v, _ := ks.setFor(cc, dst, true)
	if _, ok := v.set[m]; !ok {
		v.set[m] = struct{}{}
		v.noteSetMember(m, ks.profile)
	}
	return intReply(1)
}

// cmdSRandMember implements SRANDMEMBER key [count]: without a count one
// member (nil for a missing key); a positive count that many distinct
// members (the whole set, in its order, when the count reaches its size);
// a negative count that many picks with repetition.
func cmdSRandMember(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) > 3 {
		return errorReply(errSyntax)
	}
	if len(a) == 2 {
		v, done, ok := ks.lookupOrReply(cc, a[1], kindSet, nilReply())
		if !ok {
			return done
		}
		ms := sortedSet(v.set)
		return bulkReply(ms[ks.random().Intn(len(ms))])
	}
	l, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	if l == math.MinInt64 {
		return errorReply(errCountRange)
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindSet, arrayReply([]Reply{}))
	if !ok {
		return done
	}
	if l < -maxRandomPicks {
		return errorReply(fmt.Sprintf(errTooManyPicks, "srandmember", l))
	}
	picked := randomPicks(ks.random(), ks.setMembers(v), l)
	out := make([]Reply, len(picked))
	for i, m := range picked {
		out[i] = bulkReply(m)
	}
	return arrayReply(out)
}

// randomPicks chooses as SRANDMEMBER and ZRANDMEMBER choose from members
// (listed in the collection's order): count 0 none, a negative count or 1
// that many draws with repetition, a count reaching the size all of them
// in order, otherwise count distinct members in random order.
func randomPicks[T any](rng *rand.Rand, members []T, count int64) []T {
	n := int64(len(members))
	switch {
	case count == 0:
		return nil
	case count < 0 || count == 1:
		if count < 0 {
			count = -count
		}
		out := make([]T, count)
		for i := range out {
			out[i] = members[rng.Int63n(n)]
		}
		return out
	case count >= n:
		return members
	}
	out := make([]T, 0, count)
	for _, i := range rng.Perm(int(n))[:count] {
		out = append(out, members[i])
	}
	return out
}
