package simulate

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

func init() {
	commands["sort"] = cmdSort(false)
	commands["sort_ro"] = cmdSort(true)
}

// sortItem is one element being sorted, with the weight it sorts by.
type sortItem struct {
	elem  string
	score float64
	cmp   *string // ALPHA BY: the looked-up value, nil when missing
}

// cmdSort implements SORT (and with ro SORT_RO, which has no STORE) key
// [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
// [STORE destination] as Redis's sortCommandGeneric does. Patterns read
// keys no script declared, as in Redis; the simulator is a standalone
// server, so it never answers the cluster-mode refusals of BY and GET.
// ALPHA compares bytes, as strcoll does in the C locale.
func cmdSort(ro bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		var desc, alpha, dontSort bool
		var limitStart, limitCount int64 = 0, -1
		var by, store string
		hasBy, hasStore := false, false
		var gets []string
		for j := 2; j < len(a); j++ {
			left := len(a) - j - 1
			switch opt := strings.ToLower(a[j]); {
			case opt == "asc":
				desc = false
			case opt == "desc":
				desc = true
			case opt == "alpha":
				alpha = true
			case opt == "limit" && left >= 2:
				s, ok1 := parseInt(a[j+1])
				n, ok2 := parseInt(a[j+2])
				if !ok1 || !ok2 {
					return errorReply(errNotInteger)
				}
				limitStart, limitCount = s, n
				j += 2
			case !ro && opt == "store" && left >= 1:
				store, hasStore = a[j+1], true
				j++
			case opt == "by" && left >= 1:
				by, hasBy = a[j+1], true
				dontSort = !strings.Contains(by, "*")
				j++
			case opt == "get" && left >= 1:
				gets = append(gets, a[j+1])
				j++
			default:
				return errorReply(errSyntax)
			}
		}
		v := ks.lookup(cc.Now, a[1])
		if v != nil && v.kind != kindSet && v.kind != kindList && v.kind != kindZSet {
			return errorReply(errWrongType)
		}
		if dontSort && v != nil && v.kind == kindSet && (hasStore || cc.InScript) {
			// A set's order is the server's own: Redis sorts it so that
			// scripts and replicas see one order.
			dontSort, alpha, hasBy = false, true, false
		}
		if v != nil && v.kind == kindZSet {
			v.big = true // SORT converts a listpack sorted set to a skiplist for good
		}
		var elems []string
		if v != nil {
			switch v.kind {
			case kindList:
				elems = v.list
			case kindSet:
				elems = ks.setMembers(v)
			case kindZSet:
				for _, m := range sortedMembers(v.zset) {
					elems = append(elems, m.Member)
				}
			}
		}
		n := int64(len(elems))
		start := min(max(limitStart, 0), n)
		limitCount = min(max(limitCount, -1), n)
		end := n - 1
		if limitCount >= 0 {
			end = start + limitCount - 1
		}
		if start >= n {
			start, end = n-1, n-2
		}
		end = min(end, n-1)
		items := make([]sortItem, len(elems))
		for i, e := range elems {
			items[i].elem = e
		}
		if dontSort && desc && v != nil && v.kind != kindSet {
			// Lists and sorted sets keep their own order, reversed by DESC.
			for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
				items[i], items[j] = items[j], items[i]
			}
		}
		if !dontSort {
			badScore := false
			for i := range items {
				w, found := items[i].elem, true
				if hasBy {
					w, found = ks.sortLookup(cc, by, items[i].elem)
				}
				switch {
				case !found:
				case alpha && hasBy:
					items[i].cmp = &w
				case !alpha:
					f, ok := sortWeight(w)
					if !ok {
						badScore = true
					}
					items[i].score = f
				}
			}
			sort.SliceStable(items, func(i, j int) bool {
				c := sortCompare(&items[i], &items[j], alpha, hasBy)
				if desc {
					c = -c
				}
				return c < 0
			})
			if badScore {
				return errorReply(errSortScore)
			}
		}
		var out []string
		var present []bool
		for i := start; i <= end; i++ {
			if len(gets) == 0 {
				out = append(out, items[i].elem)
				present = append(present, true)
				continue
			}
			for _, p := range gets {
				x, ok := ks.sortLookup(cc, p, items[i].elem)
				out = append(out, x)
				present = append(present, ok)
			}
		}
		if hasStore {
			if len(out) == 0 {
				delete(ks.keys, store)
			} else {
				ks.keys[store] = &value{kind: kindList, lru: lruClock(cc.Now), list: out}
			}
			return intReply(int64(len(out)))
		}
		replies := make([]Reply, len(out))
		for i, x := range out {
			if present[i] {
				replies[i] = bulkReply(x)
			}
		}
		return arrayReply(replies)
	}
}

// sortCompare is Redis's sortCompare before DESC: numbers by weight, ties
// by the elements' bytes; ALPHA by the looked-up values (a missing one
// first) or the elements.
func sortCompare(x, y *sortItem, alpha, byPattern bool) int {
	switch {
	case !alpha:
		if x.score != y.score {
			if x.score > y.score {
				return 1
			}
			return -1
		}
		return strings.Compare(x.elem, y.elem)
	case byPattern:
		switch {
		case x.cmp == nil && y.cmp == nil:
			return 0
		case x.cmp == nil:
			return -1
		case y.cmp == nil:
			return 1
		}
		return strings.Compare(*x.cmp, *y.cmp)
	}
	return strings.Compare(x.elem, y.elem)
}

// sortLookup resolves a SORT BY or GET pattern for elem as Redis's
// lookupKeyByPattern does: "#" is elem itself; the first '*' takes elem;
// "key->field" reads a hash field; a pattern without '*' finds nothing.
// ok is false when the key (of the right type) or field is missing.
func (ks *Keyspace) sortLookup(cc *CallContext, pattern, elem string) (string, bool) {
	if pattern == "#" {
		return elem, true
	}
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return "", false
	}
	key, field := pattern, ""
	if f := strings.Index(pattern[star+1:], "->"); f >= 0 && star+1+f+2 < len(pattern) {
		key, field = pattern[:star+1+f], pattern[star+1+f+2:]
	}
	key = key[:star] + elem + key[star+1:]
	v := ks.lookup(cc.Now, key)
	switch {
	case v == nil:
		return "", false
	case field != "":
		if v.kind != kindHash {
			return "", false
		}
		x, ok := v.hash[field]
		return x, ok
	case v.kind != kindString:
		return "", false
	}
	return v.str, true
}

// sortWeight parses a SORT weight as C's strtod with Redis's checks: the
// whole string (leading white space allowed, "" is 0), no NaN, and no
// overflow or underflow (ERANGE).
func sortWeight(s string) (float64, bool) {
	if s == "" {
		return 0, true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" || strings.ContainsRune(t, '_') {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if t[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	hex := len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	if hex && !strings.ContainsAny(body, "pP") {
		t += "p0"
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, false // syntax, or overflow: ERANGE
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if (f == 0 && strings.ContainsAny(mantissa(body, hex), "123456789abcdefABCDEF")) || (f != 0 && math.Abs(f) < 0x1p-1022) {
		return 0, false // underflow: glibc's strtod sets ERANGE
	}
	return f, true
}

// mantissa is a number's digits before its exponent.
func mantissa(body string, hex bool) string {
	cut := "eE"
	if hex {
		body, cut = body[2:], "pP"
	}
	if i := strings.IndexAny(body, cut); i >= 0 {
		return body[:i]
	}
	return body
}
