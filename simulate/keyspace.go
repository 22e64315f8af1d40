package simulate

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// Keyspace is the simulator's database: typed values with expiry. It is not
// safe for concurrent use; the Server's mutex guards it.
type Keyspace struct {
	// keys is the selected database (see SELECT); others holds the rest
	// of Redis's 16 by index, created when first written.
	keys   map[string]*value
	db     int
	others map[int]map[string]*value
	// shuffle, when set, reorders the replies whose order Redis leaves
	// undefined (see WithUndefinedOrder).
	shuffle *rand.Rand
	// rng draws the replies Redis draws at random (SRANDMEMBER,
	// ZRANDMEMBER, HRANDFIELD, RANDOMKEY) from a fixed seed, so that a run
	// reproduces; see random.
	rng *rand.Rand
	// started is when the first command ran (Unix ms): LASTSAVE and INFO's
	// uptime count from it.
	started int64
	// profile is the server line reproduced (see WithServer).
	profile Profile
}

type kind uint8

const (
	kindString kind = iota + 1
	kindHash
	kindZSet
	kindList
	kindSet
	kindStream
)

var kindNames = map[kind]string{kindString: "string", kindHash: "hash", kindZSet: "zset", kindList: "list", kindSet: "set", kindStream: "stream"}

type value struct {
	kind kind
	// lru is Redis's LRU clock (lruClock) when a command last looked the
	// key up or created its value: OBJECT IDLETIME counts from it.
	lru  uint32
	str  string
	hash map[string]string
	// fields keeps hash fields in insertion order: Redis 7.0 lists a
	// small hash (a listpack) that way.
	fields []string
	zset   map[string]float64
	list   []string
	set    map[string]struct{}
	stream *stream
	exp    int64 // Unix milliseconds, as Redis keeps it; 0: no expiry
	// big records that a hash, set or sorted set was converted to its
	// large encoding (hashtable, skiplist): Redis never converts back.
	big bool
	// setLP marks a set kept as a listpack (7.2 and later, see
	// profile_set.go); setOrder lists its members as the listpack holds
	// them, with stale entries for members removed since.
	setLP    bool
	setOrder []string
	// strEnc is a string's encoding when a command fixed it (APPEND and
	// SETRANGE leave "raw", INCRBYFLOAT "embstr" or "raw"); empty means
	// the encoding SET would pick for the content (see encoding.go).
	strEnc string
}

// CallContext is what one command needs to know about its caller.
type CallContext struct {
	Now      time.Time // expiry is judged at this instant (Redis 7 freezes it for a whole script)
	Clock    Clock     // TIME reads it
	InScript bool
	ReadOnly bool
	Publish  func(channel, message string, sharded bool) int64 // nil: no subscribers
	RESP     int                                               // 2 or 3; commands build RESP3 replies, see Downgrade
	// db is the database a script's SELECT chose (when dbSelected): it
	// holds for the rest of that script only, as in Redis.
	db         int
	dbSelected bool
	profile    Profile // the server line, for what varies below the keyspace
}

// KeyDump is one key as Dump reports it.
type KeyDump struct {
	Key, Type string
	// Value is a string, a map[string]string (hash), a []ZMember (zset, in
	// order), a []string (list, in order) a sorted []string (set) or a []StreamEntry (stream).
	Value any
	PTTL  int64 // -1 without expiry
}

// ZMember is a sorted-set member with its score.
type ZMember struct {
	Member string
	Score  float64
}

// NewKeyspace returns an empty keyspace.
func NewKeyspace() *Keyspace { return &Keyspace{keys: map[string]*value{}} }

// FlushAll deletes every key of every database.
func (ks *Keyspace) FlushAll() {
	if ks != nil {
		ks.keys, ks.others = map[string]*value{}, nil
	}
}

// numDBs is how many databases Redis has by default (databases 16).
const numDBs = 16

// selectDB makes database i the one commands read and write.
func (ks *Keyspace) selectDB(i int) {
	if i == ks.db {
		return
	}
	if ks.others == nil {
		ks.others = map[int]map[string]*value{}
	}
	ks.others[ks.db] = ks.keys
	ks.keys = ks.others[i]
	if ks.keys == nil {
		ks.keys = map[string]*value{}
	}
	delete(ks.others, i)
	ks.db = i
}

// dbKeys returns database i's keys, creating its map when it has none.
func (ks *Keyspace) dbKeys(i int) map[string]*value {
	if i == ks.db {
		return ks.keys
	}
	m := ks.others[i]
	if m == nil {
		if ks.others == nil {
			ks.others = map[int]map[string]*value{}
		}
		m = map[string]*value{}
		ks.others[i] = m
	}
	return m
}

// setDBKeys makes m database i's keys.
func (ks *Keyspace) setDBKeys(i int, m map[string]*value) {
	if i == ks.db {
		ks.keys = m
		return
	}
	ks.others[i] = m
}

// lookup returns the live value of key, deleting it if it expired by now,
// and records the access for OBJECT IDLETIME as Redis's lookupKey does.
func (ks *Keyspace) lookup(now time.Time, key string) *value {
	v := ks.peek(now, key)
	if v != nil {
		v.lru = lruClock(now)
	}
	return v
}

// peek is lookup without recording an access, for the commands Redis
// looks keys up for with LOOKUP_NOTOUCH (TYPE, EXISTS, TTL, OBJECT) or
// that only walk the keyspace (KEYS, SCAN, DBSIZE).
func (ks *Keyspace) peek(now time.Time, key string) *value {
	v := ks.keys[key]
	if v != nil && v.expiredBy(now.UnixMilli()) {
		delete(ks.keys, key)
		return nil
	}
	return v
}

// Dump lists the live keys, sorted by name.
func (ks *Keyspace) Dump(now time.Time) []KeyDump {
	if ks == nil {
		return nil
	}
	names := make([]string, 0, len(ks.keys))
	for k := range ks.keys {
		if ks.peek(now, k) != nil {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]KeyDump, 0, len(names))
	for _, k := range names {
		out = append(out, dumpValue(k, ks.keys[k], now))
	}
	return out
}

// dumpValue is one live key as Dump lists it: a copy of its value.
func dumpValue(key string, v *value, now time.Time) KeyDump {
	d := KeyDump{Key: key, Type: kindNames[v.kind], PTTL: pttl(now, v)}
	switch v.kind {
	case kindString:
		d.Value = v.str
	case kindHash:
		m := make(map[string]string, len(v.hash))
		for f, x := range v.hash {
			m[f] = x
		}
		d.Value = m
	case kindZSet:
		d.Value = sortedMembers(v.zset)
	case kindList:
		d.Value = append([]string(nil), v.list...)
	case kindSet:
		d.Value = sortedSet(v.set)
	case kindStream:
		d.Value = dumpStream(v.stream)
	}
	return d
}

// expiredBy reports whether the value's TTL ran out by ms (Unix milliseconds).
func (v *value) expiredBy(ms int64) bool { return v.exp != 0 && ms >= v.exp }

func pttl(now time.Time, v *value) int64 {
	if v.exp == 0 {
		return -1
	}
	return v.exp - now.UnixMilli()
}

type handler func(ks *Keyspace, cc *CallContext, argv []string) Reply

// commands maps lower-case names to their implementations; the cmd_*.go
// files fill it.
var commands = map[string]handler{}

// Implemented reports whether this engine implements the command.
func (ks *Keyspace) Implemented(name string) bool {
	_, ok := commands[strings.ToLower(name)]
	return ok
}

// Exec runs one command, validating it as the server does for a direct call.
func (ks *Keyspace) Exec(cc *CallContext, argv []string) Reply {
	if len(argv) == 0 {
		return errorReply(errEmptyCommand)
	}
	if ks == nil || ks.keys == nil || cc == nil {
		return errorReply("ERR simulate: Keyspace.Exec needs a keyspace from NewKeyspace and a CallContext")
	}
	name := strings.ToLower(argv[0])
	meta, known := ks.profile.lookup(name)
	if !known {
		var b strings.Builder
		for _, a := range argv[1:] {
			fmt.Fprintf(&b, "'%s' ", a)
		}
		return errorReply(fmt.Sprintf(errUnknownCommand, argv[0], b.String()))
	}
	if !meta.ArityOK(len(argv)) {
		return errorReply(fmt.Sprintf(errWrongArgs, name))
	}
	h, ok := commands[name]
	if !ok {
		return errorReply(fmt.Sprintf(errNotImplemented, name))
	}
	if ks.started == 0 {
		ks.started = cc.Now.UnixMilli()
	}
	if cc.dbSelected && cc.db != ks.db {
		return ks.execIn(cc.db, h, cc, argv)
	}
	return h(ks, cc, argv)
}

// execIn runs h with database db selected, for a script that chose
// another database than its caller's.
func (ks *Keyspace) execIn(db int, h handler, cc *CallContext, argv []string) Reply {
	prev := ks.db
	ks.selectDB(db)
	defer ks.selectDB(prev)
	return h(ks, cc, argv)
}

// valueFor returns key's live value of kind k, a WRONGTYPE reply when it
// holds another kind, or (with create) a new empty value stored under key.
func (ks *Keyspace) valueFor(cc *CallContext, key string, k kind, create bool) (*value, *Reply) {
	v, wrong := ks.getTyped(cc.Now, key, k)
	if wrong != nil || v != nil || !create {
		return v, wrong
	}
	v = &value{kind: k, lru: lruClock(cc.Now)}
	switch k {
	case kindHash:
		v.hash = map[string]string{}
	case kindSet:
		v.set = map[string]struct{}{}
	case kindZSet:
		v.zset = map[string]float64{}
	}
	ks.keys[key] = v
	return v, nil
}

// getTyped returns key's live value, or a WRONGTYPE reply when it holds another kind.
func (ks *Keyspace) getTyped(now time.Time, key string, want kind) (*value, *Reply) {
	v := ks.lookup(now, key)
	if v != nil && v.kind != want {
		r := errorReply(errWrongType)
		return nil, &r
	}
	return v, nil
}

// lookupOrReply returns key's live value of kind k, as Redis's
// lookupKeyReadOrReply and checkType do together: when there is no such
// value ok is false and done is the command's whole reply, missing for a
// missing key and WRONGTYPE for another kind.
func (ks *Keyspace) lookupOrReply(cc *CallContext, key string, k kind, missing Reply) (v *value, done Reply, ok bool) {
	v, wrong := ks.getTyped(cc.Now, key, k)
	switch {
	case wrong != nil:
		return nil, *wrong, false
	case v == nil:
		return nil, missing, false
	}
	return v, Reply{}, true
}

// size is how many elements an aggregate holds (fields, members, list
// elements or stream entries), or a string's length in bytes.
func (v *value) size() int {
	switch v.kind {
	case kindString:
		return len(v.str)
	case kindHash:
		return len(v.hash)
	case kindSet:
		return len(v.set)
	case kindZSet:
		return len(v.zset)
	case kindList:
		return len(v.list)
	case kindStream:
		return len(v.stream.entries)
	}
	return 0
}

// has reports whether a hash holds field m, or a set or sorted set member m.
func (v *value) has(m string) bool {
	switch v.kind {
	case kindHash:
		_, ok := v.hash[m]
		return ok
	case kindSet:
		_, ok := v.set[m]
		return ok
	case kindZSet:
		_, ok := v.zset[m]
		return ok
	}
	return false
}

// remove deletes a hash field or a set or sorted set member, reporting
// whether it was there.
func (v *value) remove(m string) bool {
	if !v.has(m) {
		return false
	}
	switch v.kind {
	case kindHash:
		v.hdel(m)
	case kindSet:
		delete(v.set, m)
	case kindZSet:
		delete(v.zset, m)
	}
	return true
}

// dropIfEmpty deletes key once its hash, list, set or sorted set has lost
// its last element: Redis keeps no empty one (a stream may stay empty).
func (ks *Keyspace) dropIfEmpty(key string, v *value) {
	if v != nil && v.kind != kindString && v.kind != kindStream && v.size() == 0 {
		delete(ks.keys, key)
	}
}

// The commands below are the same for several kinds, as their Redis
// counterparts are: each group's file registers them for its kind.

// cmdLen implements STRLEN, HLEN, LLEN, SCARD, ZCARD and XLEN.
func cmdLen(k kind) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, done, ok := ks.lookupOrReply(cc, a[1], k, intReply(0))
		if !ok {
			return done
		}
		return intReply(int64(v.size()))
	}
}

// cmdHas implements HEXISTS and SISMEMBER.
func cmdHas(k kind) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, done, ok := ks.lookupOrReply(cc, a[1], k, intReply(0))
		if !ok {
			return done
		}
		return intReply(boolInt(v.has(a[2])))
	}
}

// cmdRemove implements HDEL, SREM and ZREM key member [member ...].
func cmdRemove(k kind) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, done, ok := ks.lookupOrReply(cc, a[1], k, intReply(0))
		if !ok {
			return done
		}
		var n int64
		for _, m := range a[2:] {
			if v.remove(m) {
				n++
			}
		}
		ks.dropIfEmpty(a[1], v)
		return intReply(n)
	}
}
