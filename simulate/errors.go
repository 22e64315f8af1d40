package simulate

// Redis 7.0's error texts, as the server sends them.
const (
	errWrongType    = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInteger   = "ERR value is not an integer or out of range"
	errNotFloat     = "ERR value is not a valid float"
	errSyntax       = "ERR syntax error"
	errOverflow     = "ERR increment or decrement would overflow"
	errHashNotInt   = "ERR hash value is not an integer"
	errInvalidSetEx = "ERR invalid expire time in 'set' command"
	errExpireRange  = "ERR invalid expire time in '%s' command"
	errNoKey        = "ERR no such key"
	errZaddNXXX     = "ERR XX and NX options at the same time are not compatible"
	errZaddGTLTNX   = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZaddIncr     = "ERR INCR option supports a single increment-element pair"
	errMinMaxFloat  = "ERR min or max is not a float"
)

func errorReply(text string) Reply { return Reply{Kind: KindError, Str: text} }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
