package simulate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
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
	code  string // the FUNCTION LOAD payload, its "#!lua name=" line included
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
		L.RaiseError(errNonexistentGlobal, L.ToString(2))
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
			return nil, errRegisteringFunctions + errFunctionLoadTimeout
		}
		return nil, errRegisteringFunctions + sb.srv.profile.text(loadErrorText(err))
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
