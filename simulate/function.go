package simulate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/redlua/redlua/registry"
)

// functionChunk is the chunk name Redis gives every library: errors say
// "user_function:3:" and replies end "on @user_function:3.".
const functionChunk = "user_function"

// functionLoadTimeout is how long a library's top level may run in
// FUNCTION LOAD before Redis stops it (LOAD_TIMEOUT_MS).
const functionLoadTimeout = 500 * time.Millisecond

// library is one loaded Redis 7 function library.
type library struct {
	name  string
	code  string // the FUNCTION LOAD payload, shebang line included
	funcs []*libFunction
}

// libFunction is one function a library registered.
type libFunction struct {
	name        string
	description *string
	flags       []string // as Redis lists them, in its order
	lib         *library
	fn          *lua.LFunction
	noWrites    bool
	crossSlot   bool
}

// functionStore is the server's function libraries. Function names are
// unique across libraries, compared without case as Redis does; library
// names are case-sensitive.
type functionStore struct {
	libs  map[string]*library
	funcs map[string]*libFunction // by lower-case name
	eng   *functionEngine         // nil until the first library loads
}

// functionEngine is the functions engine's own Lua interpreter (Redis
// keeps it apart from EVAL's). Stores built while restoring share it.
type functionEngine struct {
	sb *sandbox
	// env is the environment every library chunk and its closures run
	// in: its __index is switched between the load-time API and the
	// runtime globals, as Redis switches its globals' metatable.
	env     *lua.LTable
	loadAPI *lua.LTable
	// loading collects what register_function registers during a load.
	loading *library
}

func newFunctionStore() *functionStore {
	return &functionStore{libs: map[string]*library{}, funcs: map[string]*libFunction{}}
}

// functionEngine returns the functions interpreter, creating it on first use.
func (s *Server) functionEngine() *functionEngine {
	fs := s.functions
	if fs.eng != nil {
		return fs.eng
	}
	sb := newSandbox(s)
	// A function gets its keys and args as parameters; KEYS and ARGV do
	// not exist in its environment.
	sb.globals.RawSetString("KEYS", lua.LNil)
	sb.globals.RawSetString("ARGV", lua.LNil)
	sb.chunkNames[functionChunk] = "@" + functionChunk
	e := &functionEngine{sb: sb, env: sb.protect(sb.globals, false)}
	e.loadAPI = e.newLoadAPI()
	fs.eng = e
	return e
}

// newLoadAPI builds what a library's top level sees while FUNCTION LOAD
// runs it: only redis.register_function, redis.log, the log levels and
// the version; every other name fails as a nonexistent global.
func (e *functionEngine) newLoadAPI() *lua.LTable {
	sb := e.sb
	L := sb.L
	missing := L.NewTable()
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	runtimeRedis := sb.real[sb.globals.RawGetString("redis").(*lua.LTable)]
	redisT := L.NewTable()
	redisT.RawSetString("register_function", L.NewFunction(e.registerFunction))
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		redisT.RawSetString(name, runtimeRedis.RawGetString(name))
	}
	L.SetMetatable(redisT, missing)
	api := L.NewTable()
	api.RawSetString("redis", sb.protect(redisT, true))
	api.RawSetString(concatFn, sb.globals.RawGetString(concatFn))
	L.SetMetatable(api, missing)
	return api
}

// useEnv points the library environment at t (the load API or the globals).
func (e *functionEngine) useEnv(t *lua.LTable) {
	e.env.Metatable.(*lua.LTable).RawSetString("__index", t)
	e.sb.real[e.env] = t
}

// loadLibrary is FUNCTION LOAD [REPLACE] code: it returns the library
// name or Redis's error text. The caller holds s.mu.
func (s *Server) loadLibrary(ctx context.Context, code string, replace bool) (string, string) {
	name, body, errText := parseLibraryMetadata(code)
	if errText != "" {
		return "", errText
	}
	fs := s.functions
	old := fs.libs[name]
	if old != nil && !replace {
		return "", fmt.Sprintf(errLibraryExists, name)
	}
	lib, errText := s.compileLibrary(ctx, name, code, body)
	if errText != "" {
		return "", errText
	}
	if errText := fs.link(lib, old); errText != "" {
		return "", errText
	}
	return name, ""
}

// link adds lib in place of old (nil: none), or fails when one of its
// functions exists in another library.
func (fs *functionStore) link(lib, old *library) string {
	for _, f := range lib.funcs {
		if other, ok := fs.funcs[strings.ToLower(f.name)]; ok && other.lib != old {
			return fmt.Sprintf(errFunctionExists, f.name)
		}
	}
	if old != nil {
		fs.unlink(old)
	}
	fs.libs[lib.name] = lib
	for _, f := range lib.funcs {
		// One library may register "g" and "G"; as in Redis, the first
		// one answers to both names.
		if _, taken := fs.funcs[strings.ToLower(f.name)]; !taken {
			fs.funcs[strings.ToLower(f.name)] = f
		}
	}
	return ""
}

func (fs *functionStore) unlink(lib *library) {
	delete(fs.libs, lib.name)
	for _, f := range lib.funcs {
		if g := fs.funcs[strings.ToLower(f.name)]; g != nil && g.lib == lib {
			delete(fs.funcs, strings.ToLower(f.name))
		}
	}
}

// parseLibraryMetadata is functionExtractLibMetaData: the "#!<engine>
// name=<lib>" first line. It returns the library name and the body Lua
// compiles (the first line blanked, its newline kept so lines count from
// the shebang), or Redis's error text.
func parseLibraryMetadata(code string) (name, body, errText string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", errLibraryNoMetadata
	}
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return "", "", errLibraryBadMetadata
	}
	parts, ok := splitArgs(code[2:nl])
	if !ok || len(parts) == 0 {
		return "", "", errLibraryBadMetadata
	}
	engine, named := parts[0], false
	for _, p := range parts[1:] {
		if len(p) < 5 || !strings.EqualFold(p[:5], "name=") {
			return "", "", errLibraryMetadataValue + p
		}
		if named {
			return "", "", errLibraryNameTwice
		}
		name, named = p[5:], true
	}
	if !named {
		return "", "", errLibraryNoName
	}
	if !strings.EqualFold(engine, "lua") {
		return "", "", fmt.Sprintf(errEngineNotFound, engine)
	}
	if !validFunctionName(name) {
		return "", "", errFunctionName
	}
	return name, code[nl:], ""
}

// validFunctionName is functionsVerifyName: letters, digits and '_', at
// least one.
func validFunctionName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// splitArgs splits a line as sdssplitargs does: words separated by
// spaces, "double quoted" (with \n, \t, \xHH... escapes) and 'single
// quoted' words; a closing quote must be followed by a space or the end.
func splitArgs(line string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(line) && isCSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return out, true
		}
		var b strings.Builder
		inDQ, inSQ := false, false
		for done := false; !done; {
			switch {
			case inDQ:
				if i == len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line):
					i++
					b.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'a': '\a'}[line[i]] | onlyIfPlain(line[i]))
				case c == '"':
					if i+1 < len(line) && !isCSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					b.WriteByte(c)
				}
			case inSQ:
				if i == len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					b.WriteByte('\'')
				case c == '\'':
					if i+1 < len(line) && !isCSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					b.WriteByte(c)
				}
			default:
				if i == len(line) {
					done = true
					continue
				}
				switch c := line[i]; {
				case isCSpace(c):
					done = true
					continue
				case c == '"':
					inDQ = true
				case c == '\'':
					inSQ = true
				default:
					b.WriteByte(c)
				}
			}
			if !done || inDQ || inSQ {
				i++
			}
		}
		out = append(out, b.String())
	}
}

// onlyIfPlain keeps an escaped character that is not one of the named
// escapes (\" stays ", \\ stays \).
func onlyIfPlain(c byte) byte {
	switch c {
	case 'n', 'r', 't', 'b', 'a':
		return 0
	}
	return c
}

// compileLibrary compiles a library and runs its top level with the load
// API, collecting the functions it registers.
func (s *Server) compileLibrary(ctx context.Context, name, code, body string) (*library, string) {
	e := s.functionEngine()
	sb := e.sb
	L := sb.L
	proto, err := compileLua(body, functionChunk)
	if err != nil {
		return nil, errCompilingFunction + err.Error()
	}
	lib := &library{name: name, code: code}
	chunk := L.NewFunctionFromProto(proto)
	chunk.Env = e.env
	e.useEnv(e.loadAPI)
	e.loading = lib
	run := &runState{id: name}
	sb.run = run
	loadCtx, cancel := context.WithTimeout(ctx, functionLoadTimeout)
	L.SetContext(loadCtx)
	L.Push(chunk)
	err = L.PCall(0, 0, nil)
	L.RemoveContext()
	cancel()
	L.SetTop(0)
	e.useEnv(sb.globals)
	e.loading = nil
	sb.run = nil
	if err != nil {
		if ctx.Err() == nil && errors.Is(loadCtx.Err(), context.DeadlineExceeded) {
			return nil, errRegisteringFunctions + "ERR FUNCTION LOAD timeout"
		}
		return nil, errRegisteringFunctions + loadErrorText(err)
	}
	if len(lib.funcs) == 0 {
		return nil, errNoFunctions
	}
	return lib, ""
}

// loadErrorText is luaExtractErrorInformation's message for an error
// raised while a library's top level ran: an error table's text, or
// "ERR " and the error string.
func loadErrorText(err error) string {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return "ERR " + err.Error()
	}
	if t, ok := ae.Object.(*lua.LTable); ok {
		if msg, ok := concatString(t.RawGetString("err")); ok {
			return msg
		}
	}
	if s, ok := concatString(ae.Object); ok {
		return "ERR " + luaMessage(s)
	}
	return "ERR " + ae.Object.String()
}

// registerFunction is redis.register_function, callable only while
// FUNCTION LOAD runs a library's top level: (name, callback) or one table
// of named arguments function_name, callback, flags and description.
func (e *functionEngine) registerFunction(L *lua.LState) int {
	lib := e.loading
	if lib == nil {
		raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f, msg := readRegisterArgs(L)
	if msg != "" {
		raise(L, msg)
	}
	if !validFunctionName(f.name) {
		raise(L, strings.TrimPrefix(errFunctionName, "ERR "))
	}
	for _, g := range lib.funcs {
		if g.name == f.name {
			raise(L, "Function already exists in the library")
		}
	}
	f.lib = lib
	lib.funcs = append(lib.funcs, f)
	return 0
}

func readRegisterArgs(L *lua.LState) (*libFunction, string) {
	switch L.GetTop() {
	case 1:
		return readNamedRegisterArgs(L)
	case 2:
		name, ok := luaStringArg(L.Get(1))
		if !ok {
			return nil, "first argument to redis.register_function must be a string"
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, "second argument to redis.register_function must be a function"
		}
		return &libFunction{name: name, fn: fn}, ""
	}
	return nil, "wrong number of arguments to redis.register_function"
}

func readNamedRegisterArgs(L *lua.LState) (*libFunction, string) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &libFunction{}
	named := false
	var msg string
	t.ForEach(func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaStringArg(k)
		if !ok {
			msg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.name, ok = luaStringArg(v); !ok {
				msg = "function_name argument given to redis.register_function must be a string"
			}
			named = ok
		case "description":
			d, ok := luaStringArg(v)
			if !ok {
				msg = "description argument given to redis.register_function must be a string"
			}
			f.description = &d
		case "callback":
			if f.fn, ok = v.(*lua.LFunction); !ok {
				msg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if !f.readFlags(ft) {
				msg = "unknown flag given"
			}
		default:
			msg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case msg != "":
		return nil, msg
	case !named:
		return nil, "redis.register_function must get a function name argument"
	case f.fn == nil:
		return nil, "redis.register_function must get a callback argument"
	}
	return f, ""
}

// readFlags reads flags[1], flags[2], ... until the first nil, each one of
// Redis's script flags (without case).
func (f *libFunction) readFlags(t *lua.LTable) bool {
	set := map[string]bool{}
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			break
		}
		s, ok := luaStringArg(v)
		if !ok {
			return false
		}
		name := strings.ToLower(s)
		if !isScriptFlag(name) {
			return false
		}
		set[name] = true
	}
	for _, name := range registry.KnownFlags {
		if set[name] {
			f.flags = append(f.flags, name)
		}
	}
	f.noWrites, f.crossSlot = set[registry.FlagNoWrites], set[registry.FlagAllowCrossSlotKeys]
	return true
}

func isScriptFlag(name string) bool {
	for _, k := range registry.KnownFlags {
		if k == name {
			return true
		}
	}
	return false
}

// luaStringArg is lua_isstring + lua_tostring: strings, and numbers as
// Lua 5.1 formats them.
func luaStringArg(v lua.LValue) (string, bool) { return concatString(v) }

// sortedLibraries lists the libraries by name (Redis lists them in its
// dictionary's order, which is undefined).
func (fs *functionStore) sortedLibraries() []*library {
	out := make([]*library, 0, len(fs.libs))
	for _, l := range fs.libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
