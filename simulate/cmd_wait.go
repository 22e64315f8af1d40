package simulate

import "math"

// WAIT and WAITAOF: the simulator is one server with no replicas and no
// AOF, so they answer at once (as in a script, where they never block).
// Scripts may call them from Redis 7.2 (WAIT was noscript in 7.0, and
// WAITAOF is 7.2's).
func init() {
	commands["wait"] = cmdWait
	commands["waitaof"] = cmdWaitAOF
}

// waitTimeout checks a millisecond timeout as getTimeoutFromObjectOrReply
// does with UNIT_MILLISECONDS.
func waitTimeout(p Profile, cc *CallContext, arg string) *Reply {
	t, ok := parseInt(arg)
	var r Reply
	switch {
	case !ok:
		r = errorReply(errTimeoutNotInt)
	case t < 0:
		r = errorReply(errTimeoutNegative)
	case t > 0 && t > math.MaxInt64-cc.Now.UnixMilli():
		r = errorReply(p.timeoutRangeError())
	default:
		return nil
	}
	return &r
}

// cmdWait is WAIT numreplicas timeout: no replica acknowledges.
func cmdWait(ks *Keyspace, cc *CallContext, a []string) Reply {
	if _, ok := parseInt(a[1]); !ok {
		return errorReply(errNotInteger)
	}
	if bad := waitTimeout(ks.profile, cc, a[2]); bad != nil {
		return *bad
	}
	return intReply(0)
}

// cmdWaitAOF is WAITAOF numlocal numreplicas timeout: with appendonly off,
// numlocal 1 is refused and nothing is acknowledged.
func cmdWaitAOF(ks *Keyspace, cc *CallContext, a []string) Reply {
	local, ok := parseInt(a[1])
	if !ok {
		return errorReply(errNotInteger)
	}
	if local < 0 || local > 1 {
		return errorReply("ERR value is out of range, value must between 0 and 1")
	}
	if n, ok := parseInt(a[2]); !ok || n < 0 {
		return errorReply("ERR value is out of range, must be positive")
	}
	if bad := waitTimeout(ks.profile, cc, a[3]); bad != nil {
		return *bad
	}
	if local == 1 {
		return errorReply("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
	}
	return arrayReply([]Reply{intReply(0), intReply(0)})
}
