package simulate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redlua/redlua/internal/cmdtable"
)

// The server commands a script may call. Those that describe the server
// (INFO, MEMORY, LASTSAVE, COMMAND) answer in Redis 7.0's format with
// values that describe the simulator: see the package documentation.

func init() {
	commands["time"] = cmdTime
	commands["ping"] = cmdPing
	commands["echo"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return bulkReply(a[1]) }
	commands["dbsize"] = func(ks *Keyspace, cc *CallContext, a []string) Reply {
		keys, _, _ := ks.liveKeys(cc.Now)
		return intReply(keys)
	}
	commands["flushall"] = cmdFlush(true)
	commands["lastsave"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return intReply(ks.started / 1000) }
	commands["lolwut"] = cmdLolwut
	commands["info"] = cmdInfo
	commands["memory"] = cmdMemory
	registerSubcommands("memory", cmdMemory)
	commands["command"] = cmdCommand
	registerSubcommands("command", cmdCommand)
	// FUNCTION and SCRIPT from a client are the Server's (scriptCommand);
	// these entries answer a script, which may call only their HELP.
	for container := range helpTexts {
		commands[container] = cmdServerContainer
		commands[container+"|help"] = cmdServerContainer
	}
	commands["slowlog|get"] = cmdServerContainer
	commands["slowlog|len"] = cmdServerContainer
	commands["slowlog|reset"] = cmdServerContainer
}

// cmdTime reads the clock, not the frozen script time, as Redis's TIME does.
func cmdTime(ks *Keyspace, cc *CallContext, a []string) Reply {
	now := cc.Now
	if cc.Clock != nil {
		now = cc.Clock.Now()
	}
	us := now.UnixMicro()
	return arrayReply([]Reply{bulkReply(strconv.FormatInt(us/1e6, 10)), bulkReply(strconv.FormatInt(us%1e6, 10))})
}

func cmdPing(ks *Keyspace, cc *CallContext, a []string) Reply {
	switch len(a) {
	case 1:
		return statusReply("PONG")
	case 2:
		return bulkReply(a[1])
	}
	return errorReply(fmt.Sprintf(errWrongArgs, "ping"))
}

// cmdLolwut answers as Redis 7.0 does by default. The computer art of
// VERSION 5 and 6 is random in Redis; the simulator prints only the
// version line that closes it.
func cmdLolwut(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) >= 3 && strings.EqualFold(a[1], "version") {
		if _, ok := parseInt(a[2]); !ok {
			return errorReply(errNotInteger)
		}
	}
	return Reply{Kind: KindVerbatim, Str: "Redis ver. " + ks.profile.lolwutVersion() + "\n"}
}

// serverRunID and replicationID are fixed: the simulator is one server
// whose identity no test should depend on.
const (
	serverRunID   = "5e1f0a7ed5e1f0a7ed5e1f0a7ed5e1f0a7ed5e1f"
	replicationID = "7ed5e1f0a7ed5e1f0a7ed5e1f0a7ed5e1f0a7ed5"
	// startupMemory is used_memory of a fresh redis-server 7.0 (about 850 KiB).
	startupMemory = 876184
)

// infoSections are INFO's sections in Redis's order; the default ones
// are those "INFO" and "INFO default" print.
var infoSections = []struct {
	name, title string
	def         bool
}{
	{"server", "Server", true}, {"clients", "Clients", true}, {"memory", "Memory", true},
	{"persistence", "Persistence", true}, {"stats", "Stats", true}, {"replication", "Replication", true},
	{"cpu", "CPU", true}, {"modules", "Modules", true}, {"commandstats", "Commandstats", false},
	{"errorstats", "Errorstats", true}, {"latencystats", "Latencystats", false},
	{"cluster", "Cluster", true}, {"keyspace", "Keyspace", true},
}

// cmdInfo is INFO [section ...]: Redis's sections and the fields users
// read (redis_version, used_memory, role, keyspace lines), with values
// that describe the simulator; counters it does not keep are 0.
func cmdInfo(ks *Keyspace, cc *CallContext, a []string) Reply {
	want := map[string]bool{}
	all, everything := false, false
	if len(a) == 1 {
		want["default"] = true
	}
	for _, s := range a[1:] {
		s = strings.ToLower(s)
		switch s {
		case "all":
			all = true
		case "everything":
			everything = true
		}
		want[s] = true
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !(want[sec.name] || everything || all || want["default"] && sec.def) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + sec.title + "\r\n")
		for _, f := range infoFields(ks, cc, sec.name) {
			b.WriteString(f[0] + ":" + f[1] + "\r\n")
		}
	}
	return Reply{Kind: KindVerbatim, Str: b.String()}
}

func infoFields(ks *Keyspace, cc *CallContext, section string) [][2]string {
	now := cc.Now
	if cc.Clock != nil {
		now = cc.Clock.Now()
	}
	up := max(now.UnixMilli()-ks.started, 0) / 1000
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	switch section {
	case "server":
		return ks.profile.infoServer([][2]string{{"redis_version", ks.profile.facts().redisVersion}, {"redis_git_sha1", "00000000"}, {"redis_git_dirty", "0"},
			{"redis_build_id", "0"}, {"redis_mode", "standalone"}, {"os", "simulate"}, {"arch_bits", "64"},
			{"monotonic_clock", "simulate"}, {"multiplexing_api", "none"}, {"atomicvar_api", "c11-builtin"}, {"gcc_version", "0.0.0"},
			{"process_id", "1"}, {"process_supervised", "no"}, {"run_id", serverRunID}, {"tcp_port", "0"},
			{"server_time_usec", i(now.UnixMicro())}, {"uptime_in_seconds", i(up)}, {"uptime_in_days", i(up / 86400)},
			{"hz", "10"}, {"configured_hz", "10"}, {"lru_clock", i(now.Unix() & (1<<24 - 1))}, {"executable", ""}, {"config_file", ""},
			{"io_threads_active", "0"}})
	case "clients":
		return [][2]string{{"connected_clients", "1"}, {"cluster_connections", "0"}, {"maxclients", "10000"},
			{"client_recent_max_input_buffer", "0"}, {"client_recent_max_output_buffer", "0"}, {"blocked_clients", "0"},
			{"tracking_clients", "0"}, {"clients_in_timeout_table", "0"}}
	case "memory":
		data := ks.datasetBytes()
		used := startupMemory + data
		return [][2]string{{"used_memory", i(used)}, {"used_memory_human", bytesToHuman(used)}, {"used_memory_rss", i(used)},
			{"used_memory_rss_human", bytesToHuman(used)}, {"used_memory_peak", i(used)}, {"used_memory_peak_human", bytesToHuman(used)},
			{"used_memory_peak_perc", "100.00%"}, {"used_memory_overhead", i(startupMemory)}, {"used_memory_startup", i(startupMemory)},
			{"used_memory_dataset", i(data)}, {"used_memory_dataset_perc", fmt.Sprintf("%.2f%%", 100*float64(data)/float64(used))},
			{"allocator_allocated", i(used)}, {"allocator_active", i(used)}, {"allocator_resident", i(used)},
			{"total_system_memory", "0"}, {"total_system_memory_human", "0B"}, {"maxmemory", "0"}, {"maxmemory_human", "0B"},
			{"maxmemory_policy", "noeviction"}, {"mem_fragmentation_ratio", "1.00"}, {"mem_fragmentation_bytes", "0"},
			{"mem_allocator", "simulate"}, {"active_defrag_running", "0"}, {"lazyfree_pending_objects", "0"}, {"lazyfreed_objects", "0"}}
	case "persistence":
		return [][2]string{{"loading", "0"}, {"async_loading", "0"}, {"rdb_changes_since_last_save", "0"}, {"rdb_bgsave_in_progress", "0"},
			{"rdb_last_save_time", i(ks.started / 1000)}, {"rdb_last_bgsave_status", "ok"}, {"rdb_last_bgsave_time_sec", "-1"},
			{"rdb_current_bgsave_time_sec", "-1"}, {"rdb_saves", "0"}, {"aof_enabled", "0"}, {"aof_rewrite_in_progress", "0"},
			{"aof_rewrite_scheduled", "0"}, {"aof_last_rewrite_time_sec", "-1"}, {"aof_current_rewrite_time_sec", "-1"},
			{"aof_last_bgrewrite_status", "ok"}, {"aof_rewrites", "0"}, {"aof_last_write_status", "ok"}}
	case "stats":
		return [][2]string{{"total_connections_received", "1"}, {"total_commands_processed", "0"}, {"instantaneous_ops_per_sec", "0"},
			{"rejected_connections", "0"}, {"expired_keys", "0"}, {"evicted_keys", "0"}, {"keyspace_hits", "0"}, {"keyspace_misses", "0"},
			{"pubsub_channels", "0"}, {"pubsub_patterns", "0"}, {"pubsubshard_channels", "0"}, {"total_error_replies", "0"}}
	case "replication":
		return [][2]string{{"role", "master"}, {"connected_slaves", "0"}, {"master_failover_state", "no-failover"},
			{"master_replid", replicationID}, {"master_replid2", strings.Repeat("0", 40)}, {"master_repl_offset", "0"},
			{"second_repl_offset", "-1"}, {"repl_backlog_active", "0"}, {"repl_backlog_size", "1048576"},
			{"repl_backlog_first_byte_offset", "0"}, {"repl_backlog_histlen", "0"}}
	case "cpu":
		return [][2]string{{"used_cpu_sys", "0.000000"}, {"used_cpu_user", "0.000000"}, {"used_cpu_sys_children", "0.000000"},
			{"used_cpu_user_children", "0.000000"}, {"used_cpu_sys_main_thread", "0.000000"}, {"used_cpu_user_main_thread", "0.000000"}}
	case "cluster":
		return [][2]string{{"cluster_enabled", "0"}}
	case "keyspace":
		return ks.keyspaceInfo(cc.Now)
	}
	return nil
}

// keyspaceInfo is INFO's keyspace line: live keys, those with a TTL, and
// their average remaining TTL in milliseconds.
func (ks *Keyspace) keyspaceInfo(now time.Time) [][2]string {
	keys, expires, ttlSum := ks.liveKeys(now)
	if keys == 0 {
		return nil
	}
	avg := int64(0)
	if expires > 0 {
		avg = ttlSum / expires
	}
	return [][2]string{{"db0", fmt.Sprintf("keys=%d,expires=%d,avg_ttl=%d", keys, expires, avg)}}
}

// liveKeys counts the live keys and those with a TTL, and sums the TTLs
// (ms); it deletes the expired keys it meets, as a lookup does.
func (ks *Keyspace) liveKeys(now time.Time) (keys, expires, ttlSum int64) {
	for k := range ks.keys {
		v := ks.peek(now, k)
		if v == nil {
			continue
		}
		keys++
		if v.exp != 0 {
			expires++
			ttlSum += pttl(now, v)
		}
	}
	return keys, expires, ttlSum
}

// bytesToHuman is Redis's bytesToHuman.
func bytesToHuman(n int64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.2fK", f/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.2fM", f/(1024*1024))
	case n < 1024*1024*1024*1024:
		return fmt.Sprintf("%.2fG", f/(1024*1024*1024))
	}
	return fmt.Sprintf("%.2fT", f/(1024*1024*1024*1024))
}

func cmdMemory(ks *Keyspace, cc *CallContext, a []string) Reply {
	sub, bad := subcommand(a)
	if bad != nil {
		return *bad
	}
	switch sub {
	case "help":
		return ks.helpReply(a,
			"DOCTOR",
			"    Return memory problems reports.",
			"MALLOC-STATS",
			"    Return internal statistics report from the memory allocator.",
			"PURGE",
			"    Attempt to purge dirty pages for reclamation by the allocator.",
			"STATS",
			"    Return information about the memory usage of the server.",
			"USAGE <key> [SAMPLES <count>]",
			"    Return memory in bytes used by <key> and its value. Nested values are",
			"    sampled up to <count> times (default: 5, 0 means sample all).")
	case "usage":
		samples := int64(5)
		for j := 3; j < len(a); j++ {
			if !strings.EqualFold(a[j], "samples") || j+1 >= len(a) {
				return errorReply(errSyntax)
			}
			n, ok := parseInt(a[j+1])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n < 0 {
				return errorReply(errSyntax)
			}
			samples = n
			if n == 0 {
				samples = math.MaxInt64
			}
			j++
		}
		v := ks.keys[a[2]] // Redis reads the dictionary: a key past its TTL still counts
		if v == nil {
			return nilReply()
		}
		return intReply(memoryUsage(a[2], v, samples))
	case "stats":
		data := ks.datasetBytes()
		used := startupMemory + data
		keys := int64(len(ks.keys))
		perKey := int64(0)
		if keys > 0 {
			perKey = (used - startupMemory) / keys
		}
		// 7.4 (and Valkey 8) keeps the keyspace in a kvstore: db.N loses slot-to-keys,
		// and the store's lookup table, rehashing and muzzy pages count.
		db := mapReply("overhead.hashtable.main", intReply(0), "overhead.hashtable.expires", intReply(0), "overhead.hashtable.slot-to-keys", intReply(0))
		if ks.profile.kvstore() {
			db = mapReply("overhead.hashtable.main", intReply(0), "overhead.hashtable.expires", intReply(0))
		}
		kv := []any{"peak.allocated", intReply(used), "total.allocated", intReply(used), "startup.allocated", intReply(startupMemory),
			"replication.backlog", intReply(0), "clients.slaves", intReply(0), "clients.normal", intReply(0), "cluster.links", intReply(0),
			"aof.buffer", intReply(0), "lua.caches", intReply(0), "functions.caches", intReply(0), "db.0", db}
		if ks.profile.kvstore() {
			kv = append(kv, "overhead.db.hashtable.lut", intReply(0), "overhead.db.hashtable.rehashing", intReply(0))
		}
		kv = append(kv, "overhead.total", intReply(startupMemory))
		if ks.profile.kvstore() {
			kv = append(kv, "db.dict.rehashing.count", intReply(0))
		}
		kv = append(kv, "keys.count", intReply(keys), "keys.bytes-per-key", intReply(perKey),
			"dataset.bytes", intReply(data), "dataset.percentage", doubleReply(100*float64(data)/float64(used)), "peak.percentage", doubleReply(100),
			"allocator.allocated", intReply(used), "allocator.active", intReply(used), "allocator.resident", intReply(used))
		if ks.profile.kvstore() {
			kv = append(kv, "allocator.muzzy", intReply(0))
		}
		kv = append(kv, "allocator-fragmentation.ratio", doubleReply(1), "allocator-fragmentation.bytes", intReply(0),
			"allocator-rss.ratio", doubleReply(1), "allocator-rss.bytes", intReply(0), "rss-overhead.ratio", doubleReply(1),
			"rss-overhead.bytes", intReply(0), "fragmentation", doubleReply(1), "fragmentation.bytes", intReply(0))
		return mapReply(kv...)
	case "malloc-stats":
		return bulkReply("Stats not supported for the current allocator")
	case "doctor":
		if startupMemory+ks.datasetBytes() < 5*1024*1024 {
			return Reply{Kind: KindVerbatim, Str: "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"}
		}
		return Reply{Kind: KindVerbatim, Str: "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"}
	case "purge":
		return okReply()
	}
	return subcommandSyntax(a)
}

// datasetBytes is the estimated memory of every key.
func (ks *Keyspace) datasetBytes() int64 {
	var n int64
	for k, v := range ks.keys {
		n += memoryUsage(k, v, 5)
	}
	return n
}

// mallocSize rounds an allocation up to jemalloc's size class, which
// Redis's memory accounting reports.
func mallocSize(n int64) int64 {
	if n <= 8 {
		return 8
	}
	if n <= 128 {
		return (n + 15) / 16 * 16
	}
	step := int64(32) // four classes per doubling above 128
	for limit := int64(256); n > limit; limit *= 2 {
		step *= 2
	}
	return (n + step - 1) / step * step
}

// sdsSize is the allocation of an sds string of n bytes.
func sdsSize(n int) int64 {
	hdr := 3
	switch {
	case n < 32:
		hdr = 1
	case n >= 256 && n < 65536:
		hdr = 5
	case n >= 65536:
		hdr = 9
	}
	return mallocSize(int64(hdr + n + 1))
}

// listpackSize is the size of a listpack holding these elements.
func listpackSize(elems []string) int64 {
	n := 6 + 1
	for _, e := range elems {
		n += lpStrSize(e)
	}
	return mallocSize(int64(n))
}

// memoryUsage estimates MEMORY USAGE as Redis's objectComputeSize does
// for each encoding (object header, listpack or hash table, elements),
// plus the key and its dictionary entry. Small strings and listpacks come
// out as Redis reports them; large encodings are close, not exact.
func memoryUsage(key string, v *value, samples int64) int64 {
	const robj, dictEntry, dictHeader = 16, 24, 56
	n := int64(dictEntry) + sdsSize(len(key))
	table := func(entries int) int64 {
		buckets := int64(4)
		for buckets < int64(entries) {
			buckets *= 2
		}
		return dictHeader + 8*buckets + int64(entries)*dictEntry
	}
	switch v.kind {
	case kindString:
		switch v.encoding() {
		case "int":
			return n + robj
		case "embstr":
			return n + mallocSize(int64(robj+3+len(v.str)+1))
		}
		return n + robj + sdsSize(len(v.str))
	case kindHash:
		if v.encoding() == "listpack" {
			elems := make([]string, 0, 2*len(v.fields))
			for _, f := range v.fields {
				elems = append(elems, f, v.hash[f])
			}
			return n + robj + listpackSize(elems)
		}
		n += robj + table(len(v.hash))
		for f, x := range v.hash {
			n += sdsSize(len(f)) + sdsSize(len(x))
		}
		return n
	case kindList:
		n += robj + mallocSize(40) // quicklist
		for i := 0; i < len(v.list); i += 128 {
			n += 32 + listpackSize(v.list[i:min(i+128, len(v.list))])
		}
		return n
	case kindSet:
		if v.encoding() == "intset" {
			width := int64(2)
			for m := range v.set {
				x, _ := parseInt(m)
				switch {
				case x < math.MinInt32 || x > math.MaxInt32:
					width = 8
				case (x < math.MinInt16 || x > math.MaxInt16) && width < 4:
					width = 4
				}
			}
			return n + robj + mallocSize(8+width*int64(len(v.set)))
		}
		n += robj + table(len(v.set))
		for m := range v.set {
			n += sdsSize(len(m))
		}
		return n
	case kindZSet:
		if v.encoding() == "listpack" {
			elems := make([]string, 0, 2*len(v.zset))
			for m, s := range v.zset {
				elems = append(elems, m, formatDouble(s))
			}
			return n + robj + listpackSize(elems)
		}
		n += robj + 16 + table(len(v.zset)) + 32 // zset, its dict and the skiplist header
		for m := range v.zset {
			n += sdsSize(len(m)) + mallocSize(32+16) // the skiplist node and its levels
		}
		return n
	case kindStream:
		st := v.stream
		n += robj + 80 + raxMemory(st.radixNodes(), len(st.nodes))
		// Listpacks: Redis preallocates a node's 4096 bytes and shrinks a
		// node to fit once the next one starts; it averages the first
		// samples nodes for all but the last.
		lpSize := func(i int) int64 {
			b := mallocSize(int64(st.nodes[i].bytes))
			if i == len(st.nodes)-1 {
				b = max(b, streamNodeMaxBytes)
			}
			return b
		}
		var sum int64
		k := 0
		for ; k < len(st.nodes) && int64(k) < samples; k++ {
			sum += lpSize(k)
		}
		if len(st.nodes) <= k {
			n += sum
		} else {
			n += sum/int64(k)*int64(len(st.nodes)-1) + lpSize(len(st.nodes)-1)
		}
		for _, g := range st.groups {
			n += 40 + raxMemory(pelRaxNodes(g.pel, nil), len(g.pel)) + 24*int64(len(g.pel))
			for _, c := range g.consumers {
				n += 24 + int64(len(c.name)) + raxMemory(pelRaxNodes(g.pel, c), c.pending)
			}
		}
		return n
	}
	return n
}

// raxMemory is streamRadixTreeMemoryUsage: 16 bytes a key, a node header
// and 30 words a node.
func raxMemory(nodes int64, keys int) int64 { return int64(keys)*16 + nodes*(4+8*30) }

// pelRaxNodes counts the radix tree nodes of a PEL, or of one consumer's.
func pelRaxNodes(pel []*pendingEntry, only *streamConsumer) int64 {
	keys := make([][16]byte, 0, len(pel))
	for _, p := range pel {
		if only == nil || p.consumer == only {
			keys = append(keys, p.id.key())
		}
	}
	return raxCount(keys, 0)
}

// cmdCommand is COMMAND and its subcommands, answered from the command
// table the simulator shares with redis-server 7.0.15. Lists come in
// name order (Redis's is its hash table's); tips and documentation are
// not in the table: COMMAND INFO lists no tips and COMMAND DOCS no fields.
func cmdCommand(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) == 1 {
		return arrayReply(commandInfos(topCommands()))
	}
	if ks.profile.getKeysOfBareCommand(a) {
		return commandGetKeys(ks.profile, a[2:], strings.EqualFold(a[1], "getkeysandflags"))
	}
	sub, bad := subcommand(a)
	if bad != nil {
		return *bad
	}
	switch sub {
	case "help":
		return ks.helpReply(a,
			"(no subcommand)",
			"    Return details about all Redis commands.",
			"COUNT",
			"    Return the total number of commands in this Redis server.",
			"LIST",
			"    Return a list of all commands in this Redis server.",
			"INFO [<command-name> ...]",
			"    Return details about multiple Redis commands.",
			"    If no command names are given, documentation details for all",
			"    commands are returned.",
			"DOCS [<command-name> ...]",
			"    Return documentation details about multiple Redis commands.",
			"    If no command names are given, documentation details for all",
			"    commands are returned.",
			"GETKEYS <full-command>",
			"    Return the keys from a full Redis command.",
			"GETKEYSANDFLAGS <full-command>",
			"    Return the keys and the access flags from a full Redis command.")
	case "count":
		return intReply(ks.profile.commandCount(int64(len(topCommands()))))
	case "list":
		return commandList(a)
	case "info":
		if len(a) == 2 {
			return arrayReply(commandInfos(topCommands()))
		}
		out := make([]Reply, 0, len(a)-2)
		for _, name := range a[2:] {
			if c, ok := cmdtable.Lookup(name); ok {
				out = append(out, commandInfo(c))
			} else {
				out = append(out, nilReply())
			}
		}
		return arrayReply(out)
	case "docs":
		var out []Reply
		names := a[2:]
		if len(a) == 2 {
			for _, c := range topCommands() {
				names = append(names, c.Name)
			}
		}
		for _, name := range names {
			if c, ok := cmdtable.Lookup(name); ok {
				out = append(out, bulkReply(c.Name), Reply{Kind: KindMap})
			}
		}
		return Reply{Kind: KindMap, Elems: out}
	case "getkeys", "getkeysandflags":
		return commandGetKeys(ks.profile, a[2:], sub == "getkeysandflags")
	}
	return subcommandSyntax(a)
}

func topCommands() []*cmdtable.Command {
	var out []*cmdtable.Command
	for _, c := range cmdtable.All() {
		if c.Container == "" {
			c := c
			out = append(out, &c)
		}
	}
	return out
}

func commandInfos(cs []*cmdtable.Command) []Reply {
	out := make([]Reply, len(cs))
	for i, c := range cs {
		out[i] = commandInfo(c)
	}
	return out
}

// commandKeywords are the keywords of the key specs that find keys after
// a keyword, which the command table leaves out: command name, spec index.
var commandKeywords = map[string][]struct {
	keyword   string
	startFrom int
}{
	"xread":             {{"STREAMS", 1}},
	"xreadgroup":        {{"STREAMS", 4}},
	"migrate":           {{"KEYS", -2}},
	"georadius":         {{"STORE", 6}, {"STOREDIST", 6}},
	"georadiusbymember": {{"STORE", 5}, {"STOREDIST", 5}},
}

// commandInfo is one command in COMMAND INFO's form.
func commandInfo(c *cmdtable.Command) Reply {
	status := func(xs []string, prefix string) Reply {
		out := make([]Reply, len(xs))
		for i, x := range xs {
			out[i] = statusReply(prefix + x)
		}
		return Reply{Kind: KindSet, Elems: out}
	}
	specs := make([]Reply, 0, len(c.KeySpecs))
	keywords := commandKeywords[c.Name]
	nth := 0
	for _, s := range c.KeySpecs {
		begin := mapReply("type", bulkReply("index"), "spec", mapReply("index", intReply(int64(s.BeginIndex))))
		if s.BeginIndex < 0 {
			begin = mapReply("type", bulkReply("unknown"), "spec", Reply{Kind: KindMap})
			if nth < len(keywords) && s.Find != "unknown" {
				begin = mapReply("type", bulkReply("keyword"), "spec", mapReply("keyword", bulkReply(keywords[nth].keyword), "startfrom", intReply(int64(keywords[nth].startFrom))))
				nth++
			}
		}
		var find Reply
		switch s.Find {
		case "range":
			find = mapReply("type", bulkReply("range"), "spec", mapReply("lastkey", intReply(int64(s.LastKey)), "keystep", intReply(int64(s.KeyStep)), "limit", intReply(int64(s.Limit))))
		case "keynum":
			find = mapReply("type", bulkReply("keynum"), "spec", mapReply("keynumidx", intReply(int64(s.KeyNumIndex)), "firstkey", intReply(int64(s.FirstKey)), "keystep", intReply(int64(s.KeyNumStep))))
		default:
			find = mapReply("type", bulkReply("unknown"), "spec", Reply{Kind: KindMap})
		}
		specs = append(specs, mapReply("flags", status(s.Flags, ""), "begin_search", begin, "find_keys", find))
	}
	var subs []Reply
	for _, sc := range cmdtable.All() {
		if sc.Container == c.Name {
			sc := sc
			subs = append(subs, commandInfo(&sc))
		}
	}
	return arrayReply([]Reply{bulkReply(c.Name), intReply(int64(c.Arity)), status(c.Flags, ""), intReply(int64(c.FirstKey)),
		intReply(int64(c.LastKey)), intReply(int64(c.KeyStep)), status(c.Categories, "@"), {Kind: KindSet}, arrayReply(specs), arrayReply(subs)})
}

// commandList is COMMAND LIST [FILTERBY MODULE m|ACLCAT cat|PATTERN p].
func commandList(a []string) Reply {
	match := func(c *cmdtable.Command) bool { return true }
	for i := 2; i < len(a); i++ {
		if !strings.EqualFold(a[i], "filterby") || len(a)-1-i != 2 {
			return errorReply(errSyntax)
		}
		arg := a[i+2]
		switch strings.ToLower(a[i+1]) {
		case "module":
			match = func(c *cmdtable.Command) bool { return false }
		case "aclcat":
			match = func(c *cmdtable.Command) bool {
				for _, cat := range c.Categories {
					if strings.EqualFold(cat, arg) {
						return true
					}
				}
				return false
			}
		case "pattern":
			match = func(c *cmdtable.Command) bool { return globMatch(strings.ToLower(arg), c.Name) }
		default:
			return errorReply(errSyntax)
		}
		i += 2
	}
	out := []Reply{}
	for _, c := range cmdtable.All() {
		if match(&c) {
			out = append(out, bulkReply(c.Name))
		}
	}
	return arrayReply(out)
}

// commandGetKeys is COMMAND GETKEYS and GETKEYSANDFLAGS for argv, by
// the line's table (7.4 knows HEXPIRE).
func commandGetKeys(p Profile, argv []string, withFlags bool) Reply {
	c, ok := p.lookupCommand(argv)
	switch {
	case !ok:
		return errorReply("ERR Invalid command specified")
	case c.FirstKey == 0 && len(c.KeySpecs) == 0:
		return errorReply("ERR The command has no key arguments")
	case !c.ArityOK(len(argv)):
		return errorReply("ERR Invalid number of arguments specified for command")
	}
	type key struct {
		pos   int
		flags []string
	}
	var keys []key
	if c.Name == "sort" || c.Name == "sort_ro" {
		return sortGetKeys(argv, withFlags)
	}
	keywords := commandKeywords[c.Name]
	nth := 0 // keyword specs seen
	for _, s := range c.KeySpecs {
		start := s.BeginIndex
		if start < 0 {
			start = -1
			if nth < len(keywords) {
				kw := keywords[nth]
				nth++
				if kw.startFrom > 0 {
					for i := kw.startFrom; i < len(argv); i++ {
						if strings.EqualFold(argv[i], kw.keyword) {
							start = i + 1
							break
						}
					}
				} else {
					for i := len(argv) + kw.startFrom; i > 0; i-- {
						if strings.EqualFold(argv[i], kw.keyword) {
							start = i + 1
							break
						}
					}
				}
			}
			if start < 0 || start >= len(argv) {
				continue
			}
		}
		if start >= len(argv) {
			continue
		}
		switch s.Find {
		case "range":
			last := start + s.LastKey
			if s.LastKey < 0 {
				last = len(argv) + s.LastKey
				if s.Limit > 1 {
					last = start + (len(argv)-start)/s.Limit - 1
				}
			}
			step := max(s.KeyStep, 1)
			for i := start; i <= last && i < len(argv); i += step {
				keys = append(keys, key{i, s.Flags})
			}
		case "keynum":
			n, ok := parseInt(argv[min(start+s.KeyNumIndex, len(argv)-1)])
			if !ok || n < 0 {
				continue
			}
			first := start + s.FirstKey
			step := max(s.KeyNumStep, 1)
			for i, k := first, int64(0); k < n && i < len(argv); i, k = i+step, k+1 {
				keys = append(keys, key{i, s.Flags})
			}
		}
	}
	if len(keys) > 0 {
		switch c.Name {
		case "set", "bitfield":
			keys[0].flags = variableKeyFlags(argv)
		}
	}
	// MIGRATE's KEYS option replaces its key argument.
	if c.Name == "migrate" && len(keys) > 1 {
		keys = keys[1:]
	}
	if len(keys) == 0 {
		if c.HasFlag("no_mandatory_keys") {
			return arrayReply([]Reply{})
		}
		return errorReply("ERR Invalid arguments specified for command")
	}
	out := make([]Reply, len(keys))
	for i, k := range keys {
		if !withFlags {
			out[i] = bulkReply(argv[k.pos])
			continue
		}
		flags := make([]Reply, len(k.flags))
		for j, f := range k.flags {
			flags[j] = statusReply(f)
		}
		out[i] = arrayReply([]Reply{bulkReply(argv[k.pos]), {Kind: KindSet, Elems: flags}})
	}
	return arrayReply(out)
}

// sortGetKeys is Redis's sortGetKeys: the key, and the last STORE's
// destination (SORT_RO has none), skipping LIMIT's, BY's and GET's
// arguments.
func sortGetKeys(argv []string, withFlags bool) Reply {
	keys := []Reply{bulkReply(argv[1])}
	flags := []string{"RO", "access"}
	store := -1
	for i := 2; i < len(argv); i++ {
		switch strings.ToLower(argv[i]) {
		case "limit":
			i += 2
		case "get", "by":
			i++
		case "store":
			if i+1 < len(argv) {
				store = i + 1
			}
			i++
		}
	}
	if withFlags {
		keys[0] = arrayReply([]Reply{keys[0], {Kind: KindSet, Elems: []Reply{statusReply(flags[0]), statusReply(flags[1])}}})
	}
	if store > 0 && strings.EqualFold(argv[0], "sort") {
		k := bulkReply(argv[store])
		if withFlags {
			k = arrayReply([]Reply{k, {Kind: KindSet, Elems: []Reply{statusReply("OW"), statusReply("update")}}})
		}
		keys = append(keys, k)
	}
	return arrayReply(keys)
}

// variableKeyFlags are the key flags of SET and BITFIELD, which depend on
// the options (Redis's setGetKeys and bitfieldGetKeys).
func variableKeyFlags(argv []string) []string {
	if strings.EqualFold(argv[0], "set") {
		for _, a := range argv[3:] {
			if strings.EqualFold(a, "get") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	}
	for i := 2; i < len(argv); i++ {
		rem := len(argv) - i - 1
		switch a := strings.ToLower(argv[i]); {
		case a == "get" && rem >= 2:
			i += 2
		case a == "overflow" && rem >= 1:
			i++
		default:
			return []string{"RW", "access", "update"}
		}
	}
	return []string{"RO", "access"}
}

// cmdServerContainer answers HELP of the containers in helpTexts, and
// SLOWLOG, whose log stays empty: the simulator has no slow commands to
// record. Their other subcommands (noscript ones a script cannot reach)
// are not implemented.
func cmdServerContainer(ks *Keyspace, cc *CallContext, a []string) Reply {
	sub, bad := subcommand(a)
	if bad != nil {
		return *bad
	}
	container := strings.ToLower(a[0])
	switch {
	case sub == "help":
		return ks.helpReply(a, helpTexts[container]...)
	case container == "slowlog" && sub == "len":
		return intReply(0)
	case container == "slowlog" && sub == "reset":
		return okReply()
	case container == "slowlog" && sub == "get" && len(a) <= 3:
		if len(a) == 3 {
			if n, ok := parseInt(a[2]); !ok || n < -1 {
				return errorReply("ERR count should be greater than or equal to -1")
			}
		}
		return arrayReply([]Reply{})
	case container == "slowlog":
		return subcommandSyntax(a)
	}
	return errorReply(fmt.Sprintf(errNotImplemented, container+"|"+sub))
}
