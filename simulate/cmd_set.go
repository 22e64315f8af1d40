package simulate

import (
	"math/rand"
	"sort"
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
			v.noteSetMember(m)
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
	ms := sortedSet(v.set)
	if !v.big {
		intsetOrder(ms)
		return ms
	}
	ks.shuffleUndefined(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	return ms
}
