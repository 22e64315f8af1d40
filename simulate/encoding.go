package simulate

// Redis 7.0's default thresholds for the small encodings (redis.conf:
// hash-max-listpack-*, set-max-intset-entries, zset-max-listpack-*).
const (
	hashMaxListpackEntries = 512 // 7.0's compiled default (redis.conf's example says 128)
	hashMaxListpackValue   = 64
	setMaxIntsetEntries    = 512
	zsetMaxListpackEntries = 128
	zsetMaxListpackValue   = 64
	embstrMaxLength        = 44 // OBJ_ENCODING_EMBSTR_SIZE_LIMIT
)

// encoding is what OBJECT ENCODING answers for v, as Redis 7.0 with its
// default configuration picks it.
func (v *value) encoding() string {
	switch v.kind {
	case kindString:
		return stringEncoding(v)
	case kindHash:
		if v.big {
			return "hashtable"
		}
		return "listpack"
	case kindSet:
		if v.big {
			return "hashtable"
		}
		if v.setLP {
			return "listpack"
		}
		return "intset"
	case kindZSet:
		if v.big {
			return "skiplist"
		}
		return "listpack"
	case kindList:
		return "quicklist" // 7.0 keeps every list in a quicklist (listpack lists came in 7.2)
	case kindStream:
		return "stream"
	}
	return ""
}

// stringEncoding is tryObjectEncoding's choice for a value SET stored, or
// the encoding the last command that changed it fixed.
func stringEncoding(v *value) string {
	if v.strEnc != "" {
		return v.strEnc
	}
	if len(v.str) <= 20 {
		if _, ok := parseInt(v.str); ok {
			return "int"
		}
	}
	return embstrOrRaw(v.str)
}

// embstrOrRaw is createStringObject's choice by length.
func embstrOrRaw(s string) string {
	if len(s) <= embstrMaxLength {
		return "embstr"
	}
	return "raw"
}

// noteHashField converts a hash to a hash table as hashTypeSet does: a
// field or value longer than 64 bytes, or more than 128 fields. Call it
// after the field is stored.
func (v *value) noteHashField(field, x string) {
	if !v.big && (len(field) > hashMaxListpackValue || len(x) > hashMaxListpackValue || len(v.hash) > hashMaxListpackEntries) {
		v.big = true
	}
}

// noteSetMember converts a set to a hash table as setTypeAdd does: a
// member that is not an integer (string2ll), or more than 512 members.
// Call it after the member is stored.
func (v *value) noteSetMember(m string, p Profile) {
	if p.since72() {
		v.noteSetMember72(m)
		return
	}
	if v.big {
		return
	}
	if _, ok := parseInt(m); !ok || len(v.set) > setMaxIntsetEntries {
		v.big = true
	}
}

// noteZSetMember converts a sorted set to a skiplist as zsetAdd does: a
// member longer than 64 bytes, or more than 128 members. Call it after
// the member is stored.
func (v *value) noteZSetMember(m string) {
	if !v.big && (len(m) > zsetMaxListpackValue || len(v.zset) > zsetMaxListpackEntries) {
		v.big = true
	}
}

// zsetFits reports whether a sorted set built at once (ZRANGESTORE) starts
// as a listpack.
func zsetFits(ms []ZMember) bool {
	if len(ms) > zsetMaxListpackEntries {
		return false
	}
	for _, m := range ms {
		if len(m.Member) > zsetMaxListpackValue {
			return false
		}
	}
	return true
}
