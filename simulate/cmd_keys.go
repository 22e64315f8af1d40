package simulate

import (
	"fmt"
	"sort"
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
