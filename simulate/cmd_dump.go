package simulate

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DUMP and RESTORE speak Redis 7.0's payload: an RDB object type byte, the
// object as RDB 10 writes it, the RDB version (2 bytes) and a CRC64 (Jones,
// 8 bytes), both little-endian. Strings, integer sets, small (listpack)
// hashes and sorted sets, skiplist sorted sets and lists built by pushes
// come out byte for byte as Redis writes them, LZF compression included.
// Hash-table hashes and sets list their elements in the simulator's order
// (Redis's is its hash table's). Streams are not supported.

func init() {
	commands["dump"] = cmdDump
	commands["restore"] = cmdRestore
	commands["restore-asking"] = cmdRestore
}

// RDB object types (rdb.h).
const (
	rdbTypeString         = 0
	rdbTypeSet            = 2
	rdbTypeHash           = 4
	rdbTypeZSet2          = 5
	rdbTypeSetIntset      = 11
	rdbTypeStreamListpack = 15
	rdbTypeHashListpack   = 16
	rdbTypeZSetListpack   = 17
	rdbTypeListQuicklist2 = 18
	rdbTypeStream2        = 19
	rdbTypeSetListpack    = 20 // 7.2
)

const listMaxListpackSize = 8192 // list-max-listpack-size -2: 8 kB per quicklist node

func cmdDump(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		return nilReply()
	}
	b, ok := dumpObject(v, ks.profile)
	if !ok {
		return errorReply(errDumpStream)
	}
	b = binary.LittleEndian.AppendUint16(b, ks.profile.facts().rdbVersion)
	return bulkReply(string(binary.LittleEndian.AppendUint64(b, redisCRC64(b))))
}

// dumpObject is rdbSaveObjectType and rdbSaveObject for v; ok is false
// for a stream.
func dumpObject(v *value, p Profile) ([]byte, bool) {
	switch v.kind {
	case kindString:
		return appendDumpString(append([]byte(nil), rdbTypeString), v.str), true
	case kindList:
		return dumpList(v.list), true
	case kindSet:
		if v.setLP {
			var lp listpack
			for _, m := range v.listpackSetMembers() {
				lp.add(m)
			}
			return appendDumpString([]byte{rdbTypeSetListpack}, string(lp.bytes())), true
		}
		members := sortedSet(v.set)
		if !v.big {
			return appendDumpString([]byte{rdbTypeSetIntset}, string(intsetBlob(members))), true
		}
		b := appendRDBLength([]byte{rdbTypeSet}, uint64(len(members)))
		for _, m := range members {
			b = appendDumpString(b, m)
		}
		return b, true
	case kindHash:
		if !v.big {
			var lp listpack
			for _, f := range v.fields {
				lp.add(f)
				lp.add(v.hash[f])
			}
			return appendDumpString([]byte{rdbTypeHashListpack}, string(lp.bytes())), true
		}
		b := appendRDBLength([]byte{rdbTypeHash}, uint64(len(v.fields)))
		for _, f := range v.fields {
			b = appendDumpString(appendDumpString(b, f), v.hash[f])
		}
		return b, true
	case kindZSet:
		ms := sortedMembers(v.zset)
		if !v.big {
			var lp listpack
			for _, m := range ms {
				lp.add(m.Member)
				lp.add(zsetScoreString(m.Score, p))
			}
			return appendDumpString([]byte{rdbTypeZSetListpack}, string(lp.bytes())), true
		}
		b := appendRDBLength([]byte{rdbTypeZSet2}, uint64(len(ms)))
		for i := len(ms) - 1; i >= 0; i-- { // from the skiplist's tail
			b = appendDumpString(b, ms[i].Member)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ms[i].Score))
		}
		return b, true
	}
	return nil, false
}

// dumpList writes a list as a quicklist whose nodes fill up as pushes to
// the tail fill them (up to 8 kB of listpack each).
func dumpList(list []string) []byte {
	var nodes [][]byte
	var cur listpack
	for _, x := range list {
		if cur.n > 0 && len(cur.bytes())+len(x)+8 > listMaxListpackSize {
			nodes = append(nodes, cur.bytes())
			cur = listpack{}
		}
		cur.add(x)
	}
	if cur.n > 0 {
		nodes = append(nodes, cur.bytes())
	}
	b := appendRDBLength([]byte{rdbTypeListQuicklist2}, uint64(len(nodes)))
	for _, n := range nodes {
		b = appendRDBLength(b, 2) // QUICKLIST_NODE_CONTAINER_PACKED
		b = appendDumpString(b, string(n))
	}
	return b
}

// zsetScoreString is how a listpack sorted set stores a score: an integer
// when the double holds one (within ±2^62), else "%.17g".
func zsetScoreString(f float64, p Profile) string {
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return strconv.FormatInt(int64(f), 10)
	}
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return p.formatDouble(f)
}

// appendDumpString is rdbSaveRawString: a string of up to 11 bytes that
// is an integer within 32 bits is stored as one, a longer one than 20
// bytes is LZF-compressed when that saves at least 4 bytes, the rest is
// stored verbatim after its length.
func appendDumpString(b []byte, s string) []byte {
	if len(s) <= 11 {
		if n, ok := parseInt(s); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			switch {
			case n >= math.MinInt8 && n <= math.MaxInt8:
				return append(b, 0xc0, byte(n))
			case n >= math.MinInt16 && n <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(b, 0xc1), uint16(n))
			}
			return binary.LittleEndian.AppendUint32(append(b, 0xc2), uint32(n))
		}
	}
	if len(s) > 20 {
		if c := lzfCompress([]byte(s), len(s)-4); c != nil {
			b = append(b, 0xc0|rdbEncLZF)
			b = appendRDBLength(b, uint64(len(c)))
			b = appendRDBLength(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	return append(appendRDBLength(b, uint64(len(s))), s...)
}

// intsetBlob is an intset of members (integers): its encoding (the width
// its largest member needs), its length and the sorted values.
func intsetBlob(members []string) []byte {
	vals := make([]int64, len(members))
	width := 2
	for i, m := range members {
		n, _ := parseInt(m)
		vals[i] = n
		switch {
		case n < math.MinInt32 || n > math.MaxInt32:
			width = 8
		case (n < math.MinInt16 || n > math.MaxInt16) && width < 4:
			width = 4
		}
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	b := binary.LittleEndian.AppendUint32(nil, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, n := range vals {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(n))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(n))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(n))
		}
	}
	return b
}

// listpack builds a Redis listpack: a header (total bytes, element count),
// the entries, each followed by its length backwards, and 0xFF.
type listpack struct {
	entries []byte
	n       int
}

func (lp *listpack) add(s string) {
	start := len(lp.entries)
	if n, ok := parseInt(s); ok {
		switch {
		case n >= 0 && n <= 127:
			lp.entries = append(lp.entries, byte(n))
		case n >= -4096 && n <= 4095:
			u := uint64(n) & (1<<13 - 1)
			lp.entries = append(lp.entries, 0xc0|byte(u>>8), byte(u))
		case n >= math.MinInt16 && n <= math.MaxInt16:
			lp.entries = binary.LittleEndian.AppendUint16(append(lp.entries, 0xf1), uint16(n))
		case n >= -1<<23 && n < 1<<23:
			u := uint32(n)
			lp.entries = append(lp.entries, 0xf2, byte(u), byte(u>>8), byte(u>>16))
		case n >= math.MinInt32 && n <= math.MaxInt32:
			lp.entries = binary.LittleEndian.AppendUint32(append(lp.entries, 0xf3), uint32(n))
		default:
			lp.entries = binary.LittleEndian.AppendUint64(append(lp.entries, 0xf4), uint64(n))
		}
	} else {
		switch l := len(s); {
		case l < 64:
			lp.entries = append(lp.entries, 0x80|byte(l))
		case l < 4096:
			lp.entries = append(lp.entries, 0xe0|byte(l>>8), byte(l))
		default:
			lp.entries = binary.LittleEndian.AppendUint32(append(lp.entries, 0xf0), uint32(l))
		}
		lp.entries = append(lp.entries, s...)
	}
	lp.entries = appendBacklen(lp.entries, uint64(len(lp.entries)-start))
	lp.n++
}

// appendBacklen is lpEncodeBacklen: an entry's length, 7 bits a byte,
// read from its end.
func appendBacklen(b []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte(l>>7&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte(l>>21&127)|128, byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
}

func (lp *listpack) bytes() []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(6+len(lp.entries)+1))
	b = binary.LittleEndian.AppendUint16(b, uint16(min(lp.n, math.MaxUint16)))
	return append(append(b, lp.entries...), 0xff)
}

// lzfCompress is liblzf's lzf_compress as Redis builds it (HLOG 16,
// VERY_FAST), so that a compressed string comes out as Redis writes it:
// nil when the output would not fit in outLen bytes.
func lzfCompress(in []byte, outLen int) []byte {
	const (
		maxLit = 1 << 5
		maxOff = 1 << 13
		maxRef = 1<<8 + 1<<3
		hsize  = 1 << 16
	)
	if len(in) == 0 || outLen <= 0 {
		return nil
	}
	htab := make([]int32, hsize) // input position + 1; 0 is empty
	idx := func(h uint32) uint32 { return ((h >> 8) - h*5) & (hsize - 1) }
	out := make([]byte, outLen+1)
	ip, op, lit := 0, 1, 0 // op 1: the first literal run's length byte is reserved
	inEnd := len(in)
	var hval uint32
	if len(in) >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < inEnd-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := &htab[idx(hval)]
		ref := int(*slot) - 1
		*slot = int32(ip + 1)
		if ref > 0 && ip-ref-1 < maxOff && in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			length := 2
			maxLen := min(inEnd-ip-length, maxRef)
			if op+3+1 >= outLen {
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen {
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1)
			if lit == 0 {
				op--
			}
			// liblzf compares 16 bytes unchecked when that many are left,
			// then byte by byte up to maxLen.
			mismatch := false
			for k := 0; maxLen > 16 && k < 16 && !mismatch; k++ {
				length++
				mismatch = in[ref+length] != in[ip+length]
			}
			for !mismatch {
				length++
				mismatch = length >= maxLen || in[ref+length] != in[ip+length]
			}
			length -= 2
			ip++
			if length < 7 {
				out[op] = byte(off>>8) + byte(length<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++
			ip += length + 1
			if ip >= inEnd-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = int32(ip + 1)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = int32(ip + 1)
			ip++
			continue
		}
		if op >= outLen {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < inEnd {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return out[:op]
}

// cmdRestore implements RESTORE and RESTORE-ASKING key ttl payload
// [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f], in Redis's order of checks.
// IDLETIME and FREQ are validated and otherwise ignored: the simulator
// keeps no access statistics.
func cmdRestore(ks *Keyspace, cc *CallContext, a []string) Reply {
	var replace, absTTL, idle, freq bool
	var idleSeconds int64
	for j := 4; j < len(a); j++ {
		more := j+1 < len(a)
		switch opt := strings.ToLower(a[j]); {
		case opt == "replace":
			replace = true
		case opt == "absttl":
			absTTL = true
		case opt == "idletime" && more && !freq:
			n, ok := parseInt(a[j+1])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n < 0 {
				return errorReply(errRestoreIdle)
			}
			idle, idleSeconds = true, n
			j++
		case opt == "freq" && more && !idle:
			n, ok := parseInt(a[j+1])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n < 0 || n > 255 {
				return errorReply(errRestoreFreq)
			}
			freq = true
			j++
		default:
			return errorReply(errSyntax)
		}
	}
	if !replace && ks.lookup(cc.Now, a[1]) != nil {
		return errorReply(errBusyKey)
	}
	ttl, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	if ttl < 0 {
		return errorReply(errRestoreTTL)
	}
	p := []byte(a[3])
	if len(p) < 10 || binary.LittleEndian.Uint16(p[len(p)-10:]) > ks.profile.facts().rdbVersion ||
		binary.LittleEndian.Uint64(p[len(p)-8:]) != redisCRC64(p[:len(p)-8]) {
		return errorReply(errRestorePayload)
	}
	v, errText := undumpObject(p[:len(p)-10], ks.profile)
	if errText != "" {
		return errorReply(errText)
	}
	if replace {
		delete(ks.keys, a[1])
	}
	if ttl != 0 && !absTTL {
		ttl += cc.Now.UnixMilli()
	}
	if ttl != 0 && ttl <= cc.Now.UnixMilli() {
		return okReply() // already expired: only the old key goes
	}
	v.exp = ttl
	// The access time is now, or IDLETIME seconds ago; FREQ counts only
	// under an LFU maxmemory policy, which the simulator does not have.
	v.lru = lruClock(cc.Now)
	if idle {
		v.lru = lruClock(cc.Now.Add(-time.Duration(min(idleSeconds, 1<<40)) * time.Second))
	}
	ks.keys[a[1]] = v
	return okReply()
}

// dumpReader reads an RDB object; a malformed one is Redis's "Bad data
// format".
type dumpReader struct {
	b   []byte
	bad bool
}

func (r *dumpReader) length() uint64 {
	n, rest, ok := readRDBLength(r.b)
	if !ok {
		r.bad = true
		return 0
	}
	r.b = rest
	return n
}

// str reads an RDB string: an integer, LZF-compressed, or verbatim.
func (r *dumpReader) str() string {
	if r.bad || len(r.b) == 0 {
		r.bad = true
		return ""
	}
	if r.b[0]>>6 != 3 {
		n := r.length()
		if r.bad || uint64(len(r.b)) < n {
			r.bad = true
			return ""
		}
		s := string(r.b[:n])
		r.b = r.b[n:]
		return s
	}
	enc := r.b[0] & 0x3f
	r.b = r.b[1:]
	take := func(n int) []byte {
		if len(r.b) < n {
			r.bad = true
			return make([]byte, n)
		}
		x := r.b[:n]
		r.b = r.b[n:]
		return x
	}
	switch enc {
	case 0:
		return strconv.Itoa(int(int8(take(1)[0])))
	case 1:
		return strconv.Itoa(int(int16(binary.LittleEndian.Uint16(take(2)))))
	case 2:
		return strconv.Itoa(int(int32(binary.LittleEndian.Uint32(take(4)))))
	case rdbEncLZF:
		clen, ulen := r.length(), r.length()
		// A back reference of 3 bytes expands to at most 264: a longer
		// claimed length is corrupt, and is refused before any allocation.
		if r.bad || uint64(len(r.b)) < clen || ulen > clen*88 {
			r.bad = true
			return ""
		}
		out, ok := lzfDecompress(take(int(clen)), ulen)
		if !ok {
			r.bad = true
		}
		return string(out)
	}
	r.bad = true
	return ""
}

// undumpObject reads a DUMP payload's object (without the footer) into a
// value encoded as Redis's rdbLoadObject would leave it, or returns the
// error text.
func undumpObject(b []byte, p Profile) (*value, string) {
	if len(b) == 0 {
		return nil, errRestoreBadData
	}
	typ := b[0]
	r := &dumpReader{b: b[1:]}
	var v *value
	switch typ {
	case rdbTypeString:
		v = &value{kind: kindString, str: r.str()}
	case rdbTypeSet, rdbTypeSetIntset, rdbTypeSetListpack:
		if typ == rdbTypeSetListpack && !p.since72() {
			return nil, errRestoreBadData // 7.0 knows no listpack sets
		}
		var members []string
		if typ == rdbTypeSetListpack {
			members = parseListpack([]byte(r.str()), r)
		} else if typ == rdbTypeSet {
			for n := r.length(); n > 0 && !r.bad; n-- {
				members = append(members, r.str())
			}
		} else {
			members = parseIntset([]byte(r.str()), r)
		}
		v = &value{kind: kindSet, set: map[string]struct{}{}}
		for _, m := range members {
			if v.has(m) && typ == rdbTypeSet {
				r.bad = true
			}
			v.set[m] = struct{}{}
		}
		for _, m := range members {
			v.noteSetMember(m, p)
		}
		if typ == rdbTypeSetListpack && !v.big && !v.setLP && len(members) > 0 {
			v.setLP, v.setOrder = true, append([]string(nil), members...) // a listpack of integers stays one
		}
		if typ == rdbTypeSet && len(members) > setMaxIntsetEntries {
			v.big = true
		}
		if v.big {
			v.setLP, v.setOrder = false, nil
		}
	case rdbTypeHash, rdbTypeHashListpack:
		var pairs []string
		if typ == rdbTypeHash {
			for n := r.length(); n > 0 && !r.bad; n-- {
				pairs = append(pairs, r.str(), r.str())
			}
		} else {
			pairs = parseListpack([]byte(r.str()), r)
		}
		if len(pairs)%2 != 0 {
			r.bad = true
		}
		v = &value{kind: kindHash, hash: map[string]string{}}
		for i := 0; i+1 < len(pairs); i += 2 {
			if _, dup := v.hash[pairs[i]]; dup && typ == rdbTypeHash {
				r.bad = true
			}
			v.hset(pairs[i], pairs[i+1])
		}
		if typ == rdbTypeHashListpack && !(len(v.hash) > hashMaxListpackEntries) {
			v.big = false // a listpack stays one whatever its values' lengths
		}
	case rdbTypeZSet2, rdbTypeZSetListpack:
		v = &value{kind: kindZSet, zset: map[string]float64{}}
		maxLen := 0
		if typ == rdbTypeZSet2 {
			for n := r.length(); n > 0 && !r.bad; n-- {
				m := r.str()
				if len(r.b) < 8 {
					r.bad = true
					break
				}
				f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
				r.b = r.b[8:]
				if _, dup := v.zset[m]; dup || math.IsNaN(f) {
					r.bad = true
				}
				v.zset[m] = f
				maxLen = max(maxLen, len(m))
			}
			v.big = len(v.zset) > zsetMaxListpackEntries || maxLen > zsetMaxListpackValue
		} else {
			pairs := parseListpack([]byte(r.str()), r)
			if len(pairs)%2 != 0 {
				r.bad = true
			}
			for i := 0; i+1 < len(pairs); i += 2 {
				f, ok := strtod(pairs[i+1])
				if !ok {
					r.bad = true
				}
				v.zset[pairs[i]] = f
			}
			v.big = len(v.zset) > zsetMaxListpackEntries
		}
	case rdbTypeListQuicklist2:
		v = &value{kind: kindList}
		for n := r.length(); n > 0 && !r.bad; n-- {
			switch container := r.length(); container {
			case 1: // a plain node: one element
				v.list = append(v.list, r.str())
			case 2:
				v.list = append(v.list, parseListpack([]byte(r.str()), r)...)
			default:
				r.bad = true
			}
		}
	case rdbTypeStreamListpack, rdbTypeStream2:
		return nil, errRestoreStream
	default:
		return nil, errRestoreBadData
	}
	if r.bad || len(r.b) != 0 || (v.kind != kindString && v.size() == 0) {
		return nil, errRestoreBadData
	}
	return v, ""
}

// parseIntset reads an intset's members as decimal strings.
func parseIntset(b []byte, r *dumpReader) []string {
	if len(b) < 8 {
		r.bad = true
		return nil
	}
	width, n := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if (width != 2 && width != 4 && width != 8) || uint64(len(b)-8) != uint64(width)*uint64(n) {
		r.bad = true
		return nil
	}
	out := make([]string, 0, n)
	for p := b[8:]; len(p) > 0; p = p[width:] {
		var x int64
		switch width {
		case 2:
			x = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			x = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			x = int64(binary.LittleEndian.Uint64(p))
		}
		out = append(out, strconv.FormatInt(x, 10))
	}
	return out
}

// parseListpack reads a listpack's entries as strings (integers in
// decimal).
func parseListpack(b []byte, r *dumpReader) []string {
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xff {
		r.bad = true
		return nil
	}
	var out []string
	p := b[6 : len(b)-1]
	for len(p) > 0 {
		c := p[0]
		var s string
		var size int // encoding and data
		need := func(n int) bool {
			if len(p) < n {
				r.bad = true
				return false
			}
			return true
		}
		switch {
		case c&0x80 == 0:
			s, size = strconv.Itoa(int(c)), 1
		case c&0xc0 == 0x80:
			l := int(c & 0x3f)
			if !need(1 + l) {
				return nil
			}
			s, size = string(p[1:1+l]), 1+l
		case c&0xe0 == 0xc0:
			if !need(2) {
				return nil
			}
			u := int64(c&0x1f)<<8 | int64(p[1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			s, size = strconv.FormatInt(u, 10), 2
		case c&0xf0 == 0xe0:
			if !need(2) {
				return nil
			}
			l := int(c&0xf)<<8 | int(p[1])
			if !need(2 + l) {
				return nil
			}
			s, size = string(p[2:2+l]), 2+l
		case c == 0xf1:
			if !need(3) {
				return nil
			}
			s, size = strconv.FormatInt(int64(int16(binary.LittleEndian.Uint16(p[1:]))), 10), 3
		case c == 0xf2:
			if !need(4) {
				return nil
			}
			u := int32(uint32(p[1])|uint32(p[2])<<8|uint32(p[3])<<16) << 8 >> 8
			s, size = strconv.FormatInt(int64(u), 10), 4
		case c == 0xf3:
			if !need(5) {
				return nil
			}
			s, size = strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(p[1:]))), 10), 5
		case c == 0xf4:
			if !need(9) {
				return nil
			}
			s, size = strconv.FormatInt(int64(binary.LittleEndian.Uint64(p[1:])), 10), 9
		case c == 0xf0:
			if !need(5) {
				return nil
			}
			l := int(binary.LittleEndian.Uint32(p[1:]))
			if l < 0 || !need(5+l) {
				return nil
			}
			s, size = string(p[5:5+l]), 5+l
		default:
			r.bad = true
			return nil
		}
		back := len(appendBacklen(nil, uint64(size)))
		if !need(size + back) {
			return nil
		}
		out = append(out, s)
		p = p[size+back:]
	}
	if n := int(binary.LittleEndian.Uint16(b[4:])); n != math.MaxUint16 && n != len(out) {
		r.bad = true
	}
	return out
}
