package simulate

import "time"

func init() {
	registerSubcommands("object", cmdObject)
}

const (
	// lruClockMax is LRU_CLOCK_MAX: Redis keeps an object's access time
	// in 24 bits of seconds, so the clock wraps every 194 days.
	lruClockMax = 1<<24 - 1
	// sharedRefcount is OBJ_SHARED_REFCOUNT, the count OBJECT REFCOUNT
	// reports for one of the integers Redis shares.
	sharedRefcount = 1<<31 - 1
	// sharedIntegers is OBJ_SHARED_INTEGERS: Redis keeps one object for
	// each integer below it and stores that object under every key SET
	// (APPEND on a new key, INCR, RESTORE) gives such a value.
	sharedIntegers = 10000
)

// errNoLFU is OBJECT FREQ's error under a maxmemory-policy that does not
// count accesses; the simulator has none, like Redis's default noeviction.
const errNoLFU = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."

// objectHelp is OBJECT HELP's text between its header and HELP's own lines.
var objectHelp = []string{
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
}

// lruClock is Redis's LRU_CLOCK() at now: whole seconds, modulo 2^24.
// A lookup stores it on the value, so keep it cheap.
func lruClock(now time.Time) uint32 { return uint32(now.Unix()) & lruClockMax }

// idleSeconds is estimateObjectIdleTime in seconds, as OBJECT IDLETIME
// reports it, wrap of the 24-bit clock included (where Redis counts one
// second less than elapsed).
func (v *value) idleSeconds(now time.Time) int64 {
	clock := lruClock(now)
	if clock >= v.lru {
		return int64(clock - v.lru)
	}
	return int64(clock) + int64(lruClockMax-v.lru)
}

// refcount is what OBJECT REFCOUNT reports for v: Redis's shared object
// for an integer 0..9999 that a command stored as SET would (strEnc
// empty, see stringEncoding); 1 for every other value, which no two keys
// share. A command that copies such an integer into an object of its own
// (COPY does) marks the copy with strEnc "int".
func (v *value) refcount() int64 {
	if v.kind == kindString && v.strEnc == "" && len(v.str) <= 4 {
		if n, ok := parseInt(v.str); ok && n >= 0 && n < sharedIntegers {
			return sharedRefcount
		}
	}
	return 1
}

// cmdObject implements OBJECT ENCODING, FREQ, IDLETIME, REFCOUNT and
// HELP as Redis 7.0 answers them with its default maxmemory-policy
// (noeviction). OBJECT looks the key up without counting an access, as
// Redis's objectCommandLookup does, so it leaves IDLETIME as it was.
func cmdObject(ks *Keyspace, cc *CallContext, a []string) Reply {
	sub, bad := subcommand(a)
	if bad != nil {
		return *bad
	}
	if sub == "help" {
		return ks.helpReply(a, objectHelp...)
	}
	v := ks.peek(cc.Now, a[2])
	if v == nil {
		return nilReply()
	}
	switch sub {
	case "encoding":
		return bulkReply(v.encodingIn(ks.profile))
	case "freq":
		return errorReply(errNoLFU)
	case "idletime":
		return intReply(v.idleSeconds(cc.Now))
	default: // refcount: subcommand accepts no other
		return intReply(v.refcount())
	}
}
