package simulate

// Redis 7.2 keeps small sets of strings as listpacks (set-max-listpack-*):
// between an intset and a hash table, listed in the order members came.
const (
	setMaxListpackEntries = 128
	setMaxListpackValue   = 64
)

// noteSetMember72 is setTypeAdd's conversion from 7.2 on, after member m
// was stored: an intset takes integers up to 512 members and turns into a
// listpack for the first string (if the set is small enough), a listpack
// takes up to 128 members of up to 64 bytes, and anything past that is a
// hash table for good.
func (v *value) noteSetMember72(m string) {
	if v.big {
		return
	}
	if v.setLP {
		if len(v.set) > setMaxListpackEntries || len(m) > setMaxListpackValue {
			v.big, v.setLP, v.setOrder = true, false, nil
			return
		}
		v.setOrder = append(v.liveSetOrder(m), m)
		return
	}
	if _, ok := parseInt(m); ok {
		if len(v.set) > setMaxIntsetEntries {
			v.big = true
		}
		return
	}
	if len(v.set) > setMaxListpackEntries || len(m) > setMaxListpackValue {
		v.big = true
		return
	}
	// The intset's members, in their numeric order, then m.
	ms := make([]string, 0, len(v.set))
	for x := range v.set {
		if x != m {
			ms = append(ms, x)
		}
	}
	intsetOrder(ms)
	v.setLP, v.setOrder = true, append(ms, m)
}

// liveSetOrder returns setOrder without members removed since and
// without skip, compacting it in place.
func (v *value) liveSetOrder(skip string) []string {
	out := v.setOrder[:0]
	seen := make(map[string]bool, len(v.setOrder))
	for _, x := range v.setOrder {
		if _, ok := v.set[x]; ok && x != skip && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// listpackSetMembers lists a listpack set in its order.
func (v *value) listpackSetMembers() []string {
	v.setOrder = v.liveSetOrder("")
	return append([]string(nil), v.setOrder...)
}

// fitsSetListpack reports whether a set built at once from members starts
// as a listpack (7.2's setTypeCreate): at most 128, none over 64 bytes.
func fitsSetListpack(members []string) bool {
	if len(members) > setMaxListpackEntries {
		return false
	}
	for _, m := range members {
		if len(m) > setMaxListpackValue {
			return false
		}
	}
	return true
}

// encodingIn is OBJECT ENCODING under line p: from 7.2 a list that fits
// one quicklist node (8 kB of listpack) is a plain listpack. (Redis turns
// a list back into a listpack only once it shrinks to half a node; the
// simulator judges by the present size.)
func (v *value) encodingIn(p Profile) string {
	if v.kind == kindList && p.since72() {
		var lp listpack
		for _, x := range v.list {
			if lp.n > 0 && 7+len(lp.entries)+len(x)+8 > listMaxListpackSize {
				return "quicklist"
			}
			lp.add(x)
		}
		return "listpack"
	}
	return v.encoding()
}

// setResultOrder lists SUNION's or SDIFF's result in the order Redis adds
// it to the new set: each input in its listing order, first come first.
// A listpack result keeps that order.
func (ks *Keyspace) setResultOrder(op setOp, sets []*value, result map[string]struct{}) []string {
	out := make([]string, 0, len(result))
	seen := make(map[string]bool, len(result))
	for i, s := range sets {
		if s == nil || (op == setDiff && i > 0) {
			continue
		}
		for _, m := range ks.setMembers(s) {
			if _, ok := result[m]; ok && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}
