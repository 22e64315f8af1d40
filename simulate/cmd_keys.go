package simulate

import (
	"fmt"
	"math"
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
