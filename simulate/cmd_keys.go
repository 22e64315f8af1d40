package simulate

import (
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
	commands["ttl"] = cmdTTL(false)
	commands["pttl"] = cmdTTL(true)
	commands["persist"] = cmdPersist
	commands["expiretime"] = cmdExpireTime(false)
	commands["pexpiretime"] = cmdExpireTime(true)
	commands["rename"] = cmdRename
	commands["keys"] = cmdKeys
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
		if ks.lookup(cc.Now, k) != nil {
			n++
		}
	}
	return intReply(n)
}

func cmdType(ks *Keyspace, cc *CallContext, a []string) Reply {
	v := ks.lookup(cc.Now, a[1])
	if v == nil {
		return statusReply("none")
	}
	return statusReply(kindNames[v.kind])
}

// cmdExpire implements EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT key n [NX|XX|GT|LT].
func cmdExpire(name string, unit time.Duration, absolute bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		var nx, xx, gt, lt bool
		for _, opt := range a[3:] {
			switch strings.ToUpper(opt) {
			case "NX":
				nx = true
			case "XX":
				xx = true
			case "GT":
				gt = true
			case "LT":
				lt = true
			default:
				return errorReply(fmt.Sprintf(errUnsupportedOption, opt))
			}
		}
		if nx && (xx || gt || lt) {
			return errorReply(errExpireNXXX)
		}
		if gt && lt {
			return errorReply(errExpireGTLT)
		}
		// As in Redis, the flags are checked before the number.
		n, ok := parseInt(a[2])
		if !ok {
			return errorReply(errNotInteger)
		}
		ms := n
		if unit == time.Second {
			if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
				return errorReply(fmt.Sprintf(errExpireRange, name))
			}
			ms = n * 1000
		}
		if !absolute {
			now := cc.Now.UnixMilli()
			if (ms > 0 && now > math.MaxInt64-ms) || (ms < 0 && now < math.MinInt64-ms) {
				return errorReply(fmt.Sprintf(errExpireRange, name))
			}
			ms += now
		}
		v := ks.lookup(cc.Now, a[1])
		if v == nil {
			return intReply(0)
		}
		at, cur := ms, v.exp
		switch {
		case nx && cur != 0, xx && cur == 0:
			return intReply(0)
		case gt && (cur == 0 || at <= cur):
			return intReply(0)
		case lt && cur != 0 && at >= cur:
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

func cmdTTL(millis bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v := ks.lookup(cc.Now, a[1])
		switch {
		case v == nil:
			return intReply(-2)
		case v.exp == 0:
			return intReply(-1)
		}
		ms := pttl(cc.Now, v)
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

func cmdExpireTime(millis bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v := ks.lookup(cc.Now, a[1])
		switch {
		case v == nil:
			return intReply(-2)
		case v.exp == 0:
			return intReply(-1)
		case millis:
			return intReply(v.exp)
		}
		return intReply((v.exp + 500) / 1000)
	}
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
		if (all || globMatch(a[1], k)) && ks.lookup(cc.Now, k) != nil {
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

// cmdObject implements OBJECT ENCODING key, answering what Redis 7.0 with
// its default configuration reports; the other subcommands describe
// memory management the simulator does not have.
func cmdObject(ks *Keyspace, cc *CallContext, a []string) Reply {
	sub := strings.ToLower(a[1])
	switch sub {
	case "encoding":
		if len(a) != 3 {
			return errorReply(fmt.Sprintf(errWrongArgs, "object|encoding"))
		}
		v := ks.lookup(cc.Now, a[2])
		if v == nil {
			return nilReply()
		}
		return bulkReply(v.encoding())
	case "freq", "idletime", "refcount", "help":
		return errorReply(fmt.Sprintf(errNotImplemented, "object|"+sub))
	}
	return errorReply(fmt.Sprintf(errUnknownSubcommand, a[1], "OBJECT"))
}
