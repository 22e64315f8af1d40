package simulate

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

func init() {
	commands["del"] = cmdDel
	commands["unlink"] = cmdDel
	commands["exists"] = cmdExists
	commands["type"] = cmdType
	commands["expire"] = cmdExpire("expire", time.Second, false)
	commands["pexpire"] = cmdExpire("pexpire", time.Millisecond, false)
	commands["expireat"] = cmdExpire("expireat", time.Second, true)
	commands["pexpireat"] = cmdExpire("pexpireat", time.Millisecond, true)
	commands["ttl"] = cmdTTL(false, false)
	commands["pttl"] = cmdTTL(true, false)
	commands["persist"] = cmdPersist
	commands["expiretime"] = cmdTTL(false, true)
	commands["pexpiretime"] = cmdTTL(true, true)
	commands["rename"] = cmdRename
	commands["keys"] = cmdKeys
	commands["scan"] = cmdScan
	commands["object"] = cmdObject
	// Scripts check subcommands by their full name; Exec dispatches on "object".
	commands["object|encoding"] = cmdObject
	commands["touch"] = cmdTouch
	commands["renamenx"] = cmdRenameNX
	commands["copy"] = cmdCopy
	commands["randomkey"] = cmdRandomKey
	commands["select"] = cmdSelect
	commands["move"] = cmdMove
	commands["swapdb"] = cmdSwapDB
	commands["flushdb"] = cmdFlush(false)
	commands["migrate"] = func(ks *Keyspace, cc *CallContext, a []string) Reply {
		return errorReply(errMigrate)
	}
}

func cmdRenameNX(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		return errorReply(errNoKey)
	}
	if a[1] == a[2] || ks.lookup(cc.Now, a[2]) != nil {
		return intReply(0)
	}
	delete(ks.keys, a[1])
	ks.keys[a[2]] = v
	return intReply(1)
}

// dbIndex parses a database index as Redis's getIntFromObjectOrReply and
// selectDb check it: an int32 (else notInt, or without it Redis's range
// error), then 0..15.
func dbIndex(arg, notInt string) (int, *Reply) {
	n, ok := parseInt(arg)
	if !ok {
		r := errorReply(cmp.Or(notInt, errNotInteger))
		return 0, &r
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		r := errorReply(cmp.Or(notInt, errDBIndexInt))
		return 0, &r
	}
	if n < 0 || n >= numDBs {
		r := errorReply(errDBRange)
		return 0, &r
	}
	return int(n), nil
}

// lookupIn is lookup for database db.
func (ks *Keyspace) lookupIn(db int, now time.Time, key string) *value {
	if db == ks.db {
		return ks.lookup(now, key)
	}
	m := ks.others[db]
	v := m[key]
	if v != nil && v.expiredBy(now.UnixMilli()) {
		delete(m, key)
		return nil
	}
	return v
}

// cmdCopy implements COPY source destination [DB n] [REPLACE]: a deep
// copy with the source's TTL and encoding.
func cmdCopy(ks *Keyspace, cc *CallContext, a []string) Reply {
	dst, replace := ks.db, false
	for j := 3; j < len(a); j++ {
		switch {
		case strings.EqualFold(a[j], "replace"):
			replace = true
		case strings.EqualFold(a[j], "db") && j+1 < len(a):
			n, bad := dbIndex(a[j+1], "")
			if bad != nil {
				return *bad
			}
			dst = n
			j++
		default:
			return errorReply(errSyntax)
		}
	}
	if dst == ks.db && a[1] == a[2] {
		return errorReply(errSameObject)
	}
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		return intReply(0)
	}
	if ks.lookupIn(dst, cc.Now, a[2]) != nil && !replace {
		return intReply(0)
	}
	c := v.clone()
	c.lru = lruClock(cc.Now)
	if c.kind == kindString && c.strEnc == "" && c.refcount() == sharedRefcount {
		c.strEnc = "int" // the copy is an object of its own, not the shared integer
	}
	ks.dbKeys(dst)[a[2]] = c
	return intReply(1)
}

// cmdRandomKey implements RANDOMKEY: a live key drawn from the keyspace's
// seeded generator, or nil when the database is empty.
func cmdRandomKey(ks *Keyspace, cc *CallContext, a []string) Reply {
	names := make([]string, 0, len(ks.keys))
	for k := range ks.keys {
		if ks.peek(cc.Now, k) != nil { // RANDOMKEY is no access of the keys it passes
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nilReply()
	}
	sort.Strings(names)
	return bulkReply(names[ks.random().Intn(len(names))])
}

// cmdSelect implements SELECT index. In a script the choice lasts until
// the script ends; a direct call (Do) keeps it, as one connection would.
func cmdSelect(ks *Keyspace, cc *CallContext, a []string) Reply {
	n, bad := dbIndex(a[1], "")
	if bad != nil {
		return *bad
	}
	if cc.InScript {
		cc.db, cc.dbSelected = n, true
	} else {
		ks.selectDB(n)
	}
	return okReply()
}

// cmdMove implements MOVE key db: the key with its TTL goes to database
// db unless one of that name is already there.
func cmdMove(ks *Keyspace, cc *CallContext, a []string) Reply {
	dst, bad := dbIndex(a[2], "")
	if bad != nil {
		return *bad
	}
	if dst == ks.db {
		return errorReply(errSameObject)
	}
	v := ks.lookup(cc.Now, a[1])
	if v == nil || ks.lookupIn(dst, cc.Now, a[1]) != nil {
		return intReply(0)
	}
	ks.dbKeys(dst)[a[1]] = v
	delete(ks.keys, a[1])
	return intReply(1)
}

func cmdSwapDB(ks *Keyspace, cc *CallContext, a []string) Reply {
	i, bad := dbIndex(a[1], errSwapDBFirst)
	if bad != nil {
		return *bad
	}
	j, bad := dbIndex(a[2], errSwapDBSecond)
	if bad != nil {
		return *bad
	}
	mi, mj := ks.dbKeys(i), ks.dbKeys(j)
	ks.setDBKeys(i, mj)
	ks.setDBKeys(j, mi)
	return okReply()
}

// cmdFlush implements FLUSHDB and (all) FLUSHALL [ASYNC|SYNC].
func cmdFlush(all bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if len(a) > 2 || (len(a) == 2 && !strings.EqualFold(a[1], "sync") && !strings.EqualFold(a[1], "async")) {
			return errorReply(errSyntax)
		}
		if all {
			ks.FlushAll()
		} else {
			ks.keys = map[string]*value{}
		}
		return okReply()
	}
}

func cmdDel(ks *Keyspace, cc *CallContext, a []string) Reply {
	var n int64
	for _, k := range a[1:] {
		if ks.lookup(cc.Now, k) != nil {
			delete(ks.keys, k)
			n++
		}
	}
	return intReply(n)
}

// cmdTouch counts the keys that exist, and updates their access time.
func cmdTouch(ks *Keyspace, cc *CallContext, a []string) Reply {
	var n int64
	for _, k := range a[1:] {
		if ks.lookup(cc.Now, k) != nil {
			n++
		}
	}
	return intReply(n)
}

func cmdExists(ks *Keyspace, cc *CallContext, a []string) Reply {
	var n int64
	for _, k := range a[1:] {
		if ks.peek(cc.Now, k) != nil {
			n++
		}
	}
	return intReply(n)
}

func cmdType(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.peek(cc.Now, a[1])
	if v == nil {
		return statusReply("none")
	}
	return statusReply(kindNames[v.kind])
}

// cmdExpire implements EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT key n [NX|XX|GT|LT].
func cmdExpire(name string, unit time.Duration, absolute bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		c, n := readConditions(a[3:], false)
		if 3+n < len(a) {
			return errorReply(fmt.Sprintf(errUnsupportedOption, a[3+n]))
		}
		if c.nx && (c.xx || c.gt || c.lt) {
			return errorReply(errExpireNXXX)
		}
		if c.gt && c.lt {
			return errorReply(errExpireGTLT)
		}
		// As in Redis, the flags are checked before the number.
		when, ok := parseInt(a[2])
		if !ok {
			return errorReply(errNotInteger)
		}
		at, ok := expireAt(when, unit == time.Second, !absolute, cc.Now)
		if !ok {
			return errorReply(fmt.Sprintf(errExpireRange, name))
		}
		v := ks.lookup(cc.Now, a[1])
		if v == nil {
			return intReply(0)
		}
		switch cur := v.exp; {
		case c.nx && cur != 0, c.xx && cur == 0:
			return intReply(0)
		case c.gt && (cur == 0 || at <= cur):
			return intReply(0)
		case c.lt && cur != 0 && at >= cur:
			return intReply(0)
		}
		if at <= cc.Now.UnixMilli() {
			delete(ks.keys, a[1]) // an expiry in the past deletes the key at once
			return intReply(1)
		}
		v.exp = at
		return intReply(1)
	}
}

// cmdTTL implements TTL, PTTL, EXPIRETIME and PEXPIRETIME as Redis's
// ttlGenericCommand does: -2 for a missing key, -1 for one without an
// expiry, else the time left (or with absolute the Unix time) in
// milliseconds or rounded to seconds.
func cmdTTL(millis, absolute bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v := ks.peek(cc.Now, a[1])
		switch {
		case v == nil:
			return intReply(-2)
		case v.exp == 0:
			return intReply(-1)
		}
		ms := v.exp
		if !absolute {
			ms = pttl(cc.Now, v)
		}
		if millis {
			return intReply(ms)
		}
		return intReply((ms + 500) / 1000)
	}
}

func cmdPersist(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.lookup(cc.Now, a[1])
	if v == nil || v.exp == 0 {
		return intReply(0)
	}
	v.exp = 0
	return intReply(1)
}

func cmdRename(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		return errorReply(errNoKey)
	}
	if a[1] != a[2] {
		delete(ks.keys, a[1])
		ks.keys[a[2]] = v // the TTL moves with the value
	}
	return okReply()
}

// cmdKeys implements KEYS pattern. Redis lists the keyspace in its hash
// table's order, which no two servers share (OrderUndefined); the
// simulator sorts by name (or shuffles, see WithUndefinedOrder).
func cmdKeys(ks *Keyspace, cc *CallContext, a []string) Reply {
	all := a[1] == "*"
	names := make([]string, 0, len(ks.keys))
	for k := range ks.keys {
		if (all || globMatch(a[1], k)) && ks.peek(cc.Now, k) != nil {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	ks.shuffleUndefined(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	out := make([]Reply, len(names))
	for i, k := range names {
		out[i] = bulkReply(k)
	}
	return arrayReply(out)
}
