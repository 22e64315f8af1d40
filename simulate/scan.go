package simulate

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// SCAN and the collection scans HSCAN, SSCAN and ZSCAN share their cursor
// and options; each group's file registers its command.

// scanDefaultCount is COUNT's default.
const scanDefaultCount = 10

// scanOptions are SCAN's MATCH, COUNT and TYPE.
type scanOptions struct {
	count    int64
	pattern  string
	matchAll bool
	typeName string // "" matches every type
}

func (o *scanOptions) match(s string) bool { return o.matchAll || globMatch(o.pattern, s) }

// parseScanCursor is parseScanCursorOrReply: strtoul over the whole
// argument (so "-1" wraps and "" is 0), no leading space, no overflow.
func parseScanCursor(s string) (uint64, bool) {
	if s != "" && isCSpace(s[0]) {
		return 0, false
	}
	return parseScanCursorDigits(s)
}

// parseScanCursor74 is 7.4's and Valkey 8's cursor parsing: leading
// white space and a plus sign are skipped, digits must follow, and a
// negative cursor is refused.
func parseScanCursor74(s string) (uint64, bool) {
	s = strings.TrimLeftFunc(s, func(r rune) bool { return r < 0x80 && isCSpace(byte(r)) })
	s = strings.TrimPrefix(s, "+")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false // no digits, or a sign Redis does not wrap
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseScanCursorDigits reads a cursor after any leading space.
func parseScanCursorDigits(s string) (uint64, bool) {
	digits, neg := s, false
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		neg, digits = digits[0] == '-', digits[1:]
	}
	if digits == "" {
		return 0, s == "" // strtoul of "" stops at once: cursor 0; a bare sign is garbage
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// parseScanOptions reads the options after the cursor; TYPE is only
// SCAN's.
func parseScanOptions(a []string, allowType bool) (scanOptions, *Reply) {
	o := scanOptions{count: scanDefaultCount, matchAll: true}
	for i := 0; i < len(a); i += 2 {
		if i+1 >= len(a) {
			r := errorReply(errSyntax)
			return o, &r
		}
		switch strings.ToLower(a[i]) {
		case "count":
			n, ok := parseInt(a[i+1])
			if !ok {
				r := errorReply(errNotInteger)
				return o, &r
			}
			if n < 1 {
				r := errorReply(errSyntax)
				return o, &r
			}
			o.count = n
		case "match":
			o.pattern, o.matchAll = a[i+1], a[i+1] == "*"
		case "type":
			if !allowType {
				r := errorReply(errSyntax)
				return o, &r
			}
			o.typeName = a[i+1]
		default:
			r := errorReply(errSyntax)
			return o, &r
		}
	}
	return o, nil
}

// scanHash places an element in a hash table scan: a fixed 63-bit hash
// plus one, so no element sits at cursor 0 (which means "done").
func scanHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()>>1 + 1
}

// scanPage pages through elements that Redis keeps in a hash table: they
// are visited in the order of scanHash, cursor c resumes at the first
// element whose hash is at least c. An element present for the whole
// iteration is returned exactly once, whatever is added or removed in
// between (Redis promises at least once). count elements are visited per
// call (more when hashes tie, never split); the filters apply afterwards,
// so a page may come back empty with a cursor to go on, as in Redis.
func scanPage(elems []string, cursor uint64, count int64) (page []string, next uint64) {
	type entry struct {
		h uint64
		s string
	}
	es := make([]entry, 0, len(elems))
	for _, e := range elems {
		if h := scanHash(e); h >= cursor {
			es = append(es, entry{h, e})
		}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].h != es[j].h {
			return es[i].h < es[j].h
		}
		return es[i].s < es[j].s
	})
	n := 0
	for n < len(es) && (int64(n) < count || es[n].h == es[n-1].h) {
		n++
	}
	for _, e := range es[:n] {
		page = append(page, e.s)
	}
	if n < len(es) {
		next = es[n].h
	}
	return page, next
}

func scanReply(cursor uint64, elems []Reply) Reply {
	return arrayReply([]Reply{bulkReply(strconv.FormatUint(cursor, 10)), arrayReply(elems)})
}

// cmdScan implements SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
func cmdScan(ks *Keyspace, cc *CallContext, a []string) Reply {
	cursor, ok := ks.profile.parseScanCursor(a[1])
	if !ok {
		return errorReply(errInvalidCursor)
	}
	o, bad := parseScanOptions(a[2:], true)
	if bad != nil {
		return *bad
	}
	if (ks.profile == Valkey80 || ks.profile == Redis80) && o.typeName != "" && !knownTypeName(o.typeName) {
		return errorReply(fmt.Sprintf("ERR unknown type name '%s'", o.typeName))
	}
	names := make([]string, 0, len(ks.keys))
	for k := range ks.keys {
		names = append(names, k)
	}
	page, next := scanPage(names, cursor, o.count)
	out := make([]Reply, 0, len(page))
	for _, k := range page {
		v := ks.peek(cc.Now, k) // an expired key is deleted, not listed
		if v == nil || !o.match(k) || (o.typeName != "" && !strings.EqualFold(o.typeName, kindNames[v.kind])) {
			continue
		}
		out = append(out, bulkReply(k))
	}
	ks.shuffleUndefined(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return scanReply(next, out)
}

// cmdCollectionScan implements HSCAN, SSCAN and ZSCAN key cursor [MATCH
// pattern] [COUNT count]. A small encoding (listpack, intset) answers in
// one call with cursor 0, whatever the cursor and COUNT, in the
// encoding's order; a hash table pages as scanPage does.
func cmdCollectionScan(k kind) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		cursor, ok := ks.profile.parseScanCursor(a[2])
		if !ok {
			return errorReply(errInvalidCursor)
		}
		v, wrong := ks.getTyped(cc.Now, a[1], k)
		if wrong != nil {
			return *wrong
		}
		if v == nil {
			return scanReply(0, []Reply{}) // Redis answers before it reads the options
		}
		opts, noValues := a[3:], false
		if k == kindHash && ks.profile.hasNoValues() {
			opts, noValues = dropNoValues(opts)
		}
		o, bad := parseScanOptions(opts, false)
		if bad != nil {
			return *bad
		}
		elems, next := collectionElems(v, cursor, o.count)
		out := make([]Reply, 0, 2*len(elems))
		var group [][]Reply
		for _, e := range elems {
			if !o.match(e) {
				continue
			}
			switch k {
			case kindHash:
				if noValues {
					group = append(group, []Reply{bulkReply(e)})
					continue
				}
				group = append(group, []Reply{bulkReply(e), bulkReply(v.hash[e])})
			case kindZSet:
				group = append(group, []Reply{bulkReply(e), bulkReply(ks.profile.formatDouble(v.zset[e]))})
			default:
				group = append(group, []Reply{bulkReply(e)})
			}
		}
		if v.big {
			ks.shuffleUndefined(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
		}
		for _, g := range group {
			out = append(out, g...)
		}
		return scanReply(next, out)
	}
}

// collectionElems returns the fields or members one call visits and the
// cursor to go on with.
func collectionElems(v *value, cursor uint64, count int64) ([]string, uint64) {
	if !v.big {
		switch v.kind {
		case kindHash:
			return v.fields, 0
		case kindSet:
			if v.setLP {
				return v.listpackSetMembers(), 0
			}
			ms := sortedSet(v.set)
			intsetOrder(ms)
			return ms, 0
		default:
			ms := sortedMembers(v.zset)
			names := make([]string, len(ms))
			for i, m := range ms {
				names[i] = m.Member
			}
			return names, 0
		}
	}
	var all []string
	switch v.kind {
	case kindHash:
		all = v.fields
	case kindSet:
		all = make([]string, 0, len(v.set))
		for m := range v.set {
			all = append(all, m)
		}
	default:
		all = make([]string, 0, len(v.zset))
		for m := range v.zset {
			all = append(all, m)
		}
	}
	return scanPage(all, cursor, count)
}
