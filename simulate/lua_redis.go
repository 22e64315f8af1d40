package simulate

import (
	"crypto/sha1"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/redlua/redlua/simulate/internal/lualib"
	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// RedisVersion is the server version the simulator reproduces, as
// redis.REDIS_VERSION reports it.
const RedisVersion = "7.0.15"

// redisVersionNum is REDIS_VERSION_NUM: 0x00MMmmpp.
const redisVersionNum = 7<<16 | 0<<8 | 15

// Log levels of redis.log, as the redis.LOG_* constants number them.
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)

// Replication flags of redis.set_repl.
const (
	replNone = 0
	replAOF  = 1
	replRepl = 2
	replAll  = replAOF | replRepl
)

// installRedis builds the redis table of Redis 7.0's scripting API.
func (sb *sandbox) installRedis() {
	L := sb.L
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return sb.command(L, true) },
		"pcall":              func(L *lua.LState) int { return sb.command(L, false) },
		"error_reply":        redisErrorReply,
		"status_reply":       redisStatusReply,
		"sha1hex":            redisSHA1Hex,
		"log":                sb.redisLog,
		"setresp":            sb.redisSetResp,
		"set_repl":           func(L *lua.LState) int { return redisSetRepl(L, sb.srv.profile) },
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      func(L *lua.LState) int { return redisACLCheckCmd(L, sb.srv.profile) },
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{
		"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning,
		"REPL_NONE": replNone, "REPL_AOF": replAOF, "REPL_SLAVE": replRepl, "REPL_REPLICA": replRepl, "REPL_ALL": replAll,
		"REDIS_VERSION_NUM": versionNum(sb.srv.profile.facts().redisVersion),
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(sb.srv.profile.facts().redisVersion))
	sb.srv.profile.installRedisNames(t)
	// In the order script_lua.c and eval.c set them, which decides pairs(redis).
	if sb.srv.profile.valkey() {
		t = lualib.Reorder(L, t, 0, valkeyRedisOrder...)
	} else {
		t = lualib.Reorder(L, t, 0, "call", "pcall", "log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
			"REDIS_VERSION_NUM", "REDIS_VERSION", "setresp", "sha1hex", "error_reply", "status_reply", "set_repl",
			"REPL_NONE", "REPL_AOF", "REPL_SLAVE", "REPL_REPLICA", "REPL_ALL", "acl_check_cmd",
			"breakpoint", "debug", "replicate_commands")
	}
	api := sb.protect(t, true)
	sb.globals.RawSetString("redis", api)
	if sb.srv.profile.valkey() {
		sb.globals.RawSetString("server", api) // Valkey's name for the same table
	}
	sb.globals.RawSetString(concatFn, L.NewFunction(luaConcat))
}

// errorTable builds the {err=...} table Redis uses for error replies in Lua.
func errorTable(L *lua.LState, msg string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(msg))
	return t
}

// raise fails the running Lua function the way Redis's luaPushError +
// luaError do: with an error table whose message carries the ERR code.
func raise(L *lua.LState, msg string) {
	L.Error(errorTable(L, "ERR "+msg), 0)
}

// errorReplyText is luaPushErrorBuff: "-CODE msg" keeps its code, anything
// else gets ERR; a trailing CR/LF is dropped.
func errorReplyText(s string) string {
	if strings.HasPrefix(s, "-") {
		body := s[1:]
		if sp := strings.IndexByte(body, ' '); sp >= 0 {
			return body[:sp] + " " + strings.TrimRight(body[sp+1:], "\r\n")
		}
		return "ERR " + strings.TrimRight(body, "\r\n")
	}
	return "ERR " + strings.TrimRight(s, "\r\n")
}

func redisErrorReply(L *lua.LState) int {
	s, ok := replyArg(L)
	if !ok {
		return 1
	}
	msg := string(s)
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(errorTable(L, errorReplyText(msg)))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	s, ok := replyArg(L)
	if !ok {
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

// replyArg is the one string redis.error_reply and redis.status_reply
// take; without it they return (Redis does not raise) an error table,
// pushed here, and ok is false.
func replyArg(L *lua.LState) (s lua.LString, ok bool) {
	s, ok = L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, errWrongArgsOrType))
		return "", false
	}
	return s, true
}

func redisSHA1Hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, errLuaWrongArgs)
	}
	s, _ := concatString(L.Get(1))
	sum := sha1.Sum([]byte(s))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

func (sb *sandbox) redisLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		raise(L, sb.srv.profile.text("redis.log() requires two arguments or more."))
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		raise(L, sb.srv.profile.logLevelError())
	}
	parts := make([]string, 0, argc-1)
	for i := 2; i <= argc; i++ {
		if s, ok := concatString(L.Get(i)); ok {
			parts = append(parts, s)
		}
	}
	sb.srv.addLog(LogLine{Script: sb.run.id, Level: level, Message: strings.Join(parts, " ")})
	return 0
}

func (sb *sandbox) redisSetResp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, sb.srv.profile.text("redis.setresp() requires one argument."))
	}
	n := int(lua.LVAsNumber(L.Get(1))) // lua_tonumber: anything else is 0
	if n != 2 && n != 3 {
		raise(L, "RESP version must be 2 or 3.")
	}
	// Some replies change shape with the protocol (ZRANGE WITHSCORES pairs),
	// so the keyspace is told too, not only the conversion to Lua.
	sb.resp, sb.cc.RESP = n, n
	return 0
}

func redisSetRepl(L *lua.LState, p Profile) int {
	if L.GetTop() != 1 {
		raise(L, p.text(p.setReplArgsError()))
	}
	flags := int(lua.LVAsNumber(L.Get(1)))
	if flags&^replAll != 0 {
		raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// redisACLCheckCmd answers for the default user, who may run every command.
func redisACLCheckCmd(L *lua.LState, p Profile) int {
	if L.GetTop() == 0 {
		return callFailed(L, true, p.text(errNoArgs))
	}
	argv := make([]string, 0, L.GetTop())
	for i := 1; i <= L.GetTop(); i++ {
		s, _ := concatString(L.Get(i))
		argv = append(argv, s)
	}
	if _, ok := p.lookupCommand(argv); !ok {
		raise(L, p.text("Invalid command passed to redis.acl_check_cmd()"))
	}
	L.Push(lua.LTrue)
	return 1
}

// handleError is Redis's __redis__err__handler: it turns any error value
// into an error table and records where in the script it was raised
// (skipping a Go function such as redis.call or error to reach its caller).
func (sb *sandbox) handleError(L *lua.LState) int {
	obj := L.Get(1)
	fr := errorFrame(L)
	t, ok := obj.(*lua.LTable)
	if !ok {
		s := "nil"
		if obj != lua.LNil {
			s = L.ToStringMeta(obj).String()
			if n, ok := obj.(lua.LNumber); ok {
				s = formatLuaNumber(float64(n))
			}
		}
		t = errorTable(L, "ERR "+fr.describe(s))
	}
	if fr.ok {
		t.RawSetString("source", lua.LString(sb.sourceName(fr.source)))
		t.RawSetString("line", lua.LNumber(fr.line))
	}
	L.Push(t)
	return 1
}

// frame is the Lua function an error was raised in.
type frame struct {
	ok     bool
	source string
	line   int
	proto  *lua.FunctionProto
	// register reads a register of the failing function; the frame is
	// still on the stack while an error handler runs.
	register func(reg int) lua.LValue
	// goArgs reports whether the Go function that raised the error (if
	// one did) was passed at least n arguments.
	goArgs func(n int) bool
}

// errorFrame finds the innermost Lua function on the stack of an error
// handler (level 0 is the handler, level 1 raised the error).
func errorFrame(L *lua.LState) frame {
	var goArgs func(int) bool
	for level := 1; level <= 2; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		fn, err := L.GetInfo("Slf", dbg, lua.LNil)
		if err != nil {
			break
		}
		if dbg.What == "G" {
			goArgs = func(n int) bool {
				// The raised message sits on top of the Go function's
				// arguments (gopher-lua pushes it before unwinding).
				name, _ := L.GetLocal(dbg, n+1)
				return name != ""
			}
			continue
		}
		f := frame{ok: true, source: dbg.Source, line: dbg.CurrentLine, goArgs: goArgs}
		f.register = func(reg int) lua.LValue {
			_, v := L.GetLocal(dbg, reg+1)
			return v
		}
		if lf, isFn := fn.(*lua.LFunction); isFn {
			f.proto = lf.Proto
		}
		return f
	}
	return frame{}
}

// describe rewrites a gopher-lua error message into Lua 5.1's wording.
func (f frame) describe(msg string) string {
	h := hintOf(msg)
	if f.ok {
		msg = unaryMessage(msg, f.proto, f.line, f.register)
		msg = noValueMessage(msg, f.goArgs)
	}
	msg = luaMessage(msg)
	if f.ok {
		msg = nameOperand(msg, f.proto, f.line, h)
		msg = methodArgument(msg, f.proto, f.line)
	}
	return msg
}

// luaMessage rewrites gopher-lua's runtime error texts into Lua 5.1's
// wording where the meaning is the same. Lua 5.1 also names the variable
// involved ("local 't'"), which gopher-lua cannot tell us; those messages
// keep Lua's unnamed form ("attempt to index a nil value").
func luaMessage(s string) string {
	for _, r := range runtimeRewrites {
		if m := r.re.FindStringSubmatchIndex(s); m != nil {
			var out []byte
			out = r.re.ExpandString(out, r.repl(s, m), s, m)
			return s[:m[0]] + string(out) + s[m[1]:]
		}
	}
	return quoteBadArgument(s)
}

type rewrite struct {
	re   *regexp.Regexp
	repl func(s string, m []int) string
}

func fixed(t string) func(string, []int) string { return func(string, []int) string { return t } }

// runtimeRewrites maps gopher-lua's messages to Lua 5.1's (lvm.c, ldebug.c).
var runtimeRewrites = []rewrite{
	{regexp.MustCompile(`cannot perform \w+ operation between (\w+) and (\w+)`), func(s string, m []int) string {
		// Lua blames the first operand that is not a number.
		if s[m[2]:m[3]] != "number" {
			return "attempt to perform arithmetic on a $1 value"
		}
		return "attempt to perform arithmetic on a $2 value"
	}},
	{regexp.MustCompile(`attempt to index a non-table object\((\w+)\) with key '[^']*'`), fixed("attempt to index a $1 value")},
	{regexp.MustCompile(`attempt to compare (\w+) with (\w+)`), func(s string, m []int) string {
		if s[m[2]:m[3]] == s[m[4]:m[5]] {
			return "attempt to compare two $1 values"
		}
		return "attempt to compare $1 with $2"
	}},
	// gopher-lua does not say what was called; it is nearly always nil.
	{regexp.MustCompile(`attempt to call a non-function object`), fixed("attempt to call a nil value")},
	{regexp.MustCompile(`for statement init must be a number`), fixed("'for' initial value must be a number")},
	{regexp.MustCompile(`for statement limit must be a number`), fixed("'for' limit must be a number")},
	{regexp.MustCompile(`for statement step must be a number`), fixed("'for' step must be a number")},
}

// quoteBadArgument puts the quotes Lua 5.1 uses around the function name in
// "bad argument #2 to 'f' (...)"; gopher-lua leaves them out.
func quoteBadArgument(s string) string {
	const marker = "bad argument #"
	i := strings.Index(s, marker)
	if i < 0 {
		return s
	}
	rest := s[i+len(marker):]
	to := strings.Index(rest, " to ")
	paren := strings.Index(rest, " (")
	if to < 0 || paren < to {
		return s
	}
	if to < 0 || paren < to+4 {
		return s
	}
	fn := rest[to+4 : paren]
	if strings.HasPrefix(fn, "'") {
		return s
	}
	if fn == "" {
		fn = "?" // as Lua 5.1 names a function it cannot find a name for
	}
	return s[:i+len(marker)] + rest[:to+4] + "'" + fn + "'" + rest[paren:]
}

// sourceName is the Lua "source" of a chunk, which Redis puts in its error
// replies: "@user_script" for the script, the chunk name itself for code
// from loadstring (gopher-lua only keeps the display form).
func (sb *sandbox) sourceName(display string) string {
	if display == scriptChunk {
		return "@" + scriptChunk
	}
	if raw, ok := sb.chunkNames[display]; ok {
		return raw
	}
	return display
}
