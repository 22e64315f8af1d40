package lint

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// stdGlobal describes one standard global of Redis's Lua sandbox.
type stdGlobal struct {
	// fields is the set of known fields; nil for a plain value.
	fields map[string]bool
	// anyFields: any field may be read and written (KEYS, ARGV).
	anyFields bool
	// writable globals may be assigned (set with --globals).
	writable bool
}

// redisStd lists the globals a script sees in Redis 7.0's sandbox, with
// the fields of each library, as read off redis-server 7.0 by iterating _G.
// print, dofile, loadfile, require, module, os, io and debug are absent:
// Redis removes them, so they are undefined here too. Every later server
// line has all of them (serverAdds lists what each adds), so this is also
// the std of a script meant for any supported server.
var redisStd = func() map[string]*stdGlobal {
	libs := map[string]string{
		"bit":       "arshift band bnot bor bswap bxor lshift rol ror rshift tobit tohex",
		"cjson":     "_NAME _VERSION decode decode_invalid_numbers decode_max_depth encode encode_invalid_numbers encode_keep_buffer encode_max_depth encode_number_precision encode_sparse_array new null",
		"cmsgpack":  "_COPYRIGHT _DESCRIPTION _NAME _VERSION pack unpack unpack_limit unpack_one",
		"coroutine": "create resume running status wrap yield",
		"math":      "abs acos asin atan atan2 ceil cos cosh deg exp floor fmod frexp huge ldexp log log10 max min mod modf pi pow rad random randomseed sin sinh sqrt tan tanh",
		"redis":     "LOG_DEBUG LOG_NOTICE LOG_VERBOSE LOG_WARNING REDIS_VERSION REDIS_VERSION_NUM REPL_ALL REPL_AOF REPL_NONE REPL_REPLICA REPL_SLAVE acl_check_cmd breakpoint call debug error_reply log pcall replicate_commands set_repl setresp sha1hex status_reply",
		"string":    "byte char dump find format gfind gmatch gsub len lower match rep reverse sub upper",
		"struct":    "pack size unpack",
		"table":     "concat foreach foreachi getn insert maxn remove setn sort",
	}
	m := map[string]*stdGlobal{}
	for name, fields := range libs {
		g := &stdGlobal{fields: map[string]bool{}}
		for _, f := range strings.Fields(fields) {
			g.fields[f] = true
		}
		m[name] = g
	}
	for _, name := range strings.Fields("_G _VERSION assert collectgarbage error gcinfo getmetatable ipairs load loadstring next pairs pcall rawequal rawget rawset select setmetatable tonumber tostring type unpack xpcall") {
		m[name] = &stdGlobal{}
	}
	m["KEYS"] = &stdGlobal{anyFields: true}
	m["ARGV"] = &stdGlobal{anyFields: true}
	return m
}()

// The server lines Config.Server names: each is the std of that line's
// script sandbox. AnyServer (also "" and "redis") is what every supported
// line has, Redis 7.0's set.
const (
	AnyServer = "any"
	Redis70   = "redis70"
	Redis72   = "redis72"
	Redis74   = "redis74"
	Redis80   = "redis80"
	Valkey72  = "valkey72"
	Valkey80  = "valkey80"
)

// serverAdds lists, per server line, the globals its sandbox has beyond
// Redis 7.0's (redisStd): a name, or "name: field field ..." for a
// library (fields add to a library the base already has). Read off
// upstream builds (Redis 7.2.6, 7.4.1, 8.0-m01; Valkey 7.2.7, 8.0.1) by
// iterating _G in EVAL; see docs/servers.md.
var serverAdds = map[string][]string{
	Redis70: nil,
	// 7.2 keeps three Lua 5.1 base functions 7.0 removed.
	Redis72: {"getfenv", "newproxy", "setfenv"},
	// 7.4 and Valkey 8 add os with only os.clock.
	Redis74: {"getfenv", "newproxy", "setfenv", "os: clock"},
	Redis80: {"getfenv", "newproxy", "setfenv", "os: clock"},
	// Valkey names itself beside redis's version fields (whose
	// REDIS_VERSION stays 7.2.4), and gives the library a second name,
	// server.
	Valkey72: {"getfenv", "newproxy", "setfenv", "redis: SERVER_NAME VALKEY_VERSION VALKEY_VERSION_NUM", "server"},
	Valkey80: {"getfenv", "newproxy", "setfenv", "os: clock", "redis: SERVER_NAME VALKEY_VERSION VALKEY_VERSION_NUM", "server"},
}

// serverStds is each server line's std, built once.
var serverStds = func() map[string]map[string]*stdGlobal {
	out := map[string]map[string]*stdGlobal{}
	for line, adds := range serverAdds {
		m := make(map[string]*stdGlobal, len(redisStd)+len(adds))
		for k, v := range redisStd {
			m[k] = v
		}
		for _, a := range adds {
			name, fields, lib := strings.Cut(a, ":")
			if !lib {
				m[name] = &stdGlobal{}
				continue
			}
			g := &stdGlobal{fields: map[string]bool{}}
			if base := m[name]; base != nil {
				for f := range base.fields {
					g.fields[f] = true
				}
			}
			for _, f := range strings.Fields(fields) {
				g.fields[f] = true
			}
			m[name] = g
		}
		if slices.Contains(adds, "server") {
			// server is the redis library under another name.
			m["server"] = m["redis"]
		}
		out[line] = m
	}
	return out
}()

// ServerLines returns the server lines Config.Server accepts besides
// AnyServer, sorted: "redis70", "redis72", ..., "valkey80".
func ServerLines() []string {
	out := make([]string, 0, len(serverAdds))
	for line := range serverAdds {
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// IsServerLine reports whether name is a server line Config.Server
// accepts ("", "any" and "redis" mean AnyServer).
func IsServerLine(name string) bool {
	_, ok := serverAdds[name]
	return ok || name == "" || name == AnyServer || name == "redis"
}

// CheckServer returns nil for a server line Config.Server accepts, and
// otherwise an error that lists them.
func CheckServer(name string) error {
	if IsServerLine(name) {
		return nil
	}
	return fmt.Errorf("unknown server line %q: use %s, or %s for what every supported server has", name, strings.Join(ServerLines(), ", "), AnyServer)
}

// stdFor is the std of a server line; an unknown name (which CheckServer
// refuses) gets AnyServer's.
func stdFor(server string) map[string]*stdGlobal {
	if m, ok := serverStds[server]; ok {
		return m
	}
	return redisStd
}

// StdGlobals returns the names of Redis's standard globals and, for the
// libraries, their fields, as every supported server has them; a tool
// that configures another linter (or a .luacheckrc) for Redis can build
// its standard from this. ServerStdGlobals gives one server line's.
func StdGlobals() map[string][]string { return stdGlobals(redisStd) }

// ServerStdGlobals is StdGlobals for one server line (see ServerLines).
func ServerStdGlobals(server string) (map[string][]string, error) {
	if err := CheckServer(server); err != nil {
		return nil, err
	}
	return stdGlobals(stdFor(server)), nil
}

func stdGlobals(std map[string]*stdGlobal) map[string][]string {
	out := map[string][]string{}
	for name, g := range std {
		var fs []string
		for f := range g.fields {
			fs = append(fs, f)
		}
		out[name] = fs
	}
	return out
}

// globalsFor merges the server line's standard with a config's extra
// globals.
func globalsFor(cfg *Config) map[string]*stdGlobal {
	if cfg == nil {
		return redisStd
	}
	std := stdFor(cfg.Server)
	if len(cfg.Globals)+len(cfg.ReadGlobals) == 0 {
		return std
	}
	m := make(map[string]*stdGlobal, len(std)+len(cfg.Globals)+len(cfg.ReadGlobals))
	for k, v := range std {
		m[k] = v
	}
	for _, g := range cfg.ReadGlobals {
		addGlobal(m, g, false)
	}
	for _, g := range cfg.Globals {
		addGlobal(m, g, true)
	}
	return m
}

// addGlobal adds "name" or "name.field" (luacheck's dotted form).
func addGlobal(m map[string]*stdGlobal, name string, writable bool) {
	root, field, dotted := strings.Cut(name, ".")
	g := m[root]
	if !dotted {
		m[root] = &stdGlobal{anyFields: true, writable: writable}
		return
	}
	ng := &stdGlobal{fields: map[string]bool{}, writable: false}
	if g != nil {
		ng.anyFields, ng.writable = g.anyFields, g.writable
		for f := range g.fields {
			ng.fields[f] = true
		}
	}
	first, _, _ := strings.Cut(field, ".")
	ng.fields[first] = true
	if writable {
		ng.anyFields = true
	}
	m[root] = ng
}
