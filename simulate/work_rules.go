package simulate

import (
	"math/bits"
	"strconv"
	"strings"
)

// workRule charges one command its elements (see Work).
type workRule struct {
	// complexity is Redis's documented time complexity, for the reader.
	complexity string
	// cost is the elements the call touched; at least 1 is charged.
	cost func(c *workCall) int64
	// noFree: a value the command removes from its keys is not charged
	// (UNLINK frees on another thread, MOVE and SWAPDB move values).
	noFree bool
}

// workRules holds one rule for every command the simulator implements
// (TestWorkRulesCoverEveryCommand), by the command's lower-case name and a
// container's subcommand as "container|sub".
var workRules = buildWorkRules()

// workRuleDuplicates lists the names buildWorkRules was given twice (a
// test keeps it empty).
var workRuleDuplicates []string

func buildWorkRules() map[string]workRule {
	m := map[string]workRule{}
	add := func(complexity string, cost func(c *workCall) int64, names ...string) {
		for _, n := range names {
			if _, dup := m[n]; dup {
				workRuleDuplicates = append(workRuleDuplicates, n)
			}
			m[n] = workRule{complexity: complexity, cost: cost}
		}
	}
	one := func(*workCall) int64 { return 1 }

	// Server, connection, cluster and introspection commands that touch
	// no data (containers called with an unknown subcommand too).
	add("O(1)", one,
		"acl", "acl|help", "asking", "client", "client|help", "cluster", "cluster|addslots", "cluster|addslotsrange",
		"cluster|bumpepoch", "cluster|count-failure-reports", "cluster|countkeysinslot", "cluster|delslots",
		"cluster|delslotsrange", "cluster|failover", "cluster|flushslots", "cluster|forget", "cluster|help",
		"cluster|info", "cluster|keyslot", "cluster|links", "cluster|meet", "cluster|myid", "cluster|nodes",
		"cluster|replicas", "cluster|replicate", "cluster|saveconfig", "cluster|set-config-epoch", "cluster|setslot",
		"cluster|shards", "cluster|slaves", "cluster|slots", "command|count", "command|getkeys",
		"command|getkeysandflags", "command|help", "config", "config|help", "dbsize", "echo", "function",
		"function|help", "info", "lastsave", "latency", "latency|help", "lolwut", "memory", "memory|doctor",
		"memory|help", "memory|malloc-stats", "memory|purge", "memory|stats", "migrate", "module", "module|help",
		"object", "object|encoding", "object|freq", "object|help", "object|idletime", "object|refcount", "ping",
		"pubsub", "pubsub|help", "readonly", "readwrite", "script", "script|help", "select", "slowlog",
		"slowlog|help", "slowlog|len", "slowlog|reset", "time", "xgroup", "xinfo", "xgroup|help", "xinfo|help",
		// 7.2's: on the simulator's one server with no replicas or AOF
		// they answer at once.
		"wait", "waitaof", "cluster|myshardid", "cluster|slot-stats")
	add("O(N) with N the entries returned", returned,
		"command", "command|docs", "command|info", "command|list", "slowlog|get", "cluster|getkeysinslot")
	add("O(N) with N the number of clients receiving the message", func(c *workCall) int64 { return 1 + c.reply.Int },
		"publish", "spublish")

	// Strings: a string counts as one element whatever its length.
	add("O(1)", one,
		"append", "decr", "decrby", "get", "getbit", "getdel", "getex", "getrange", "getset", "incr", "incrby",
		"incrbyfloat", "lcs", "psetex", "set", "setbit", "setex", "setnx", "setrange", "strlen", "substr",
		"bitcount", "bitpos")
	add("O(N) with N the keys", args(1, 1), "mget")
	add("O(N) with N the keys", args(1, 2), "mset", "msetnx")
	add("O(N) with N the keys", args(2, 1), "bitop")
	add("O(1) per subcommand", returned, "bitfield", "bitfield_ro")

	// Keys.
	add("O(1) per key, plus the elements of the values removed", args(1, 1), "del", "exists", "touch")
	add("O(1)", one,
		"expire", "expireat", "expiretime", "pexpire", "pexpireat", "pexpiretime", "persist", "pttl", "ttl", "type",
		"randomkey", "rename", "renamenx")
	m["unlink"] = workRule{complexity: "O(1) per key (freed on another thread)", cost: args(1, 1), noFree: true}
	m["move"] = workRule{complexity: "O(1)", cost: one, noFree: true}
	m["swapdb"] = workRule{complexity: "O(1)", cost: one, noFree: true}
	add("O(N) with N the elements copied", func(c *workCall) int64 { return c.sizeBefore(1) }, "copy")
	add("O(N) with N the elements serialized", func(c *workCall) int64 { return c.sizeBefore(1) }, "dump")
	add("O(N) with N the elements restored", func(c *workCall) int64 { return c.sizeAfter(1) }, "restore", "restore-asking")
	add("O(N) with N the keys of the database", func(c *workCall) int64 { return int64(c.dbKeys) }, "keys")
	add("O(1) per call, COUNT keys visited", func(c *workCall) int64 {
		return min(max(scanCount(c.argv, 2), returnedOf(c.reply, 1)), int64(c.dbKeys))
	}, "scan")
	add("O(N) with N the keys of the database", func(c *workCall) int64 {
		if hasWord(c.argv[1:], "ASYNC") {
			return 1
		}
		return int64(c.dbKeys)
	}, "flushdb")
	add("O(N) with N the keys of every database", func(c *workCall) int64 {
		if hasWord(c.argv[1:], "ASYNC") {
			return 1
		}
		return int64(c.allKeys)
	}, "flushall")
	add("O(N+M*log(M)) with N the elements to sort and M those returned", func(c *workCall) int64 {
		m := int64(len(c.reply.Elems))
		if c.reply.Kind == KindInt {
			m = c.reply.Int
		}
		return c.sizeBefore(1) + m*lg(m)
	}, "sort", "sort_ro")
	add("O(N) with N the elements sampled", func(c *workCall) int64 { return min(c.sizeBefore(2), 5) + 1 }, "memory|usage")

	// Hashes.
	add("O(1)", one, "hexists", "hget", "hincrby", "hincrbyfloat", "hlen", "hsetnx", "hstrlen")
	add("O(1) per field", args(2, 2), "hset", "hmset")
	add("O(1) per field", args(2, 1), "hdel", "hmget")
	add("O(N) with N the fields of the hash", func(c *workCall) int64 { return c.sizeBefore(1) }, "hgetall", "hkeys", "hvals")
	add("O(N) with N the fields returned", returnedPairs("WITHVALUES"), "hrandfield")
	add("O(1) per call, COUNT fields visited (a small hash: all)", collectionScan, "hscan", "sscan", "zscan")

	// Lists.
	add("O(1) per element", args(2, 1), "lpush", "rpush", "lpushx", "rpushx")
	add("O(N) with N the elements popped", popped(1), "lpop", "rpop")
	add("O(N) with N the elements popped", poppedAll, "lmpop", "blmpop", "blpop", "brpop")
	add("O(1)", one, "llen", "lmove", "rpoplpush", "blmove", "brpoplpush")
	add("O(N) with N the elements walked to the index", func(c *workCall) int64 { return walk(c.argv[2], c.sizeBefore(1)) },
		"lindex", "lset")
	add("O(S+N) with S the elements walked to start and N those returned", func(c *workCall) int64 {
		return walk(c.argv[2], c.sizeBefore(1)) + int64(len(c.reply.Elems))
	}, "lrange")
	add("O(N) with N the elements removed", func(c *workCall) int64 { return c.sizeBefore(1) - c.sizeAfter(1) }, "ltrim")
	add("O(N) with N the elements of the list", func(c *workCall) int64 { return c.sizeBefore(1) }, "linsert", "lrem", "lpos")

	// Sets.
	add("O(1) per member", args(2, 1), "sadd", "srem", "smismember")
	add("O(1)", one, "scard", "sismember", "smove")
	add("O(N) with N the members of the set", func(c *workCall) int64 { return c.sizeBefore(1) }, "smembers")
	add("O(N) with N the members popped", popped(1), "spop")
	add("O(N) with N the members returned", returned, "srandmember")
	add("O(N*M) with N the smallest set and M the sets", func(c *workCall) int64 { return smallestTimesCount(c, 1) }, "sinter", "sintercard")
	add("O(N*M) with N the smallest set and M the sets", func(c *workCall) int64 { return smallestTimesCount(c, 2) }, "sinterstore")
	add("O(N) with N the members of all the sets", func(c *workCall) int64 { return sumBefore(c, 1) }, "sunion", "sdiff")
	add("O(N) with N the members of all the sets", func(c *workCall) int64 { return sumBefore(c, 2) }, "sunionstore", "sdiffstore")

	// Sorted sets.
	add("O(1)", one, "zcard", "zscore")
	add("O(1) per member", args(2, 1), "zmscore")
	add("O(log(N))", func(c *workCall) int64 { return lg(c.sizeBefore(1)) }, "zcount", "zlexcount", "zrank", "zrevrank", "zincrby")
	add("O(log(N)) per member", func(c *workCall) int64 { return zaddMembers(c.argv) * lg(c.sizeAfter(1)) }, "zadd")
	add("O(M*log(N)) with M the members removed", func(c *workCall) int64 {
		return int64(len(c.argv)-2) * lg(c.sizeBefore(1))
	}, "zrem")
	add("O(log(N)+M) with M the members returned", zrangeCost, "zrange", "zrangebyscore", "zrangebylex",
		"zrevrange", "zrevrangebyscore", "zrevrangebylex")
	add("O(log(N)+M) with M the members stored", func(c *workCall) int64 {
		return lg(c.sizeBefore(2)) + c.reply.Int + limitOffset(c.argv)
	}, "zrangestore")
	add("O(log(N)+M) with M the members removed", func(c *workCall) int64 {
		return lg(c.sizeBefore(1)) + c.reply.Int
	}, "zremrangebyscore", "zremrangebyrank", "zremrangebylex")
	add("O(M*log(N)) with M the members popped", func(c *workCall) int64 {
		n := c.sizeBefore(1)
		return (n - c.sizeAfter(1)) * lg(n)
	}, "zpopmin", "zpopmax")
	add("O(M*log(N)) with M the members popped", func(c *workCall) int64 { return poppedAll(c) * lg(maxBefore(c)) }, "zmpop", "bzmpop", "bzpopmin", "bzpopmax")
	add("O(N) with N the members returned", returnedPairs("WITHSCORES"), "zrandmember")
	add("O(N)+O(M*log(M)) with N the members of the inputs and M those returned", func(c *workCall) int64 {
		m := int64(len(c.reply.Elems))
		if c.reply.Kind == KindArray && len(c.reply.Elems) > 0 && c.reply.Elems[0].Kind != KindArray && hasWord(c.argv[2:], "WITHSCORES") {
			m /= 2
		}
		return sumBefore(c, 1) + m*lg(m)
	}, "zunion", "zinter", "zdiff")
	add("O(N)+O(M*log(M)) with N the members of the inputs and M those stored", func(c *workCall) int64 {
		return sumBefore(c, 2) + c.reply.Int*lg(c.reply.Int)
	}, "zunionstore", "zinterstore", "zdiffstore")
	add("O(N*K) with N the smallest sorted set and K the sets", func(c *workCall) int64 { return smallestTimesCount(c, 1) }, "zintercard")

	// Geo (sorted sets underneath).
	add("O(log(N)) per member", func(c *workCall) int64 { return geoaddMembers(c.argv) * lg(c.sizeAfter(1)) }, "geoadd")
	add("O(1) per member", args(2, 1), "geohash", "geopos")
	add("O(1)", one, "geodist")
	add("O(N+log(M)) with N the members in the area and M those of the set", func(c *workCall) int64 {
		src := 1
		if strings.EqualFold(c.argv[0], "geosearchstore") {
			src = 2
		}
		m := int64(len(c.reply.Elems))
		if c.reply.Kind == KindInt {
			m = c.reply.Int
		}
		return lg(c.sizeBefore(src)) + m
	}, "georadius", "georadius_ro", "georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearchstore")

	// HyperLogLog.
	add("O(1) per element", args(2, 1), "pfadd")
	add("O(1) per key", args(1, 1), "pfcount", "pfmerge")

	// Streams.
	add("O(1), plus the entries trimmed", func(c *workCall) int64 {
		return 1 + max(0, c.sizeBefore(1)+1-c.sizeAfter(1))
	}, "xadd")
	add("O(1)", one, "xlen", "xsetid", "xgroup|create", "xgroup|createconsumer", "xgroup|setid", "xgroup|destroy")
	add("O(N) with N the pending entries of the consumer", func(c *workCall) int64 { return 1 + c.reply.Int }, "xgroup|delconsumer")
	add("O(N) with N the entries removed", func(c *workCall) int64 { return c.reply.Int }, "xtrim")
	add("O(1) per entry", args(2, 1), "xdel")
	add("O(1) per entry", args(3, 1), "xack")
	add("O(log(N)+M) with M the entries returned", func(c *workCall) int64 {
		return lg(c.sizeBefore(1)) + int64(len(c.reply.Elems))
	}, "xrange", "xrevrange")
	add("O(log(N)+M) per stream, with M the entries returned", func(c *workCall) int64 {
		var n int64
		for _, kb := range c.before {
			n += lg(int64(kb.size))
		}
		return n + streamEntries(c.reply)
	}, "xread", "xreadgroup")
	add("O(N) with N the entries returned", returned, "xclaim", "xpending", "xinfo|consumers", "xinfo|groups")
	add("O(N) with N the entries returned", func(c *workCall) int64 {
		if len(c.reply.Elems) > 1 {
			return 1 + int64(len(c.reply.Elems[1].Elems))
		}
		return 1
	}, "xautoclaim")
	add("O(1), O(N) with FULL", func(c *workCall) int64 {
		if hasWord(c.argv[3:], "FULL") {
			return c.sizeBefore(2)
		}
		return 1
	}, "xinfo|stream")
	return m
}

// lg is the depth of a descent into a sorted set (or a radix tree) of n
// elements: ceil(log2(n+1)), 0 for an empty one.
func lg(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return int64(bits.Len64(uint64(n)))
}

// returned is the length of the reply: an array's elements, a map's pairs.
func returned(c *workCall) int64 { return returnedOf(c.reply, -1) }

// returnedOf is the length of r, or of its element i when i >= 0.
func returnedOf(r Reply, i int) int64 {
	if i >= 0 {
		if i >= len(r.Elems) {
			return 0
		}
		r = r.Elems[i]
	}
	if r.Kind == KindMap {
		return int64(len(r.Elems) / 2)
	}
	return int64(len(r.Elems))
}

// returnedPairs is returned for a command whose option word doubles a flat
// reply (a member and its score or value).
func returnedPairs(word string) func(c *workCall) int64 {
	return func(c *workCall) int64 {
		n := returned(c)
		if c.reply.Kind == KindArray && len(c.reply.Elems) > 0 && c.reply.Elems[0].Kind != KindArray && hasWord(c.argv[2:], word) {
			n /= 2
		}
		return n
	}
}

// args counts the arguments from index from on, step at a time: one per
// key, field or member named.
func args(from, step int) func(c *workCall) int64 {
	return func(c *workCall) int64 {
		if len(c.argv) <= from {
			return 0
		}
		return int64((len(c.argv) - from + step - 1) / step)
	}
}

// popped counts the elements the key at argv[pos] lost.
func popped(pos int) func(c *workCall) int64 {
	return func(c *workCall) int64 { return c.sizeBefore(pos) - c.sizeAfter(pos) }
}

// poppedAll counts the elements every key lost, plus one per key looked at.
func poppedAll(c *workCall) int64 {
	var n int64
	for _, kb := range c.before {
		n += 1 + int64(kb.size) - c.sizeAfter(kb.pos)
	}
	return n
}

func maxBefore(c *workCall) int64 {
	var n int64
	for _, kb := range c.before {
		n = max(n, int64(kb.size))
	}
	return n
}

// sumBefore adds the sizes of the keys from argv[from] on.
func sumBefore(c *workCall, from int) int64 {
	var n int64
	for _, kb := range c.before {
		if kb.pos >= from {
			n += int64(kb.size)
		}
	}
	return n
}

// smallestTimesCount is the smallest key from argv[from] on times the keys.
func smallestTimesCount(c *workCall, from int) int64 {
	var small, k int64 = -1, 0
	for _, kb := range c.before {
		if kb.pos < from {
			continue
		}
		k++
		if small < 0 || int64(kb.size) < small {
			small = int64(kb.size)
		}
	}
	return max(small, 0) * k
}

// walk is how many list elements Redis walks to reach index s of a list
// of n elements, from the nearer end.
func walk(s string, n int64) int64 {
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return 1
	}
	if i < 0 {
		i += n
	}
	i = min(max(i, 0), n-1)
	return min(i, n-1-i) + 1
}

// hasWord reports whether argv holds word, in any case.
func hasWord(argv []string, word string) bool {
	for _, a := range argv {
		if strings.EqualFold(a, word) {
			return true
		}
	}
	return false
}

// scanCount is a SCAN-family call's COUNT (default 10), options from argv[from].
func scanCount(argv []string, from int) int64 {
	for i := from; i+1 < len(argv); i++ {
		if strings.EqualFold(argv[i], "COUNT") {
			if n, err := strconv.ParseInt(argv[i+1], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 10
}

// collectionScan is HSCAN, SSCAN and ZSCAN: a small encoding answers with
// all its elements at once, a hash table visits about COUNT of them.
func collectionScan(c *workCall) int64 {
	n := c.sizeBefore(1)
	if !c.bigBefore(1) {
		return n
	}
	got := returnedOf(c.reply, 1)
	if !strings.EqualFold(c.argv[0], "sscan") {
		got /= 2 // field and value, member and score
	}
	return min(n, max(scanCount(c.argv, 3), got))
}

// zrangeCost is the ZRANGE family: the descent, the members returned, and
// the members a LIMIT offset skips.
func zrangeCost(c *workCall) int64 {
	m := int64(len(c.reply.Elems))
	if len(c.reply.Elems) > 0 && c.reply.Elems[0].Kind != KindArray && hasWord(c.argv[4:], "WITHSCORES") {
		m /= 2
	}
	return lg(c.sizeBefore(1)) + m + limitOffset(c.argv)
}

// limitOffset is the offset of a LIMIT offset count option.
func limitOffset(argv []string) int64 {
	for i := 2; i+2 < len(argv); i++ {
		if strings.EqualFold(argv[i], "LIMIT") {
			if n, err := strconv.ParseInt(argv[i+1], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// zaddMembers counts ZADD's score-member pairs after its option words.
func zaddMembers(argv []string) int64 {
	return int64(len(argv)-skipWords(argv, 2, "NX", "XX", "GT", "LT", "CH", "INCR")) / 2
}

// geoaddMembers counts GEOADD's longitude-latitude-member triples.
func geoaddMembers(argv []string) int64 {
	return int64(len(argv)-skipWords(argv, 2, "NX", "XX", "CH")) / 3
}

// streamEntries counts the entries of an XREAD or XREADGROUP reply: a map
// (RESP3) or an array (RESP2) of stream name and entries.
func streamEntries(r Reply) int64 {
	var n int64
	switch r.Kind {
	case KindMap:
		for i := 1; i < len(r.Elems); i += 2 {
			n += int64(len(r.Elems[i].Elems))
		}
	case KindArray:
		for _, s := range r.Elems {
			if len(s.Elems) == 2 {
				n += int64(len(s.Elems[1].Elems))
			}
		}
	}
	return n
}

// skipWords is the index of the first argument from i on that is none of words.
func skipWords(argv []string, i int, words ...string) int {
	for i < len(argv) && hasWord(words, argv[i]) {
		i++
	}
	return i
}
