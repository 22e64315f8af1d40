package lua

import "math"

// The layout of Lua 5.1's tables (ltable.c), rewritten in Go from its
// documented behaviour: an array part for keys 1..n and a hash part of 2^k
// nodes with chained scatter (Brent's variation). The order next visits keys
// in, the border # picks and when a table rehashes all follow from where a
// key lands, so every rule below copies a fact of Lua 5.1 as Redis 7.0
// builds it:
//
//   - a key's main position: strings by Lua's string hash (seeded with the
//     length; Redis 7.0 hashes every byte), booleans by their value, numbers
//     by the sum of the two 32-bit halves of the double modulo (size-1)|1,
//     0 and -0 at node 0;
//   - a new key whose main position is taken goes to the free node below the
//     free pointer, which only moves down; the key that was there is moved
//     if it is not in its own main position;
//   - a key set to nil keeps its node until the next rehash, and setting a
//     key (even to nil) that has no node creates one;
//   - when no free node is left the table rehashes: array part sized to the
//     largest power of two n that has more than n/2 integer keys in 1..n,
//     hash part to the rest, re-inserting the hash nodes from the last to the
//     first.
//
// Keys that are tables, functions, userdata or threads hash by address in
// Lua, an order no one can reproduce. Here each such key gets a number the
// first time it is set in a table, counting from 1 per table, and hashes by
// it as Lua hashes a pointer (modulo (size-1)|1): runs stay deterministic
// and lookups stay O(1).

// maxBits bounds the array part to 2^maxBits slots, as Lua 5.1's MAXBITS.
const maxBits = 26

const maxASize = 1 << maxBits

// tnode is one node of the hash part. A nil key marks a node never used
// since the last rehash; a non-nil key with an LNil value is a removed key
// that still holds its node.
type tnode struct {
	key  LValue
	val  LValue
	next int32
	dead bool // a removed collectable key a collection has swept (gc51.go)
}

// validKey reports whether key may index a table (not nil, not NaN).
func validKey(key LValue) bool {
	switch k := key.(type) {
	case nil:
		return false
	case *LNilType:
		return false
	case LNumber:
		return !math.IsNaN(float64(k))
	}
	return true
}

// luaStringHash is Lua 5.1's luaS_hash as in Redis 7.0's deps/lua: seeded
// with the length, every byte folded in from the last to the first.
func luaStringHash(s string) uint32 {
	h := uint32(len(s))
	for i := len(s); i > 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[i-1])
	}
	return h
}

// numberHash is the value Lua 5.1's hashnum reduces modulo (size-1)|1.
func numberHash(n float64) uint32 {
	b := math.Float64bits(n)
	return uint32(b) + uint32(b>>32)
}

// int32Key returns n as an int when it is an integer that C's (int) cast
// keeps unchanged, as Lua 5.1's lua_number2int test does.
func int32Key(n float64) (int, bool) {
	if n >= -2147483648 && n <= 2147483647 {
		k := int(n)
		if float64(k) == n {
			return k, true
		}
	}
	return 0, false
}

// arrayIndex is Lua 5.1's arrayindex: the integer a key stands for, or -1.
func arrayIndex(key LValue) int {
	if n, ok := key.(LNumber); ok {
		if k, ok := int32Key(float64(n)); ok {
			return k
		}
	}
	return -1
}

// ceilLog2 is ceil(log2(x)) for x >= 1.
func ceilLog2(x int) int {
	l := 0
	for v := x - 1; v > 0; v >>= 1 {
		l++
	}
	return l
}

// mainPosition is the node a key hashes to; the hash part is not empty.
func (tb *LTable) mainPosition(key LValue) int {
	size := len(tb.node)
	switch k := key.(type) {
	case LString:
		return int(luaStringHash(string(k)) & uint32(size-1))
	case LNumber:
		return tb.numberPosition(float64(k))
	case LBool:
		if k {
			return 1 & (size - 1)
		}
		return 0
	}
	return int(tb.pointerIDs[key] % uint32((size-1)|1))
}

// pointerID numbers a table, function, userdata or thread key the first
// time it is set in this table.
func (tb *LTable) pointerID(key LValue) {
	if _, ok := tb.pointerIDs[key]; ok {
		return
	}
	if tb.pointerIDs == nil {
		tb.pointerIDs = map[LValue]uint32{}
	}
	tb.pointerIDs[key] = uint32(len(tb.pointerIDs) + 1)
}

// isPointerKey reports whether Lua would hash key by its address.
func isPointerKey(key LValue) bool {
	switch key.(type) {
	case LString, LNumber, LBool, nil, *LNilType:
		return false
	}
	return true
}

func (tb *LTable) numberPosition(n float64) int {
	if n == 0 {
		return 0
	}
	return int(numberHash(n) % uint32((len(tb.node)-1)|1))
}

// getInt is luaH_getnum: the slot of integer key k, or nil when absent.
func (tb *LTable) getInt(k int) *LValue {
	if uint(k-1) < uint(len(tb.array)) {
		return &tb.array[k-1]
	}
	if len(tb.node) == 0 {
		return nil
	}
	nk := LNumber(k)
	for i := int32(tb.numberPosition(float64(k))); i >= 0; {
		n := &tb.node[i]
		if kn, ok := n.key.(LNumber); ok && kn == nk {
			return &n.val
		}
		i = n.next
	}
	return nil
}

// getStr is luaH_getstr.
func (tb *LTable) getStr(s string) *LValue {
	if len(tb.node) == 0 {
		return nil
	}
	for i := int32(luaStringHash(s) & uint32(len(tb.node)-1)); i >= 0; {
		n := &tb.node[i]
		if ks, ok := n.key.(LString); ok && string(ks) == s && !n.dead {
			return &n.val
		}
		i = n.next
	}
	return nil
}

// get is luaH_get: the slot holding key (its value may be nil when the key
// was removed but still holds its node), or nil when the key has no slot.
func (tb *LTable) get(key LValue) *LValue {
	switch k := key.(type) {
	case LString:
		return tb.getStr(string(k))
	case LNumber:
		if i, ok := int32Key(float64(k)); ok {
			return tb.getInt(i)
		}
	case nil, *LNilType:
		return nil
	}
	if len(tb.node) == 0 {
		return nil
	}
	if _, ok := tb.pointerIDs[key]; !ok && isPointerKey(key) {
		return nil // never set here
	}
	for i := int32(tb.mainPosition(key)); i >= 0; {
		n := &tb.node[i]
		if n.key == key && !n.dead {
			return &n.val
		}
		i = n.next
	}
	return nil
}

// set is luaH_set: the slot for key, created when missing.
func (tb *LTable) set(key LValue) *LValue {
	if p := tb.get(key); p != nil {
		return p
	}
	return tb.newKey(key)
}

// setInt is luaH_setnum.
func (tb *LTable) setInt(k int) *LValue {
	if p := tb.getInt(k); p != nil {
		return p
	}
	return tb.newKey(LNumber(k))
}

// newKey inserts a key that has no slot yet (Lua 5.1's newkey).
func (tb *LTable) newKey(key LValue) *LValue {
	if isPointerKey(key) {
		tb.pointerID(key)
	}
	if len(tb.node) == 0 {
		tb.rehash(key)
		return tb.set(key)
	}
	mp := tb.mainPosition(key)
	if tb.node[mp].val != LNil {
		free := tb.freePosition()
		if free < 0 {
			tb.rehash(key)
			return tb.set(key)
		}
		other := tb.mainPosition(tb.node[mp].key)
		if other != mp {
			// The colliding key is not in its main position: move it to the
			// free node and give mp to the new key.
			for int(tb.node[other].next) != mp {
				other = int(tb.node[other].next)
			}
			tb.node[other].next = int32(free)
			tb.node[free] = tb.node[mp]
			tb.node[mp].next = -1
			tb.node[mp].val = LNil
		} else {
			// The colliding key is in its main position: the new key goes to
			// the free node, chained right after it.
			tb.node[free].next = tb.node[mp].next
			tb.node[mp].next = int32(free)
			mp = free
		}
	}
	tb.node[mp].key = key
	tb.node[mp].dead = false
	return &tb.node[mp].val
}

// freePosition moves the free pointer down to the next never-used node and
// returns it, or -1 when there is none.
func (tb *LTable) freePosition() int {
	for tb.lastFree > 0 {
		tb.lastFree--
		if tb.node[tb.lastFree].key == nil {
			return tb.lastFree
		}
	}
	return -1
}

// setArrayVector grows the array part to size slots.
func (tb *LTable) setArrayVector(size int) {
	if size <= len(tb.array) {
		return
	}
	if size > MaxTableSlots {
		panic(newApiErrorS(ApiErrorMemory, MemErrMsg))
	}
	if size <= cap(tb.array) {
		old := len(tb.array)
		tb.array = tb.array[:size]
		for i := old; i < size; i++ {
			tb.array[i] = LNil
		}
		return
	}
	a := make([]LValue, size)
	copy(a, tb.array)
	for i := len(tb.array); i < size; i++ {
		a[i] = LNil
	}
	tb.array = a
}

// setNodeVector replaces the hash part by one of size rounded up to a power
// of two (none for 0), all nodes free.
func (tb *LTable) setNodeVector(size int) {
	tb.lastFree = 0
	if size == 0 {
		tb.node = nil
		return
	}
	lsize := ceilLog2(size)
	if lsize > maxBits {
		panic(newApiErrorS(ApiErrorRun, "table overflow"))
	}
	if 1<<lsize > MaxTableSlots {
		panic(newApiErrorS(ApiErrorMemory, MemErrMsg))
	}
	size = 1 << lsize
	tb.node = make([]tnode, size)
	for i := range tb.node {
		tb.node[i] = tnode{val: LNil, next: -1}
	}
	tb.lastFree = size
}

// rehash is Lua 5.1's rehash: recount the keys (and the one being added)
// and resize both parts.
func (tb *LTable) rehash(extra LValue) {
	var nums [maxBits + 1]int
	nasize := tb.numUseArray(&nums)
	total := nasize
	total += tb.numUseHash(&nums, &nasize)
	nasize += countInt(extra, &nums)
	total++
	na := computeSizes(&nums, &nasize)
	tb.resize(nasize, total-na)
}

// countInt counts key in nums when it can live in the array part.
func countInt(key LValue, nums *[maxBits + 1]int) int {
	k := arrayIndex(key)
	if 0 < k && k <= maxASize {
		nums[ceilLog2(k)]++
		return 1
	}
	return 0
}

// numUseArray counts the non-nil slots of the array part per slice
// (2^(lg-1), 2^lg].
func (tb *LTable) numUseArray(nums *[maxBits + 1]int) int {
	ause := 0
	i := 1
	for lg, ttlg := 0, 1; lg <= maxBits; lg, ttlg = lg+1, ttlg*2 {
		lc := 0
		lim := ttlg
		if lim > len(tb.array) {
			lim = len(tb.array)
			if i > lim {
				break
			}
		}
		for ; i <= lim; i++ {
			if tb.array[i-1] != LNil {
				lc++
			}
		}
		nums[lg] += lc
		ause += lc
	}
	return ause
}

// numUseHash counts the nodes with non-nil values, adding the integer keys
// among them to nums and *nasize.
func (tb *LTable) numUseHash(nums *[maxBits + 1]int, nasize *int) int {
	total, ause := 0, 0
	for i := len(tb.node) - 1; i >= 0; i-- {
		n := &tb.node[i]
		if n.val != LNil {
			ause += countInt(n.key, nums)
			total++
		}
	}
	*nasize += ause
	return total
}

// computeSizes picks the array size: the largest power of two n such that
// more than n/2 of the slots 1..n would be in use.
func computeSizes(nums *[maxBits + 1]int, narray *int) int {
	a, na, n := 0, 0, 0
	for i, twotoi := 0, 1; twotoi/2 < *narray; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n = twotoi
				na = a
			}
		}
		if a == *narray {
			break
		}
	}
	*narray = n
	return na
}

// resize is Lua 5.1's resize: new array and hash sizes, moving the array
// slots that no longer fit into the hash part and re-inserting the old hash
// nodes from the last to the first.
func (tb *LTable) resize(nasize, nhsize int) {
	oldArray := tb.array
	oldNode := tb.node
	if nasize > len(oldArray) {
		tb.setArrayVector(nasize)
	}
	tb.setNodeVector(nhsize)
	if nasize < len(oldArray) {
		tb.array = make([]LValue, nasize)
		copy(tb.array, oldArray)
		for i := nasize; i < len(oldArray); i++ {
			if oldArray[i] != LNil {
				*tb.setInt(i + 1) = oldArray[i]
			}
		}
	}
	for i := len(oldNode) - 1; i >= 0; i-- {
		if old := &oldNode[i]; old.val != LNil {
			*tb.set(old.key) = old.val
		}
	}
}

// resizeArray is luaH_resizearray: a new array size, the hash part keeping
// its size.
func (tb *LTable) resizeArray(nasize int) {
	tb.resize(nasize, len(tb.node))
}

// getn is Lua 5.1's luaH_getn: a border of the table, found by binary
// search in the array part when its last slot is nil, else by doubling
// into the hash part.
func (tb *LTable) getn() int {
	j := len(tb.array)
	if j > 0 && tb.array[j-1] == LNil {
		i := 0
		for j-i > 1 {
			m := int(uint(i+j) / 2)
			if tb.array[m-1] == LNil {
				j = m
			} else {
				i = m
			}
		}
		return i
	}
	if len(tb.node) == 0 {
		return j
	}
	return tb.unboundSearch(uint(j))
}

func (tb *LTable) present(k uint) bool {
	p := tb.getInt(int(k))
	return p != nil && *p != LNil
}

func (tb *LTable) unboundSearch(j uint) int {
	i := j
	j++
	for tb.present(j) {
		i = j
		j *= 2
		if j > math.MaxInt32-2 { // Lua 5.1's MAX_INT
			// A table built to defeat the search: count linearly.
			i = 1
			for tb.present(i) {
				i++
			}
			return int(i - 1)
		}
	}
	for j-i > 1 {
		m := (i + j) / 2
		if !tb.present(m) {
			j = m
		} else {
			i = m
		}
	}
	return int(i)
}

// findIndex is Lua 5.1's findindex: where next resumes after key (-1 for
// nil), false when key is not in the table.
func (tb *LTable) findIndex(key LValue) (int, bool) {
	if key == LNil || key == nil {
		return -1, true
	}
	if k := arrayIndex(key); 0 < k && k <= len(tb.array) {
		return k - 1, true
	}
	if len(tb.node) == 0 {
		return 0, false
	}
	if _, ok := tb.pointerIDs[key]; !ok && isPointerKey(key) {
		return 0, false
	}
	for i := int32(tb.mainPosition(key)); i >= 0; {
		n := &tb.node[i]
		if n.key == key {
			return int(i) + len(tb.array), true
		}
		i = n.next
	}
	return 0, false
}

// setList is OP_SETLIST: the array part grows to hold the last index at
// once, then the values are stored from the last to the first.
func (tb *LTable) setList(first int, values []LValue) {
	last := first + len(values) - 1
	if last > len(tb.array) {
		tb.resizeArray(last)
	}
	for i := len(values) - 1; i >= 0; i-- {
		*tb.setInt(first + i) = values[i]
	}
}
