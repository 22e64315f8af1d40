// Package simulate is an offline Redis 7.0 for Lua scripts: an in-memory
// keyspace, a clock that tests can move, and Redis's scripting sandbox on
// gopher-lua, built to give the same replies and errors as redis-server.
//
// A Server runs registry scripts (Run, as EVALSHA) and ad-hoc source
// (RunSource, as EVAL), and answers direct commands (Do). Replies come back
// as *redis.Cmd values in the shape go-redis gives from a real server
// (int64, string, []any, redis.Nil, errors carrying Redis's exact text), so
// the same assertions work against both. With a VirtualClock, TTLs pass
// when the test says so:
//
//	clock := simulate.NewVirtualClock(time.Now())
//	srv := simulate.New(simulate.WithClock(clock))
//	srv.Run(ctx, acquire, []string{"{lock}"}, "owner-a", 30000)
//	clock.Advance(30 * time.Second) // the lease is gone
//
// # Server lines
//
// What the rest of this documentation describes is Redis 7.0, the default
// profile. WithServer chooses another line (Redis72, Redis74, Redis80,
// Valkey72, Valkey80): its sandbox globals, encodings, options, error
// texts, version strings and RDB version, each judged reply for reply
// against that line's server; docs/simulator.md lists what each covers and
// what still differs.
//
// # The sandbox
//
// Scripts see what Redis 7.0 gives them: the base functions Redis allows
// (print, dofile, loadfile, require, module, getfenv, setfenv, newproxy,
// os, io and debug are undefined), the table, string, math, coroutine,
// cjson, bit, struct and cmsgpack libraries, KEYS, ARGV and the redis
// table. Reading an undefined global and writing any global fail with
// Redis's texts; library tables and _G are read-only. Numbers print as Lua
// 5.1 prints them ("%.14g": tostring(0.1+0.2) is "0.3"), reach commands as
// Redis formats them ("%.17g"), and tonumber accepts what Lua 5.1 accepts.
// math.random is Redis's generator, continuing from script to script as in
// Redis 7.0 (WithSeed seeds it). goto and labels are syntax errors, as in
// Lua 5.1. A "#!lua" first line sets the script's flags; no-writes makes
// write commands fail. Errors are formatted as Redis formats them, for
// example "ERR user_script:3: Script attempted to access nonexistent global
// variable 'x' script: <sha1>, on @user_script:3.".
//
// # Key discipline
//
// By default a script may only touch keys passed in KEYS, and its KEYS must
// share one cluster slot (unless it declares allow-cross-slot-keys): the
// rules a script must follow to run on Redis Cluster. A violation fails
// the run with a *DisciplineError naming the script, line and key; it
// wraps ErrUndeclaredKey or ErrCrossSlot. WithKeyDiscipline(false) and
// WithCrossSlotCheck(false) switch the checks off.
//
// # Arguments
//
// Keys and arguments are converted as go-redis converts them: strings and
// []byte as they are, integers in decimal, floats in the shortest decimal
// form without exponent (1.5, 1e21 as "1000000000000000000000"), bool as
// "1" or "0", nil as "", time.Duration as nanoseconds, time.Time as RFC
// 3339 with nanoseconds, encoding.BinaryMarshaler through MarshalBinary.
// As with go-redis's Eval, a script's lone []string or []any argument is
// spread into several arguments, and a lone nil means none.
//
// # Tests
//
// Trace lists every command scripts ran (script, arguments, reply) and
// Logs every redis.log line. Subscribe delivers PUBLISH messages to
// in-process subscribers after the publishing script or command returns;
// SSubscribe does the same for SPUBLISH and shard channels.
// A Server is safe for concurrent use, and each script runs atomically.
// A script runs until it ends, as in Redis; a cancelable context passed to
// Run interrupts it.
//
// Tables are laid out as Lua 5.1 lays them out (array part, hash part,
// main positions from Lua's string and number hashes, rehash points,
// constructor size hints), so next and pairs visit keys in Redis's order
// and cjson.encode, cmsgpack.pack, table.foreach, unpack and the length of
// a table with holes come out byte for byte as on the server, the same on
// every run. collectgarbage() sweeps removed keys out of tables as Lua's
// full collection does, so a removed string key set again lands where it
// lands on the server. Two things Redis itself cannot reproduce are not
// copied: tables, functions and coroutines used as keys hash by memory
// address in Redis (the simulator numbers them per table), and Lua's
// incremental collector, which runs on its own in a script that allocates
// a lot, can sweep a table between a key's removal and its return there.
//
// Known differences from redis-server: runtime errors name the variable
// involved as Lua 5.1 does ("attempt to index local 't' (a nil value)")
// only when the failing instruction can be told apart on its line; syntax
// errors other than goto and labels may be worded differently; pairs(_G)
// lists the globals in another (fixed) order than Redis, whose order comes
// from its whole sandbox set-up (the library tables do match); and Lua
// 5.1's quirk of folding 1/0 to -inf inside some constant expressions is
// not copied.
//
// Values are encoded as Redis 7.0 with its default configuration encodes
// them, and OBJECT ENCODING answers the same: hashes are listpacks up to 512
// fields and 64-byte values, sets intsets (up to 512 integers) or
// hashtables, sorted sets listpacks up to 128 members and 64-byte members
// and skiplists past that (a skiplist keeps a -0 score, a listpack reads it
// back as 0), lists quicklists, strings int, embstr or raw; a conversion
// to the large encoding is never undone, as in Redis. A stream groups its
// entries in nodes of at most 100 entries and 4096 listpack bytes, which
// approximate ("~") trimming removes whole; CONFIG SET of these limits is
// not modeled. Small encodings list their elements (and answer the SCAN
// family in one call) in Redis's order. Where Redis's order is undefined (a
// hashtable's HGETALL, SMEMBERS or SCAN, KEYS) the simulator answers in a
// stable order of its own, and
// Server.ReplyOrder tells a test that the order is not defined on a real
// server; WithUndefinedOrder(UndefinedOrderShuffled) shuffles such replies
// so an accidental order assertion fails.
//
// # Commands that differ
//
// Every command a Redis 7.0 script may call is implemented but MIGRATE (the
// simulator is one server), and so is what later lines let scripts call
// (WAIT, WAITAOF, ZRANK WITHSCORE, ...) but Redis 7.4's hash field expiry
// (HEXPIRE and its family): under Redis74 and Redis80 those fail with the
// simulator's "not implemented". Where Redis itself answers from its clock,
// machine or configuration, the simulator answers in Redis's format about
// itself:
//
//   - Stream consumer groups record delivery and seen times from the
//     simulator's clock, so XPENDING's idle times and XAUTOCLAIM's
//     min-idle-time follow VirtualClock.Advance.
//   - Blocking forms never wait. From a script, XREAD and XREADGROUP with
//     BLOCK fail as in Redis; from Do, a read with nothing to serve answers
//     at once with the null a timeout gives.
//   - INFO has Redis's sections and fields users read (redis_version,
//     used_memory, role, the keyspace line); counters the simulator does not
//     keep are 0 and avg_ttl is exact. MEMORY USAGE follows Redis's
//     accounting: exact for small encodings and streams, close for large
//     hash tables, lists and skiplists; MEMORY STATS and DOCTOR derive from
//     it, MALLOC-STATS answers as a server without jemalloc, and SLOWLOG is
//     always empty. LASTSAVE is the time of the first command.
//   - COMMAND and its subcommands come from redis-server 7.0.15's command
//     table, in name order, without command tips, key-spec notes or DOCS
//     fields. LOLWUT prints the version line but not VERSION 5 or 6's art.
//   - ASKING, READONLY, READWRITE and CLUSTER answer as a server without
//     cluster support.
//   - SRANDMEMBER, ZRANDMEMBER, SPOP, HRANDFIELD and RANDOMKEY follow
//     Redis's rules for counts and repeats but draw from a seeded generator
//     (WithSeed): reproducible, not Redis's picks. SINTER, SUNION and SDIFF
//     over hashtable-encoded sets answer in a stable order of their own, an
//     order Redis leaves undefined (ReplyOrder reports it).
//   - DUMP payloads equal Redis's byte for byte for strings (LZF included),
//     intsets, listpack hashes and sorted sets, skiplist sorted sets and
//     lists built by tail pushes; hashtable-encoded hashes and sets list
//     their elements in the simulator's order, lists reshaped by LPUSH or
//     LINSERT may split into other nodes, and an intset keeps its current
//     width. Redis restores all of them. Streams are neither dumped nor
//     restored (a simulator error says so); RESTORE's FREQ is checked, then
//     ignored, as under Redis's default (not LFU) maxmemory policy.
//   - SORT compares ALPHA strings bytewise (the C locale) and, as a
//     standalone server, never refuses BY and GET patterns. The 16 databases
//     exist; Snapshot, Restore, Dump and DBSIZE cover the selected one.
//   - GEO scores stored with STOREDIST may differ from Redis's in the last
//     binary digit (the C library's sin, cos and asin are not exactly
//     rounded); distances and coordinates as Redis prints them agree.
//     Members at exactly equal distance under COUNT may come in another
//     order.
//   - OBJECT IDLETIME counts whole seconds of the simulator's clock since
//     a command last read or wrote the key (TYPE, EXISTS, the TTL family
//     and OBJECT do not count, as in Redis). Redis stores an integer
//     0..9999 as one object shared by every key holding it (OBJECT
//     REFCOUNT 2147483647, as the simulator answers) and reports that
//     object's last access by any key; the simulator reports the key's
//     own. OBJECT FREQ answers as under Redis's default maxmemory-policy.
//
// Redis 7 Functions (FUNCTION LOAD/DELETE/LIST/FLUSH/DUMP/RESTORE, FCALL,
// FCALL_RO) run with the functions engine's own load-time sandbox and error
// texts; FunctionRunner runs registry scripts through them.
package simulate
