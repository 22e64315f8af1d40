package simulate

import (
	"strings"
)

// The bitmap commands (Redis's bitops.c). A bitmap is a string read
// most-significant bit first: bit 0 is the top bit of byte 0.

func init() {
	commands["setbit"] = cmdSetBit
	commands["getbit"] = cmdGetBit
	commands["bitcount"] = cmdBitCount
	commands["bitpos"] = cmdBitPos
	commands["bitop"] = cmdBitOp
	commands["bitfield"] = cmdBitField(false)
	commands["bitfield_ro"] = cmdBitField(true)
}

// bitOffset parses a bit offset as getBitOffsetFromArgument does: an
// integer (with hash, "#n" counts in units of bits) that is not negative
// and whose byte lies within proto-max-bulk-len.
func bitOffset(arg string, hash bool, bits int64) (uint64, bool) {
	useHash := hash && bits > 0 && strings.HasPrefix(arg, "#")
	if useHash {
		arg = arg[1:]
	}
	n, ok := parseInt(arg)
	if !ok {
		return 0, false
	}
	if useHash {
		n *= bits // wraps as C's signed multiplication does in practice
	}
	if n < 0 || n>>3 >= maxStringLength {
		return 0, false
	}
	return uint64(n), true
}

// bitString returns key's string value for a command that writes bits up
// to maxBit, creating it or padding it with zero bytes as
// lookupStringForBitCommand does; the value becomes a raw string. grew
// reports whether it was created or lengthened.
func (ks *Keyspace) bitString(cc *CallContext, key string, maxBit uint64) (v *value, b []byte, grew bool, wrong *Reply) {
	v, wrong = ks.getTyped(cc.Now, key, kindString)
	if wrong != nil {
		return nil, nil, false, wrong
	}
	need := int(maxBit>>3) + 1
	if v == nil {
		v = &value{kind: kindString, lru: lruClock(cc.Now)}
		ks.keys[key] = v
		grew = true
	}
	b = []byte(v.str)
	if len(b) < need {
		b = append(b, make([]byte, need-len(b))...)
		grew = true
	}
	v.strEnc = "raw"
	return v, b, grew, nil
}

func cmdSetBit(ks *Keyspace, cc *CallContext, a []string) Reply {
	off, ok := bitOffset(a[2], false, 0)
	if !ok {
		return errorReply(errBitOffset)
	}
	on, ok := parseInt(a[3])
	if !ok || on&^1 != 0 {
		return errorReply(errBitValue)
	}
	v, b, _, wrong := ks.bitString(cc, a[1], off)
	if wrong != nil {
		return *wrong
	}
	byteIdx, shift := off>>3, 7-(off&7)
	old := (b[byteIdx] >> shift) & 1
	b[byteIdx] = b[byteIdx]&^(1<<shift) | byte(on)<<shift
	v.str = string(b)
	return intReply(int64(old))
}

func cmdGetBit(ks *Keyspace, cc *CallContext, a []string) Reply {
	off, ok := bitOffset(a[2], false, 0)
	if !ok {
		return errorReply(errBitOffset)
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindString, intReply(0))
	if !ok {
		return done
	}
	byteIdx := off >> 3
	if byteIdx >= uint64(len(v.str)) {
		return intReply(0)
	}
	return intReply(int64(v.str[byteIdx]>>(7-(off&7))) & 1)
}

// bitRange resolves BITCOUNT's and BITPOS's start and end (bytes, or bits
// with isBit) against a string of n bytes as Redis does: negative indexes
// count from the end, both are clamped, and the result is a range of bit
// positions [lo, hi]; ok is false when it is empty.
func bitRange(start, end int64, n int, isBit bool) (lo, hi int64, ok bool) {
	total := int64(n)
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, false
	}
	if !isBit {
		return start << 3, end<<3 + 7, true
	}
	return start, end, true
}

// bitAt is bit i of s, most significant first.
func bitAt(s string, i int64) byte { return (s[i>>3] >> (7 - (i & 7))) & 1 }

// bitUnit parses BITCOUNT's and BITPOS's BIT|BYTE word.
func bitUnit(word string) (isBit, ok bool) {
	switch strings.ToLower(word) {
	case "bit":
		return true, true
	case "byte":
		return false, true
	}
	return false, false
}

// cmdBitCount implements BITCOUNT key [start end [BYTE|BIT]]. Redis 7.0
// looks the key up before it parses the range, so a missing key answers 0
// whatever the range says.
func cmdBitCount(ks *Keyspace, cc *CallContext, a []string) Reply {
	if ks.profile == Valkey80 && len(a) == 3 {
		a = append(a[:3:3], "-1") // Valkey 8: a start alone counts to the end
	}
	if ks.profile.since74Valkey8() {
		// 7.4 and Valkey 8 read the arguments before they look the key up.
		switch len(a) {
		case 2:
		case 4, 5:
			if _, _, bad := parseIndexes(a[2], a[3]); bad != nil {
				return *bad
			}
			if len(a) == 5 {
				if _, ok := bitUnit(a[4]); !ok {
					return errorReply(errSyntax)
				}
			}
		default:
			return errorReply(errSyntax)
		}
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindString, intReply(0))
	if !ok {
		return done
	}
	lo, hi := int64(0), int64(len(v.str))*8-1
	switch len(a) {
	case 2:
	case 4, 5:
		start, end, bad := parseIndexes(a[2], a[3])
		if bad != nil {
			return *bad
		}
		if start < 0 && end < 0 && start > end {
			return intReply(0)
		}
		isBit := false
		if len(a) == 5 {
			if isBit, ok = bitUnit(a[4]); !ok {
				return errorReply(errSyntax)
			}
		}
		if lo, hi, ok = bitRange(start, end, len(v.str), isBit); !ok {
			return intReply(0)
		}
	default:
		return errorReply(errSyntax)
	}
	var n int64
	for i := lo; i <= hi; {
		if i&7 == 0 && i+7 <= hi {
			n += int64(popcount8(v.str[i>>3]))
			i += 8
			continue
		}
		n += int64(bitAt(v.str, i))
		i++
	}
	return intReply(n)
}

func popcount8(b byte) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}

// cmdBitPos implements BITPOS key bit [start [end [BYTE|BIT]]]. Looking
// for a 0 without an explicit end treats the string as followed by zero
// bits, so it may answer the first position past the string.
func cmdBitPos(ks *Keyspace, cc *CallContext, a []string) Reply {
	bit, ok := parseInt(a[2])
	if !ok {
		return errorReply(errNotInteger)
	}
	if bit != 0 && bit != 1 {
		return errorReply(errBitposBit)
	}
	if ks.profile.since74Valkey8() {
		// 7.4 and Valkey 8 read the range before they look the key up.
		for i := 3; i < len(a) && i < 5; i++ {
			if _, ok := parseInt(a[i]); !ok {
				return errorReply(errNotInteger)
			}
		}
		if len(a) == 6 {
			if _, ok := bitUnit(a[5]); !ok {
				return errorReply(errSyntax)
			}
		}
		if len(a) > 6 {
			return errorReply(errSyntax)
		}
	}
	v, wrong := ks.getTyped(cc.Now, a[1], kindString)
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(-bit) // no key: all zero bits, so 0 for a 0 and -1 for a 1
	}
	n := len(v.str)
	lo, hi, endGiven := int64(0), int64(n)*8-1, false
	switch len(a) {
	case 3:
		if n == 0 {
			return intReply(-1)
		}
	case 4, 5, 6:
		start, ok := parseInt(a[3])
		if !ok {
			return errorReply(errNotInteger)
		}
		isBit := false
		if len(a) == 6 {
			if isBit, ok = bitUnit(a[5]); !ok {
				return errorReply(errSyntax)
			}
		}
		end := int64(n) - 1
		if isBit {
			end = int64(n)<<3 - 1
		}
		if len(a) >= 5 {
			if end, ok = parseInt(a[4]); !ok {
				return errorReply(errNotInteger)
			}
			endGiven = true
		}
		if lo, hi, ok = bitRange(start, end, n, isBit); !ok {
			return intReply(-1)
		}
	default:
		return errorReply(errSyntax)
	}
	want := byte(bit)
	for i := lo; i <= hi; i++ {
		if bitAt(v.str, i) == want {
			return intReply(i)
		}
	}
	if bit == 1 || endGiven {
		return intReply(-1)
	}
	return intReply((hi>>3 + 1) << 3) // the first bit after the range's last byte
}

// cmdBitOp implements BITOP AND|OR|XOR|NOT destkey key [key ...]: missing
// keys are empty strings, shorter ones are padded with zero bytes, and an
// empty result deletes destkey.
func cmdBitOp(ks *Keyspace, cc *CallContext, a []string) Reply {
	op := strings.ToLower(a[1])
	switch op {
	case "and", "or", "xor", "not":
	default:
		return errorReply(errSyntax)
	}
	if op == "not" && len(a) != 4 {
		return errorReply(errBitopNot)
	}
	srcs := make([]string, 0, len(a)-3)
	maxLen := 0
	for _, k := range a[3:] {
		v, wrong := ks.getTyped(cc.Now, k, kindString)
		if wrong != nil {
			return *wrong
		}
		s := ""
		if v != nil {
			s = v.str
		}
		srcs = append(srcs, s)
		maxLen = max(maxLen, len(s))
	}
	if maxLen == 0 {
		delete(ks.keys, a[2])
		return intReply(0)
	}
	at := func(s string, j int) byte {
		if j < len(s) {
			return s[j]
		}
		return 0
	}
	res := make([]byte, maxLen)
	for j := range res {
		out := at(srcs[0], j)
		if op == "not" {
			out = ^out
		}
		for _, s := range srcs[1:] {
			switch op {
			case "and":
				out &= at(s, j)
			case "or":
				out |= at(s, j)
			case "xor":
				out ^= at(s, j)
			}
		}
		res[j] = out
	}
	ks.keys[a[2]] = &value{kind: kindString, lru: lruClock(cc.Now), str: string(res), strEnc: "raw"}
	return intReply(int64(maxLen))
}

// bitfieldOp is one GET, SET or INCRBY of a BITFIELD call.
type bitfieldOp struct {
	offset   uint64
	arg      int64
	op       byte // 'g', 's' or 'i'
	overflow byte // 'w' (WRAP), 's' (SAT) or 'f' (FAIL)
	bits     int64
	signed   bool
}

// cmdBitField implements BITFIELD and (ro) BITFIELD_RO key [GET type
// offset] [SET type offset value] [INCRBY type offset increment]
// [OVERFLOW WRAP|SAT|FAIL] ...: every operation is parsed before any runs,
// and a write makes room up to the farthest bit it reaches first.
func cmdBitField(ro bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		var ops []bitfieldOp
		overflow := byte('w')
		readOnly := true
		var highest uint64
		for j := 2; j < len(a); j++ {
			rem := len(a) - j - 1
			var op byte
			switch sub := strings.ToLower(a[j]); {
			case sub == "get" && rem >= 2:
				op = 'g'
			case sub == "set" && rem >= 3:
				op = 's'
			case sub == "incrby" && rem >= 3:
				op = 'i'
			case sub == "overflow" && rem >= 1:
				j++
				switch strings.ToLower(a[j]) {
				case "wrap":
					overflow = 'w'
				case "sat":
					overflow = 's'
				case "fail":
					overflow = 'f'
				default:
					return errorReply(errBitfieldOver)
				}
				continue
			default:
				return errorReply(errSyntax)
			}
			signed, bits, ok := bitfieldType(a[j+1])
			if !ok {
				return errorReply(errBitfieldType)
			}
			off, ok := bitOffset(a[j+2], true, bits)
			if !ok {
				return errorReply(errBitOffset)
			}
			var arg int64
			if op != 'g' {
				readOnly = false
				highest = max(highest, off+uint64(bits)-1)
				if arg, ok = parseInt(a[j+3]); !ok {
					return errorReply(errNotInteger)
				}
				j++
			}
			ops = append(ops, bitfieldOp{offset: off, arg: arg, op: op, overflow: overflow, bits: bits, signed: signed})
			j += 2
		}
		var buf []byte
		var v *value
		if readOnly {
			var wrong *Reply
			if v, wrong = ks.getTyped(cc.Now, a[1], kindString); wrong != nil {
				return *wrong
			}
			if v != nil {
				buf = []byte(v.str)
			}
		} else {
			if ro {
				return errorReply(errBitfieldRO)
			}
			var wrong *Reply
			if v, buf, _, wrong = ks.bitString(cc, a[1], highest); wrong != nil {
				return *wrong
			}
		}
		out := make([]Reply, 0, len(ops))
		for _, o := range ops {
			if o.op == 'g' {
				var win [9]byte
				base := o.offset >> 3
				for i := uint64(0); i < 9 && base+i < uint64(len(buf)); i++ {
					win[i] = buf[base+i]
				}
				u := getBits(win[:], o.offset-base*8, o.bits)
				if o.signed {
					out = append(out, intReply(signExtend(u, o.bits)))
				} else {
					out = append(out, intReply(int64(u)))
				}
				continue
			}
			old := getBits(buf, o.offset, o.bits)
			var newVal, ret uint64
			var over bool
			if o.signed {
				oldS := signExtend(old, o.bits)
				var n, wrapped int64
				if o.op == 'i' {
					over, wrapped = signedOverflow(oldS, o.arg, o.bits, o.overflow)
					n = oldS + o.arg
					if over {
						n = wrapped
					}
					ret = uint64(n)
				} else {
					n = o.arg
					if over, wrapped = signedOverflow(n, 0, o.bits, o.overflow); over {
						n = wrapped
					}
					ret = uint64(oldS)
				}
				newVal = uint64(n)
			} else {
				var wrapped uint64
				if o.op == 'i' {
					newVal = old + uint64(o.arg)
					over, wrapped = unsignedOverflow(old, o.arg, o.bits, o.overflow)
					if over {
						newVal = wrapped
					}
					ret = newVal
				} else {
					newVal = uint64(o.arg)
					if over, wrapped = unsignedOverflow(newVal, 0, o.bits, o.overflow); over {
						newVal = wrapped
					}
					ret = old
				}
			}
			if over && o.overflow == 'f' {
				out = append(out, nilReply())
				continue
			}
			out = append(out, intReply(int64(ret)))
			setBits(buf, o.offset, o.bits, newVal)
		}
		if !readOnly {
			v.str = string(buf)
		}
		return arrayReply(out)
	}
}

// bitfieldType parses a BITFIELD type: i1..i64 or u1..u63.
func bitfieldType(t string) (signed bool, bits int64, ok bool) {
	if t == "" || (t[0] != 'i' && t[0] != 'u') {
		return false, 0, false
	}
	signed = t[0] == 'i'
	n, ok := parseInt(t[1:])
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, n, true
}

func getBits(p []byte, off uint64, bits int64) uint64 {
	var v uint64
	for j := int64(0); j < bits; j++ {
		v = v<<1 | uint64(p[off>>3]>>(7-(off&7)))&1
		off++
	}
	return v
}

func setBits(p []byte, off uint64, bits int64, v uint64) {
	for j := int64(0); j < bits; j++ {
		bit := byte(v>>(bits-1-j)) & 1
		shift := 7 - (off & 7)
		p[off>>3] = p[off>>3]&^(1<<shift) | bit<<shift
		off++
	}
}

func signExtend(u uint64, bits int64) int64 {
	v := int64(u)
	if bits < 64 && v&(1<<(bits-1)) != 0 {
		v |= -1 << bits
	}
	return v
}

// unsignedOverflow is checkUnsignedBitfieldOverflow: whether value+incr
// leaves bits unsigned bits, and the value WRAP or SAT stores instead.
// The arithmetic wraps as Redis's C does.
func unsignedOverflow(value uint64, incr int64, bits int64, how byte) (bool, uint64) {
	maxV := uint64(1)<<bits - 1
	maxIncr := int64(maxV - value)
	minIncr := -int64(value)
	wrap := func() uint64 { return (value + uint64(incr)) &^ (^uint64(0) << bits) }
	switch {
	case value > maxV || (incr > 0 && incr > maxIncr):
		if how == 'w' {
			return true, wrap()
		}
		return true, maxV
	case incr < 0 && incr < minIncr:
		if how == 'w' {
			return true, wrap()
		}
		return true, 0
	}
	return false, 0
}

// signedOverflow is checkSignedBitfieldOverflow for bits signed bits.
func signedOverflow(value, incr int64, bits int64, how byte) (bool, int64) {
	maxV := int64(1)<<(bits-1) - 1
	if bits == 64 {
		maxV = 1<<63 - 1
	}
	minV := -maxV - 1
	maxIncr := int64(uint64(maxV) - uint64(value))
	minIncr := minV - value
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			mask := ^uint64(0) << bits
			if c&(uint64(1)<<(bits-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		return int64(c)
	}
	switch {
	case value > maxV || (bits != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if how == 'w' {
			return true, wrap()
		}
		return true, maxV
	case value < minV || (bits != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if how == 'w' {
			return true, wrap()
		}
		return true, minV
	}
	return false, 0
}
