package simulate

import (
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// Order tells whether Redis defines the order of a reply's elements.
type Order uint8

const (
	// OrderDefined: every Redis 7.0 server lists the elements in this
	// order (lists, sorted sets, small hashes in insertion order, integer
	// sets in numeric order, ...). Compare the reply exactly.
	OrderDefined Order = iota
	// OrderUndefined: the elements come from a hash table whose hash
	// function is seeded at random per server process (the keyspace for
	// KEYS and SCAN, hashes and sets in the hashtable encoding, sorted
	// sets in the skiplist encoding for ZSCAN). The simulator answers in a
	// documented deterministic order (see WithUndefinedOrder), which no
	// real server reproduces: compare such a reply as a set.
	OrderUndefined
)

// String names the order.
func (o Order) String() string {
	if o == OrderUndefined {
		return "undefined"
	}
	return "defined"
}

// ReplyOrder reports whether Redis defines the order of the reply the
// command args (as for Do, e.g. "HGETALL", "h") would get from the
// current keyspace. It runs nothing. Commands outside KEYS, SCAN,
// HSCAN/SSCAN/ZSCAN, HGETALL/HKEYS/HVALS, SMEMBERS and SINTER/SUNION/SDIFF
// have a defined order.
func (s *Server) ReplyOrder(args ...any) Order {
	argv, err := argStrings(nil, args, false)
	if err != nil || len(argv) == 0 || s == nil || s.ks == nil {
		return OrderDefined
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ks.replyOrder(s.clock.Now().UnixMilli(), argv)
}

func (ks *Keyspace) replyOrder(nowMS int64, argv []string) Order {
	switch strings.ToLower(argv[0]) {
	case "keys", "scan":
		return OrderUndefined
	case "sinter", "sunion", "sdiff":
		return ks.setAlgebraOrder(nowMS, strings.ToLower(argv[0]), argv[1:])
	case "hgetall", "hkeys", "hvals", "hscan", "smembers", "sscan", "zscan":
		if len(argv) < 2 {
			return OrderDefined
		}
		v := ks.keys[argv[1]]
		if v == nil || v.expiredBy(nowMS) {
			return OrderDefined
		}
		if v.big && (v.kind == kindHash || v.kind == kindSet || v.kind == kindZSet) {
			return OrderUndefined
		}
	}
	return OrderDefined
}

// UndefinedOrder chooses how the simulator orders replies whose order
// Redis leaves undefined (see OrderUndefined).
type UndefinedOrder uint8

const (
	// UndefinedOrderStable (the default) answers in a fixed order: hash
	// fields in insertion order, set members sorted as strings, KEYS
	// sorted by name, and the SCAN family in the order of a fixed hash of
	// each element (so a cursor survives inserts and deletes).
	UndefinedOrderStable UndefinedOrder = iota
	// UndefinedOrderShuffled shuffles each such reply (within a SCAN page)
	// with a generator seeded by WithSeed, so a test that depends on an
	// order no real server promises fails in the simulator too.
	UndefinedOrderShuffled
)

// WithUndefinedOrder chooses how replies whose order Redis leaves
// undefined are ordered (default UndefinedOrderStable).
func WithUndefinedOrder(o UndefinedOrder) Option {
	return func(s *Server) { s.undefinedOrder = o }
}

// shuffleUndefined reorders n elements through swap when the keyspace
// shuffles undefined orders.
func (ks *Keyspace) shuffleUndefined(n int, swap func(i, j int)) {
	if ks.shuffle != nil {
		ks.shuffle.Shuffle(n, swap)
	}
}

// newShuffler returns the generator behind UndefinedOrderShuffled.
func newShuffler(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// intsetOrder sorts integer set members numerically, as an intset keeps them.
func intsetOrder(members []string) {
	sort.Slice(members, func(i, j int) bool {
		a, _ := strconv.ParseInt(members[i], 10, 64)
		b, _ := strconv.ParseInt(members[j], 10, 64)
		return a < b
	})
}

// setAlgebraOrder tells whether SINTER, SUNION or SDIFF over keys answers
// in an intset's numeric order: SINTER lists its smallest input's members
// in that set's order, SUNION and SDIFF their result's, which is a hash
// table once an input is one (SDIFF: its first input) or the union may
// pass 512 members.
func (ks *Keyspace) setAlgebraOrder(nowMS int64, name string, keys []string) Order {
	var sets []*value
	total := 0
	for _, k := range keys {
		v := ks.keys[k]
		if v == nil || v.expiredBy(nowMS) || v.kind != kindSet {
			if name == "sinter" {
				return OrderDefined // empty, or an error
			}
			v = &value{kind: kindSet}
		}
		sets = append(sets, v)
		total += len(v.set)
	}
	switch name {
	case "sinter":
		smallest := sets[0]
		for _, v := range sets[1:] {
			if len(v.set) < len(smallest.set) {
				smallest = v
			}
		}
		if smallest.big {
			return OrderUndefined
		}
	case "sdiff":
		if len(sets) > 0 && sets[0].big {
			return OrderUndefined
		}
	default:
		for _, v := range sets {
			if v.big {
				return OrderUndefined
			}
		}
		if total > setMaxIntsetEntries {
			return OrderUndefined
		}
	}
	return OrderDefined
}
