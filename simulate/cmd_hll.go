package simulate

import (
	"encoding/binary"
	"math"
)

// HyperLogLog, as Redis 7.0's hyperloglog.c keeps it in a string value:
// a 16-byte header ("HYLL", the encoding, three unused bytes, the cached
// cardinality in little endian with its top bit marking it stale), then
// 16384 registers of 6 bits, either dense (12288 bytes) or sparse
// (run-length opcodes ZERO 00xxxxxx, XZERO 01xxxxxx yyyyyyyy and VAL
// 1vvvvvxx). Every register update follows Redis's steps, so the bytes
// GET returns are the server's.

func init() {
	commands["pfadd"] = cmdPFAdd
	commands["pfcount"] = cmdPFCount
	commands["pfmerge"] = cmdPFMerge
}

const (
	hllP              = 14
	hllQ              = 64 - hllP
	hllRegisters      = 1 << hllP
	hllBits           = 6
	hllRegisterMax    = 1<<hllBits - 1
	hllHdrSize        = 16
	hllDenseSize      = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllEncDense       = 0
	hllEncSparse      = 1
	hllSparseMaxBytes = 3000 // hll-sparse-max-bytes's default
	hllHashSeed       = 0xadc83b19
	hllAlphaInf       = 0.721347520444481703680 // 0.5/ln(2)

	hllSparseValMax    = 32
	hllSparseValMaxLen = 4
	hllSparseZeroMax   = 64
	hllSparseXZeroMax  = 16384
)

// murmurHash64A is MurmurHash2's 64-bit variant as Redis runs it, reading
// 8-byte blocks in little-endian order.
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(key)) * m)
	n := len(key) - len(key)&7
	for i := 0; i < n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n:]
	if len(tail) > 0 {
		for i := len(tail) - 1; i >= 0; i-- {
			h ^= uint64(tail[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen is the register an element goes to and the length of the
// 000...1 pattern its hash starts with (1 to 51).
func hllPatLen(ele string) (int, uint8) {
	hash := murmurHash64A([]byte(ele), hllHashSeed)
	index := int(hash & (hllRegisters - 1))
	hash >>= hllP
	hash |= 1 << hllQ
	count := uint8(1)
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

func hllDenseGet(regs []byte, i int) uint8 {
	byteAt, fb := i*hllBits/8, uint(i*hllBits&7)
	b0 := uint(regs[byteAt])
	var b1 uint
	if byteAt+1 < len(regs) {
		b1 = uint(regs[byteAt+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegisterMax)
}

func hllDenseSetRegister(regs []byte, i int, v uint8) {
	byteAt, fb := i*hllBits/8, uint(i*hllBits&7)
	regs[byteAt] &^= byte(hllRegisterMax << fb)
	regs[byteAt] |= byte(uint(v) << fb)
	if byteAt+1 < len(regs) {
		regs[byteAt+1] &^= byte(hllRegisterMax >> (8 - fb))
		regs[byteAt+1] |= byte(uint(v) >> (8 - fb))
	}
}

// hllDenseSet raises register i to count, reporting whether it changed.
func hllDenseSet(regs []byte, i int, count uint8) bool {
	if count > hllDenseGet(regs, i) {
		hllDenseSetRegister(regs, i, count)
		return true
	}
	return false
}

// Sparse opcodes.
func hllIsZero(b byte) bool  { return b&0xc0 == 0 }
func hllIsXZero(b byte) bool { return b&0xc0 == 0x40 }
func hllIsVal(b byte) bool   { return b&0x80 != 0 }
func hllZeroLen(b byte) int  { return int(b&0x3f) + 1 }

// hllXZeroLen reads the XZERO opcode at p; a second byte past the end
// reads as 0, as Redis reads the string's terminating NUL there.
func hllXZeroLen(b []byte, p int) int {
	var lo int
	if p+1 < len(b) {
		lo = int(b[p+1])
	}
	return (int(b[p]&0x3f)<<8 | lo) + 1
}
func hllValValue(b byte) int      { return int(b>>2&0x1f) + 1 }
func hllValLen(b byte) int        { return int(b&0x3) + 1 }
func hllVal(v, n int) byte        { return byte((v-1)<<2|(n-1)) | 0x80 }
func hllZero(n int) byte          { return byte(n - 1) }
func hllXZero(n int) (byte, byte) { return byte((n-1)>>8) | 0x40, byte((n - 1) & 0xff) }

// appendZeros appends a ZERO or (beyond 64 registers) XZERO opcode.
func appendZeros(seq []byte, n int) []byte {
	if n > hllSparseZeroMax {
		a, b := hllXZero(n)
		return append(seq, a, b)
	}
	return append(seq, hllZero(n))
}

// newHLL is createHLLObject's value: sparse, every register zero, the
// cached cardinality 0 and valid.
func newHLL() []byte {
	b := make([]byte, hllHdrSize, hllHdrSize+2)
	copy(b, "HYLL")
	b[4] = hllEncSparse
	a, c := hllXZero(hllRegisters)
	return append(b, a, c)
}

// isHLL is isHLLObjectOrReply's test of a string's content.
func isHLL(s string) bool {
	if len(s) < hllHdrSize || s[:4] != "HYLL" || s[4] > hllEncSparse {
		return false
	}
	return s[4] != hllEncDense || len(s) == hllDenseSize
}

// hll is a HyperLogLog's bytes while a command works on them.
type hll struct{ b []byte }

func (h *hll) dense() bool { return h.b[4] == hllEncDense }

func (h *hll) invalidateCache() { h.b[15] |= 0x80 }

// sparseToDense converts a sparse HyperLogLog in place, keeping the
// header (cached cardinality included); false means it was corrupt.
func (h *hll) sparseToDense() bool {
	if h.dense() {
		return true
	}
	d := make([]byte, hllDenseSize)
	copy(d, h.b[:hllHdrSize])
	d[4] = hllEncDense
	regs := d[hllHdrSize:]
	idx := 0
	for p := hllHdrSize; p < len(h.b); {
		switch c := h.b[p]; {
		case hllIsZero(c):
			idx += hllZeroLen(c)
			p++
		case hllIsXZero(c):
			idx += hllXZeroLen(h.b, p)
			p += 2
		default:
			n, v := hllValLen(c), hllValValue(c)
			if n+idx > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				hllDenseSetRegister(regs, idx, uint8(v))
				idx++
			}
			p++
		}
	}
	if idx != hllRegisters {
		return false
	}
	h.b = d
	return true
}

// set raises register index to count as hllSparseSet or hllDenseSet do:
// 1 when it changed, 0 when not, -1 for a corrupt sparse encoding. A
// sparse HyperLogLog turns dense for a count above 32 or when growing
// would take it past hll-sparse-max-bytes.
func (h *hll) set(index int, count uint8) int {
	if h.dense() {
		return int(boolInt(hllDenseSet(h.b[hllHdrSize:], index, count)))
	}
	if count > hllSparseValMax {
		return h.promote(index, count)
	}
	b := h.b
	end := len(b)
	// Step 1: find the opcode covering the register.
	p, first, span, prev := hllHdrSize, 0, 0, -1
	for p < end {
		oplen := 1
		switch c := b[p]; {
		case hllIsZero(c):
			span = hllZeroLen(c)
		case hllIsVal(c):
			span = hllValLen(c)
		default:
			span = hllXZeroLen(b, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return -1
	}
	c := b[p]
	isZero, isXZero, isVal := hllIsZero(c), hllIsXZero(c), hllIsVal(c)
	var runlen, oldlen int
	switch {
	case isZero:
		runlen, oldlen = hllZeroLen(c), 1
	case isXZero:
		runlen, oldlen = hllXZeroLen(b, p), 2
	default:
		runlen, oldlen = hllValLen(c), 1
	}
	// Step 2: the trivial updates in place, else the split sequence.
	switch {
	case isVal && hllValValue(c) >= int(count):
		return 0
	case isVal && runlen == 1, isZero && runlen == 1:
		b[p] = hllVal(int(count), 1)
	default:
		last := first + span - 1
		var seq []byte
		if isZero || isXZero {
			if index != first {
				seq = appendZeros(seq, index-first)
			}
			seq = append(seq, hllVal(int(count), 1))
			if index != last {
				seq = appendZeros(seq, last-index)
			}
		} else {
			cur := hllValValue(c)
			if index != first {
				seq = append(seq, hllVal(cur, index-first))
			}
			seq = append(seq, hllVal(int(count), 1))
			if index != last {
				seq = append(seq, hllVal(cur, last-index))
			}
		}
		// Step 3: put the sequence in place of the opcode.
		delta := len(seq) - oldlen
		if delta > 0 && len(b)+delta > hllSparseMaxBytes {
			return h.promote(index, count)
		}
		nb := make([]byte, 0, len(b)+len(seq))
		nb = append(nb, b[:p]...)
		nb = append(nb, seq...)
		nb = append(nb, b[min(p+oldlen, len(b)):]...)
		b = nb[:len(b)+delta] // an XZERO cut short by the end loses the sequence's last byte, as in Redis
		end = len(b)
	}
	// Step 4: merge adjacent VAL opcodes of one value, scanning up to five
	// opcodes from the one before the change.
	p = hllHdrSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < end && scan > 0; {
		scan--
		if hllIsXZero(b[p]) {
			p += 2
			continue
		}
		if hllIsZero(b[p]) {
			p++
			continue
		}
		if p+1 < end && hllIsVal(b[p+1]) {
			v1, v2 := hllValValue(b[p]), hllValValue(b[p+1])
			if n := hllValLen(b[p]) + hllValLen(b[p+1]); v1 == v2 && n <= hllSparseValMaxLen {
				b[p+1] = hllVal(v1, n)
				b = append(b[:p], b[p+1:]...)
				end--
				continue
			}
		}
		p++
	}
	h.b = b
	h.invalidateCache()
	return 1
}

func (h *hll) promote(index int, count uint8) int {
	if !h.sparseToDense() {
		return -1
	}
	hllDenseSet(h.b[hllHdrSize:], index, count)
	return 1
}

// histogram counts the registers by value; ok is false for a corrupt
// sparse encoding.
func (h *hll) histogram() (histo [64]int, ok bool) {
	if h.dense() {
		regs := h.b[hllHdrSize:]
		for i := 0; i < hllRegisters; i++ {
			histo[hllDenseGet(regs, i)]++
		}
		return histo, true
	}
	idx := 0
	for p := hllHdrSize; p < len(h.b); {
		switch c := h.b[p]; {
		case hllIsZero(c):
			n := hllZeroLen(c)
			idx += n
			histo[0] += n
			p++
		case hllIsXZero(c):
			n := hllXZeroLen(h.b, p)
			idx += n
			histo[0] += n
			p += 2
		default:
			n := hllValLen(c)
			idx += n
			histo[hllValValue(c)] += n
			p++
		}
	}
	return histo, idx == hllRegisters
}

// mergeInto raises max[i] to each register's value; false for a corrupt
// sparse encoding.
func (h *hll) mergeInto(max []uint8) bool {
	if h.dense() {
		regs := h.b[hllHdrSize:]
		for i := range max {
			if v := hllDenseGet(regs, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i := 0
	for p := hllHdrSize; p < len(h.b); {
		switch c := h.b[p]; {
		case hllIsZero(c):
			i += hllZeroLen(c)
			p++
		case hllIsXZero(c):
			i += hllXZeroLen(h.b, p)
			p += 2
		default:
			n, v := hllValLen(c), uint8(hllValValue(c))
			if n+i > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				if v > max[i] {
					max[i] = v
				}
				i++
			}
			p++
		}
	}
	return i == hllRegisters
}

// hllEstimate is Ertl's estimator over a register histogram, as hllCount
// computes it.
func hllEstimate(histo [64]int) uint64 {
	m := float64(hllRegisters)
	z := m * hllTau((m-float64(histo[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(histo[0])/m)
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if prev == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if prev == z {
			return z / 3
		}
	}
}

// hllFor returns key's HyperLogLog for a PF* command, the error reply
// for another type or a string that is not one, or nil for no key.
func (ks *Keyspace) hllFor(cc *CallContext, key string) (*value, *Reply) {
	v, wrong := ks.getTyped(cc.Now, key, kindString)
	if wrong != nil {
		return nil, wrong
	}
	if v != nil && (v.strEnc == "int" || !isHLL(v.str)) {
		r := errorReply(errHLLWrongType)
		return nil, &r
	}
	return v, nil
}

// storeHLL writes h back into v, which Redis's dbUnshareStringValue left a
// raw string (keeping its TTL).
func storeHLL(v *value, h *hll) {
	v.str = string(h.b)
	v.strEnc = "raw"
}

// cmdPFAdd implements PFADD key [element ...]: 1 when a register changed
// or the key was created.
func cmdPFAdd(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, bad := ks.hllFor(cc, a[1])
	if bad != nil {
		return *bad
	}
	updated := false
	if v == nil {
		v = &value{kind: kindString, lru: lruClock(cc.Now), str: string(newHLL())}
		ks.keys[a[1]] = v
		updated = true
	}
	h := &hll{b: []byte(v.str)}
	for _, e := range a[2:] {
		i, count := hllPatLen(e)
		switch h.set(i, count) {
		case 1:
			updated = true
		case -1:
			storeHLL(v, h)
			return errorReply(errHLLCorrupt)
		}
	}
	if updated {
		h.invalidateCache()
	}
	storeHLL(v, h)
	return intReply(boolInt(updated))
}

// cmdPFCount implements PFCOUNT key [key ...]: one key answers (and
// caches) its own estimate; several the estimate of their union.
func cmdPFCount(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) > 2 {
		max := make([]uint8, hllRegisters)
		for _, k := range a[1:] {
			v, bad := ks.hllFor(cc, k)
			if bad != nil {
				return *bad
			}
			if v != nil && !(&hll{b: []byte(v.str)}).mergeInto(max) {
				return errorReply(errHLLCorrupt)
			}
		}
		var histo [64]int
		for _, r := range max {
			histo[r]++
		}
		return intReply(int64(hllEstimate(histo)))
	}
	v, bad := ks.hllFor(cc, a[1])
	if bad != nil {
		return *bad
	}
	if v == nil {
		return intReply(0)
	}
	v.strEnc = "raw"
	h := &hll{b: []byte(v.str)}
	if h.b[15]&0x80 == 0 {
		return intReply(int64(binary.LittleEndian.Uint64(h.b[8:16])))
	}
	histo, ok := h.histogram()
	if !ok {
		return errorReply(errHLLCorrupt)
	}
	card := hllEstimate(histo)
	binary.LittleEndian.PutUint64(h.b[8:16], card)
	storeHLL(v, h)
	return intReply(int64(card))
}

// cmdPFMerge implements PFMERGE destkey [sourcekey ...]: the destination
// takes each register's maximum over itself and the sources; it turns
// dense when any of them is.
func cmdPFMerge(ks *Keyspace, cc *CallContext, a []string) Reply {
	max := make([]uint8, hllRegisters)
	useDense := false
	for _, k := range a[1:] {
		v, bad := ks.hllFor(cc, k)
		if bad != nil {
			return *bad
		}
		if v == nil {
			continue
		}
		h := &hll{b: []byte(v.str)}
		useDense = useDense || h.dense()
		if !h.mergeInto(max) {
			return errorReply(errHLLCorrupt)
		}
	}
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		v = &value{kind: kindString, lru: lruClock(cc.Now), str: string(newHLL())}
		ks.keys[a[1]] = v
	}
	h := &hll{b: []byte(v.str)}
	if useDense && !h.sparseToDense() {
		return errorReply(errHLLCorrupt)
	}
	for i, r := range max {
		if r != 0 {
			h.set(i, r)
		}
	}
	h.invalidateCache()
	storeHLL(v, h)
	return okReply()
}
