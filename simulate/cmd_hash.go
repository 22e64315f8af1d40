package simulate

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

func init() {
	commands["hset"] = cmdHSet(false)
	commands["hmset"] = cmdHSet(true)
	commands["hsetnx"] = cmdHSetNX
	commands["hget"] = cmdHGet
	commands["hmget"] = cmdHMGet
	commands["hdel"] = cmdRemove(kindHash)
	commands["hexists"] = cmdHas(kindHash)
	commands["hlen"] = cmdLen(kindHash)
	commands["hgetall"] = cmdHGetAll(true, true)
	commands["hkeys"] = cmdHGetAll(true, false)
	commands["hvals"] = cmdHGetAll(false, true)
	commands["hincrby"] = cmdHIncrBy
	commands["hincrbyfloat"] = cmdHIncrByFloat
	commands["hscan"] = cmdCollectionScan(kindHash)
	commands["hstrlen"] = cmdHStrLen
	commands["hrandfield"] = cmdHRandField
}

func cmdHStrLen(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, done, ok := ks.lookupOrReply(cc, a[1], kindHash, intReply(0))
	if !ok {
		return done
	}
	return intReply(int64(len(v.hash[a[2]])))
}

// hrandfieldMaxCount bounds how many fields one HRANDFIELD with a negative
// count may return: Redis would build the reply however large, the
// simulator refuses one that could not fit in memory.
const hrandfieldMaxCount = 1 << 24

// cmdHRandField implements HRANDFIELD key [count [WITHVALUES]] with
// Redis's rules: a positive count gives distinct fields (the whole hash
// when count is at least its size, in listing order), a negative one
// -count fields that may repeat, in random order. The choice comes from
// the keyspace's seeded generator, so a run reproduces.
func cmdHRandField(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) == 2 {
		v, done, ok := ks.lookupOrReply(cc, a[1], kindHash, nilReply())
		if !ok {
			return done
		}
		fs := ks.hashFields(v)
		return bulkReply(fs[ks.random().Intn(len(fs))])
	}
	l, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	if l == math.MinInt64 {
		return errorReply(errHRandCount)
	}
	withValues := false
	if len(a) > 4 || (len(a) == 4 && !strings.EqualFold(a[3], "withvalues")) {
		return errorReply(errSyntax)
	} else if len(a) == 4 {
		withValues = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			return errorReply(errHRandRange)
		}
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindHash, arrayReply([]Reply{}))
	if !ok {
		return done
	}
	if l == 0 {
		return arrayReply([]Reply{})
	}
	fs := ks.hashFields(v)
	var picked []string
	switch {
	case l < 0 || l == 1:
		n := l
		if n < 0 {
			n = -n
		}
		if n > hrandfieldMaxCount {
			return errorReply(fmt.Sprintf(errHRandTooMany, n, hrandfieldMaxCount))
		}
		rng := ks.random()
		picked = make([]string, n)
		for i := range picked {
			picked[i] = fs[rng.Intn(len(fs))]
		}
	case l >= int64(len(fs)):
		picked = fs
	default:
		// Distinct fields, kept in listing order (as a listpack's sampling keeps them).
		keep := ks.random().Perm(len(fs))[:l]
		sort.Ints(keep)
		for _, i := range keep {
			picked = append(picked, fs[i])
		}
	}
	out := make([]Reply, 0, len(picked))
	for _, f := range picked {
		if withValues {
			out = append(out, arrayReply([]Reply{bulkReply(f), bulkReply(v.hash[f])}))
		} else {
			out = append(out, bulkReply(f))
		}
	}
	if withValues && cc.RESP != 3 {
		return flattenPairs(out)
	}
	return arrayReply(out)
}

// flattenPairs turns RESP3's [[a, b], [c, d]] into RESP2's [a, b, c, d].
func flattenPairs(pairs []Reply) Reply {
	flat := make([]Reply, 0, 2*len(pairs))
	for _, p := range pairs {
		flat = append(flat, p.Elems...)
	}
	return arrayReply(flat)
}

func (ks *Keyspace) hashFor(cc *CallContext, key string, create bool) (*value, *Reply) {
	return ks.valueFor(cc, key, kindHash, create)
}

func cmdHSet(legacy bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if len(a)%2 != 0 {
			name := "hset"
			if legacy {
				name = "hmset"
			}
			return errorReply(fmt.Sprintf(errWrongArgs, name))
		}
		v, wrong := ks.hashFor(cc, a[1], true)
		if wrong != nil {
			return *wrong
		}
		var added int64
		for i := 2; i+1 < len(a); i += 2 {
			if v.hset(a[i], a[i+1]) {
				added++
			}
		}
		if legacy {
			return okReply()
		}
		return intReply(added)
	}
}

func cmdHSetNX(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.hashFor(cc, a[1], true)
	if wrong != nil {
		return *wrong
	}
	if _, ok := v.hash[a[2]]; ok {
		return intReply(0)
	}
	v.hset(a[2], a[3])
	return intReply(1)
}

func cmdHGet(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, done, ok := ks.lookupOrReply(cc, a[1], kindHash, nilReply())
	if !ok {
		return done
	}
	if x, ok := v.hash[a[2]]; ok {
		return bulkReply(x)
	}
	return nilReply()
}

func cmdHMGet(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.hashFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	out := make([]Reply, 0, len(a)-2)
	for _, f := range a[2:] {
		x, ok := "", false
		if v != nil {
			x, ok = v.hash[f]
		}
		if ok {
			out = append(out, bulkReply(x))
		} else {
			out = append(out, nilReply())
		}
	}
	return arrayReply(out)
}

// hset sets a hash field, appending a new one to the insertion order; it
// reports whether the field is new.
func (v *value) hset(field, x string) bool {
	_, exists := v.hash[field]
	if !exists {
		v.fields = append(v.fields, field)
	}
	v.hash[field] = x
	v.noteHashField(field, x)
	return !exists
}

// hdel deletes a hash field, keeping the order of the others.
func (v *value) hdel(field string) {
	delete(v.hash, field)
	for i, f := range v.fields {
		if f == field {
			v.fields = append(v.fields[:i], v.fields[i+1:]...)
			break
		}
	}
}

// cmdHGetAll implements HGETALL, HKEYS and HVALS as Redis's
// genericHgetallCommand does: every field, every value, or both (as a
// map), in listing order.
func cmdHGetAll(fields, values bool) handler {
	kind := KindArray
	if fields && values {
		kind = KindMap
	}
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, done, ok := ks.lookupOrReply(cc, a[1], kindHash, Reply{Kind: kind, Elems: []Reply{}})
		if !ok {
			return done
		}
		out := []Reply{}
		for _, f := range ks.hashFields(v) {
			if fields {
				out = append(out, bulkReply(f))
			}
			if values {
				out = append(out, bulkReply(v.hash[f]))
			}
		}
		return Reply{Kind: kind, Elems: out}
	}
}

func cmdHIncrBy(ks *Keyspace, cc *CallContext, a []string) Reply {
	by, ok := parseInt(a[3])
	if !ok {
		return errorReply(errNotInteger)
	}
	v, wrong := ks.hashFor(cc, a[1], true)
	if wrong != nil {
		return *wrong
	}
	var cur int64
	if x, exists := v.hash[a[2]]; exists {
		if cur, ok = parseInt(x); !ok {
			return errorReply(errHashNotInt)
		}
	}
	sum, ok := addInt64(cur, by)
	if !ok {
		return errorReply(errOverflow)
	}
	v.hset(a[2], strconv.FormatInt(sum, 10))
	return intReply(sum)
}

func cmdHIncrByFloat(ks *Keyspace, cc *CallContext, a []string) Reply {
	by, ok := parseLongDouble(a[3])
	if !ok {
		return errorReply(errNotFloat)
	}
	if by.IsInf() {
		return errorReply(errValueNaN)
	}
	v, wrong := ks.hashFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	cur := new(big.Float).SetPrec(longDoublePrec)
	if v != nil {
		if x, exists := v.hash[a[2]]; exists {
			f, ok := parseLongDouble(x)
			if !ok {
				return errorReply(errHashNotFloat)
			}
			cur = f
		}
	}
	sum, ok := addLongDouble(cur, by)
	if !ok {
		return errorReply(errIncrNaN)
	}
	if v == nil {
		v, _ = ks.hashFor(cc, a[1], true)
	}
	out := formatLongDouble(sum)
	v.hset(a[2], out)
	return bulkReply(out)
}

// hashFields lists a hash's fields in listing order: insertion order, as
// a listpack keeps it, or for a hash table (whose order Redis leaves
// undefined) the same order, shuffled under UndefinedOrderShuffled.
func (ks *Keyspace) hashFields(v *value) []string {
	if !v.big || ks.shuffle == nil {
		return v.fields
	}
	fs := append([]string(nil), v.fields...)
	ks.shuffleUndefined(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	return fs
}
