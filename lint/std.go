package lint

import "strings"

// stdGlobal describes one standard global of Redis's Lua sandbox.
type stdGlobal struct {
	// fields is the set of known fields; nil for a plain value.
	fields map[string]bool
	// anyFields: any field may be read and written (KEYS, ARGV).
	anyFields bool
	// writable globals may be assigned (set with --globals).
	writable bool
}

// redisStd lists the globals a script sees in Redis 7's sandbox, with the
// fields of each library, as read off redis-server 7.0 by iterating _G.
// print, dofile, loadfile, require, module, os, io and debug are absent:
// Redis removes them, so they are undefined here too.
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

// StdGlobals returns the names of Redis's standard globals and, for the
// libraries, their fields; a tool that configures another linter (or a
// .luacheckrc) for Redis can build its standard from this.
func StdGlobals() map[string][]string {
	out := map[string][]string{}
	for name, g := range redisStd {
		var fs []string
		for f := range g.fields {
			fs = append(fs, f)
		}
		out[name] = fs
	}
	return out
}

// globalsFor merges the standard with a config's extra globals.
func globalsFor(cfg *Config) map[string]*stdGlobal {
	if cfg == nil || len(cfg.Globals)+len(cfg.ReadGlobals) == 0 {
		return redisStd
	}
	m := make(map[string]*stdGlobal, len(redisStd)+len(cfg.Globals)+len(cfg.ReadGlobals))
	for k, v := range redisStd {
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
