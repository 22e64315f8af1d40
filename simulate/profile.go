package simulate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redlua/redlua/internal/cmdtable"
	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// Profile is the server line the simulator reproduces: what a script can
// see of it (sandbox globals, object encodings, commands and options, error
// texts, version strings, DUMP's RDB version). Choose one with WithServer;
// the zero value, Redis70, is the default. The constants are the supported
// lines; docs/simulator.md lists what each covers and what still differs.
type Profile int

// The supported server lines, each judged reply for reply against the
// release named in its comment.
const (
	Redis70  Profile = iota // Redis 7.0 (7.0.15), the default
	Redis72                 // Redis 7.2 (7.2.6)
	Redis74                 // Redis 7.4 (7.4.1)
	Redis80                 // Redis 8.0 (8.0-m01, which reports 7.9.224)
	Valkey72                // Valkey 7.2 (7.2.7)
	Valkey80                // Valkey 8.0 (8.0.1)
	profileCount
)

// profileFacts is what a profile decides, as far as a script can see it.
type profileFacts struct {
	name          string // as String and the recordings name the profile
	redisVersion  string // INFO redis_version, redis.REDIS_VERSION
	serverName    string // INFO server_name, redis.SERVER_NAME ("" for Redis)
	valkeyVersion string // INFO valkey_version, redis.VALKEY_VERSION
	rdbVersion    uint16 // DUMP payloads' RDB version, the newest RESTORE accepts
	commandCount  int64  // COMMAND COUNT
}

var profiles = [profileCount]profileFacts{
	Redis70:  {name: "redis-7.0", redisVersion: RedisVersion, rdbVersion: 10, commandCount: 240},
	Redis72:  {name: "redis-7.2", redisVersion: "7.2.6", rdbVersion: 11, commandCount: 241},
	Redis74:  {name: "redis-7.4", redisVersion: "7.4.1", rdbVersion: 12, commandCount: 250},
	Redis80:  {name: "redis-8.0", redisVersion: "7.9.224", rdbVersion: 12, commandCount: 250},
	Valkey72: {name: "valkey-7.2", redisVersion: "7.2.4", serverName: "valkey", valkeyVersion: "7.2.7", rdbVersion: 11, commandCount: 241},
	Valkey80: {name: "valkey-8.0", redisVersion: "7.2.4", serverName: "valkey", valkeyVersion: "8.0.1", rdbVersion: 11, commandCount: 241},
}

// String names the profile as "redis-7.4" or "valkey-8.0".
func (p Profile) String() string {
	if p.valid() {
		return profiles[p].name
	}
	return fmt.Sprintf("Profile(%d)", int(p))
}

func (p Profile) valid() bool { return p >= 0 && p < profileCount }

func (p Profile) facts() *profileFacts {
	if !p.valid() {
		p = Redis70
	}
	return &profiles[p]
}

// valkey reports a Valkey line.
func (p Profile) valkey() bool { return p == Valkey72 || p == Valkey80 }

// since72 reports a line with Redis 7.2's changes (Valkey forked from 7.2):
// getfenv and newproxy in scripts, listpack sets and lists, RDB 11.
func (p Profile) since72() bool { return p != Redis70 }

// since74 reports Redis 7.4 or later (not Valkey).
func (p Profile) since74() bool { return p == Redis74 || p == Redis80 }

// kvstore reports a line that keeps its keyspace in a kvstore (MEMORY
// STATS shows it): Redis 7.4 and Valkey 8.0.
func (p Profile) kvstore() bool { return p.since74() || p == Valkey80 }

// hasOS reports whether scripts see the os table (os.clock only): Redis 7.4
// and Valkey 8.0 added it.
func (p Profile) hasOS() bool { return p.since74() || p == Valkey80 }

// versionNum is a version's REDIS_VERSION_NUM form, 0x00MMmmpp.
func versionNum(v string) int {
	var maj, min, patch int
	fmt.Sscanf(v, "%d.%d.%d", &maj, &min, &patch)
	return maj<<16 | min<<8 | patch
}

// WithServer makes the server reproduce a server line (default Redis70).
// A value that is not one of the Profile constants makes every call on the
// server fail with an error naming the supported profiles.
func WithServer(p Profile) Option {
	return func(s *Server) {
		if !p.valid() {
			names := make([]string, 0, profileCount)
			for q := Profile(0); q < profileCount; q++ {
				names = append(names, q.String())
			}
			s.configErr = fmt.Errorf("simulate: WithServer(%v): no such server profile; use one of the simulate profile constants (%s)", p, strings.Join(names, ", "))
			return
		}
		s.profile = p
		s.ks.profile = p
	}
}

// Profile returns the server line the server reproduces.
func (s *Server) Profile() Profile {
	if s == nil {
		return Redis70
	}
	return s.profile
}

// helpLine is the line HELP subcommands end with: 7.2 changed its verb.
func (p Profile) helpLine() string {
	if p.since72() {
		return "    Print this help."
	}
	return "    Prints this help."
}

// lolwutVersion is the version LOLWUT prints (Valkey prints its own).
func (p Profile) lolwutVersion() string {
	if f := p.facts(); f.valkeyVersion != "" {
		return f.valkeyVersion
	}
	return p.facts().redisVersion
}

// infoServer adds to INFO server's fields the line's own: Valkey names
// itself and its version, and Valkey 8 calls redis_mode server_mode.
func (p Profile) infoServer(fields [][2]string) [][2]string {
	f := p.facts()
	if f.serverName == "" {
		return fields
	}
	out := make([][2]string, 0, len(fields)+2)
	for _, kv := range fields {
		if kv[0] == "redis_mode" && p == Valkey80 {
			kv[0] = "server_mode"
		}
		if kv[0] == "atomicvar_api" && p == Valkey80 {
			continue // Valkey 8 dropped it
		}
		out = append(out, kv)
		if kv[0] == "redis_version" {
			out = append(out, [2]string{"server_name", f.serverName}, [2]string{"valkey_version", f.valkeyVersion})
		}
	}
	return out
}

// commandCount is COMMAND COUNT: the line's, where the simulator's
// command table (Redis 7.0's, n commands) is not the line's.
func (p Profile) commandCount(n int64) int64 {
	if p == Redis70 {
		return n
	}
	return p.facts().commandCount
}

// timeoutRangeError is a blocking command's error for a timeout past
// what the server can wait: 7.2 tells it from a negative one.
func (p Profile) timeoutRangeError() string {
	if p.since72() {
		return "ERR timeout is out of range"
	}
	return errTimeoutNegative
}

// installRedisNames sets the redis table's Valkey names: SERVER_NAME,
// VALKEY_VERSION and VALKEY_VERSION_NUM.
func (p Profile) installRedisNames(t *lua.LTable) {
	f := p.facts()
	if f.serverName == "" {
		return
	}
	t.RawSetString("SERVER_NAME", lua.LString(f.serverName))
	t.RawSetString("VALKEY_VERSION", lua.LString(f.valkeyVersion))
	t.RawSetString("VALKEY_VERSION_NUM", lua.LNumber(versionNum(f.valkeyVersion)))
}

// installProfileGlobals adds the globals later lines allow scripts:
// getfenv and newproxy from 7.2, a read-only os holding only clock from
// Redis 7.4 and Valkey 8.0. g holds gopher-lua's base functions.
func (sb *sandbox) installProfileGlobals(g *lua.LTable) {
	p := sb.srv.profile
	if p.since72() {
		sb.globals.RawSetString("getfenv", g.RawGetString("getfenv"))
		sb.globals.RawSetString("newproxy", g.RawGetString("newproxy"))
		sb.globals.RawSetString("setfenv", g.RawGetString("setfenv"))
	}
	if p.hasOS() {
		L := sb.L
		start := sb.srv.clock.Now()
		os := L.NewTable()
		// os.clock is the process's CPU seconds; the simulator's is the
		// server clock's time since the interpreter started, so a script
		// timing itself reads the virtual clock.
		os.RawSetString("clock", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(sb.srv.clock.Now().Sub(start).Seconds()))
			return 1
		}))
		sb.globals.RawSetString("os", sb.protect(os, true))
	}
}

// setReplArgsError is redis.set_repl's error for a wrong argument count:
// 7.2 fixed the count it names.
func (p Profile) setReplArgsError() string {
	if p.since72() {
		return "redis.set_repl() requires one argument."
	}
	return "redis.set_repl() requires two arguments."
}

// scriptMayBlock reports whether a script may call a blocking command
// (which then never blocks): 7.2 dropped these commands' noscript flag.
func (p Profile) scriptMayBlock(name string) bool {
	switch name {
	case "blpop", "brpop", "brpoplpush", "blmove", "bzpopmin", "bzpopmax":
		return p.since72()
	}
	return false
}

// logLevelError is redis.log's error for a level out of range: 7.4 and
// Valkey 8 call it a log level.
func (p Profile) logLevelError() string {
	if p.since74() || p == Valkey80 {
		return "Invalid log level."
	}
	return "Invalid debug level."
}

// valkeyTexts are the error texts Valkey 8 reworded to drop "Redis".
var valkeyTexts = strings.NewReplacer(
	"Unknown Redis command called from script", "Unknown command called from script",
	"Wrong number of args calling Redis command from script", "Wrong number of args calling command from script",
	"Please specify at least one argument for this redis lib call", "Please specify at least one argument for this call",
	"Lua redis lib command arguments must be strings or integers", "Command arguments must be strings or integers",
	"redis.register_function", "server.register_function",
	"redis.log()", "server.log()",
	"redis.setresp()", "server.setresp()",
	"redis.set_repl()", "server.set_repl()",
	"redis.acl_check_cmd()", "server.acl_check_cmd()",
)

// valkeyRedisOrder is an order of setting the redis table's fields that
// gives the table Valkey's (7.2 and 8.0) iteration order under pairs.
var valkeyRedisOrder = []string{"SERVER_NAME", "call", "pcall", "log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE",
	"VALKEY_VERSION_NUM", "VALKEY_VERSION", "LOG_WARNING", "REDIS_VERSION_NUM", "REDIS_VERSION", "setresp", "sha1hex",
	"error_reply", "status_reply", "set_repl", "REPL_NONE", "REPL_AOF", "REPL_SLAVE", "REPL_REPLICA", "REPL_ALL",
	"acl_check_cmd", "breakpoint", "debug", "replicate_commands"}

// text is an error text as the line words it.
func (p Profile) text(s string) string {
	if p == Valkey80 {
		return valkeyTexts.Replace(s)
	}
	return s
}

// hasNoValues reports whether HSCAN takes NOVALUES (Redis 7.4, Valkey 8.0).
func (p Profile) hasNoValues() bool { return p.since74() || p == Valkey80 }

// dropNoValues removes HSCAN's NOVALUES flags from its options (a flag
// where an option's value is due is that value), reporting whether any was
// there.
func dropNoValues(opts []string) ([]string, bool) {
	out, found := make([]string, 0, len(opts)), false
	for i := 0; i < len(opts); i++ {
		if strings.EqualFold(opts[i], "novalues") {
			found = true
			continue
		}
		out = append(out, opts[i])
		if i+1 < len(opts) {
			i++
			out = append(out, opts[i])
		}
	}
	return out, found
}

// knownTypeName reports whether SCAN's TYPE names a type Valkey 8 knows.
func knownTypeName(name string) bool {
	for _, k := range kindNames {
		if k != "" && strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// formatDouble formats a double for a RESP2 reply, a listpack score and
// ZSCAN: Redis 7.0 prints "%.17g"; 7.2 (and Valkey) print the shortest
// digits that read back the same (fpconv_dtoa), plain up to 10^18 and
// down to 10^-6, else as d.ddde±x.
func (p Profile) formatDouble(f float64) string {
	if !p.since72() {
		return formatDouble(f)
	}
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	case f == 0 && math.Signbit(f):
		return "-0"
	case f == 0:
		return "0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d.ddde±xx
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, e, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e10, _ := strconv.Atoi(e)
	nd := len(digits)
	k := e10 - (nd - 1) // f = digits × 10^k
	exp := e10
	if exp < 0 {
		exp = -exp
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case k >= 0 && exp < 19:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", k))
	case k < 0 && (k > -7 || exp < 4):
		if off := nd + k; off <= 0 {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -off))
			b.WriteString(digits)
		} else {
			b.WriteString(digits[:off])
			b.WriteByte('.')
			b.WriteString(digits[off:])
		}
	default:
		b.WriteByte(digits[0])
		if nd > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if e10 < 0 {
			b.WriteByte('-')
		} else {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(exp))
	}
	return b.String()
}

// getKeysOfBareCommand reports COMMAND GETKEYS or GETKEYSANDFLAGS of a
// command named without arguments, which 7.2 takes (its arity is -3) and
// answers itself, where 7.0 refuses the arity.
func (p Profile) getKeysOfBareCommand(argv []string) bool {
	return p.since72() && len(argv) == 3 && strings.EqualFold(argv[0], "command") &&
		(strings.EqualFold(argv[1], "getkeys") || strings.EqualFold(argv[1], "getkeysandflags"))
}

// since74Valkey8 reports Redis 7.4 or later or Valkey 8.0, which share
// these changes: BITCOUNT and BITPOS read their arguments before the key,
// XREAD takes "+" for the last entry, and a script may pass XREAD BLOCK
// (which does not block).
func (p Profile) since74Valkey8() bool { return p.since74() || p == Valkey80 }

// prev is the ID just before id (streamDecrID), 0-0 for 0-0.
func (id streamID) prev() streamID {
	switch {
	case id.seq > 0:
		return streamID{id.ms, id.seq - 1}
	case id.ms > 0:
		return streamID{id.ms - 1, math.MaxUint64}
	}
	return id
}

// parseScanCursor reads a SCAN cursor as the line does.
func (p Profile) parseScanCursor(s string) (uint64, bool) {
	if p.since74Valkey8() {
		return parseScanCursor74(s)
	}
	return parseScanCursor(s)
}

// laterCommands are, per profile, the commands its line has that Redis
// 7.0's table lacks or describes otherwise (cmdtable's lists of them).
var laterCommands = func() (out [profileCount]map[string]*cmdtable.Command) {
	for p := Profile(0); p < profileCount; p++ {
		out[p] = cmdtable.LineCommands(p.line())
	}
	return out
}()

// line names the profile as cmdtable and lint do: "redis74", "valkey80".
func (p Profile) line() string {
	return strings.NewReplacer("-", "", ".", "").Replace(p.String())
}

// lookup finds a command (or "container|sub") in the line's table.
func (p Profile) lookup(name string) (*cmdtable.Command, bool) {
	name = strings.ToLower(name)
	if !p.valid() {
		p = Redis70
	}
	if c, ok := laterCommands[p][name]; ok {
		return c, true
	}
	return cmdtable.Lookup(name)
}

// lookupCommand is lookupCommand with the line's table.
func (p Profile) lookupCommand(argv []string) (*cmdtable.Command, bool) {
	c, ok := p.lookup(argv[0])
	if !ok {
		return nil, false
	}
	if !containers[c.Name] || len(argv) < 2 {
		return c, true
	}
	return p.lookup(c.Name + "|" + argv[1])
}
