package simulate

import "strings"

// The blocking forms scripts may call from Redis 7.2 (7.0 flags them
// noscript; see Profile.scriptMayBlock) that have no other handler: in a
// script they never block, so each is its plain form after the timeout
// check, and with nothing to pop answers a null.
func init() {
	commands["brpoplpush"] = func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if bad := blockTimeout(ks.profile, cc, a[3]); bad != nil {
			return *bad
		}
		return move(ks, cc, a[1], a[2], false, true)
	}
	commands["blmove"] = cmdBLMove
	commands["bzpopmin"] = cmdBZPop(false)
	commands["bzpopmax"] = cmdBZPop(true)
}

// cmdBLMove is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout:
// the directions are checked before the timeout.
func cmdBLMove(ks *Keyspace, cc *CallContext, a []string) Reply {
	from, to := strings.ToUpper(a[3]), strings.ToUpper(a[4])
	if (from != "LEFT" && from != "RIGHT") || (to != "LEFT" && to != "RIGHT") {
		return errorReply(errSyntax)
	}
	if bad := blockTimeout(ks.profile, cc, a[5]); bad != nil {
		return *bad
	}
	return move(ks, cc, a[1], a[2], from == "LEFT", to == "LEFT")
}

// cmdBZPop is BZPOPMIN and BZPOPMAX key [key ...] timeout: the first key
// holding a non-empty sorted set gives its lowest (highest) member as
// [key, member, score]; a key of another type is WRONGTYPE when reached.
func cmdBZPop(max bool) handler {
	pop := cmdZPop(max)
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if bad := blockTimeout(ks.profile, cc, a[len(a)-1]); bad != nil {
			return *bad
		}
		for _, key := range a[1 : len(a)-1] {
			v, wrong := ks.zsetFor(cc, key, false)
			if wrong != nil {
				return *wrong
			}
			if v == nil || len(v.zset) == 0 {
				continue
			}
			r := pop(ks, cc, []string{"zpop", key})
			return arrayReply(append([]Reply{bulkReply(key)}, r.Elems...))
		}
		return Reply{Kind: KindNil} // a null array: no blocking in scripts
	}
}
