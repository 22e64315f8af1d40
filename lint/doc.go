// Package lint checks Redis Lua scripts: the analyzers behind
// cmd/luacheck, importable so that a user's own test can lint the scripts
// it ships.
//
// It has its own Lua 5.1 lexer and parser (positions with columns,
// comments kept for inline options), a name resolver, a liveness pass, and
// analyzers in the style of golang.org/x/tools/go/analysis: each has a
// name, a doc and the codes it reports. Where a check is the same as the
// real luacheck's, it uses luacheck's code and message; the Redis family
// (9xx) covers what only a Redis-aware linter can see: keys that do not
// come from KEYS, KEYS/ARGV against a redlua header, commands (unknown,
// arity, denied, blocking, writes in no-writes scripts), Lua 5.2+ syntax
// that Redis's Lua 5.1 rejects, and the shebang and header. CODES.md lists
// every code.
//
// The standard globals are Redis 7's sandbox, not plain Lua: KEYS, ARGV,
// redis.*, cjson, bit, struct, cmsgpack, string, table, math, coroutine
// and the base functions Redis keeps. print, require, dofile, loadfile,
// os and io are undefined, because Redis removes them.
//
// Check never panics on any input; FuzzCheck holds it to that.
package lint
