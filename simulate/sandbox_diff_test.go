package simulate

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sandboxCase is one script run the same way on a real server and on the
// simulator.
type sandboxCase struct {
	name string
	src  string
	keys []string
	args []any
}

// sandboxCases cover the Redis 7.0 sandbox rules: globals, libraries,
// conversions, redis.* functions, flags and error formats.
var sandboxCases = []sandboxCase{
	// global protection
	{name: "read undefined global", src: "return x"},
	{name: "write global", src: "x = 1"},
	{name: "define global function", src: "function f() end"},
	{name: "rawset _G", src: "rawset(_G, 'x', 1)"},
	{name: "setmetatable _G", src: "setmetatable(_G, nil)"},
	{name: "modify library", src: "string.x = 1"},
	{name: "modify redis table", src: "redis.call = nil"},
	{name: "rawget _G", src: "return type(rawget(_G, 'redis'))"},
	{name: "global via _G", src: "return _G.nope"},
	{name: "KEYS writable", src: "KEYS[1] = 'x' return KEYS[1]", keys: []string{"{t}a"}},
	{name: "ARGV insert", src: "table.insert(ARGV, 'x') return #ARGV", args: []any{"a"}},
	{name: "local table", src: "local t = {} t.x = 1 return t.x"},
	// library allow-list
	{name: "print", src: "return print"},
	{name: "dofile", src: "return dofile"},
	{name: "loadfile", src: "return loadfile"},
	{name: "require", src: "return require"},
	{name: "module", src: "return module"},
	{name: "getfenv", src: "return getfenv"},
	{name: "newproxy", src: "return newproxy"},
	{name: "os", src: "return os"},
	{name: "debug", src: "return debug"},
	{name: "io", src: "return io"},
	{name: "base functions", src: "return {type(loadstring), type(load), type(gcinfo), type(collectgarbage), type(unpack), type(xpcall), type(coroutine), _VERSION}"},
	{name: "globals list", src: "local t = {} for k in pairs(_G) do if k ~= 'bit' and k ~= 'cjson' and k ~= 'struct' and k ~= 'cmsgpack' then t[#t+1] = k end end table.sort(t) return t"},
	{name: "string library", src: "local t = {} for k in pairs(string) do t[#t+1] = k end table.sort(t) return t"},
	{name: "table library", src: "local t = {} for k in pairs(table) do t[#t+1] = k end table.sort(t) return t"},
	{name: "math library", src: "local t = {} for k in pairs(math) do t[#t+1] = k end table.sort(t) return t"},
	{name: "redis library", src: "local t = {} for k in pairs(redis) do t[#t+1] = k end table.sort(t) return t"},
	{name: "string methods", src: "return {('ab'):rep(3), ('x'):upper(), string.format('%d-%s', 3, 'y')}"},
	{name: "table.getn", src: "return table.getn({1, 2, 3})"},
	{name: "table.foreachi", src: "local s = 0 table.foreachi({4, 5}, function(i, v) s = s + i * v end) return s"},
	{name: "table.foreachi stops", src: "return table.foreachi({4, 5, 6}, function(i, v) if v == 5 then return i * 10 end end)"},
	{name: "table.foreach stops", src: "return table.foreach({x = 7}, function(k, v) return k .. v end)"},
	{name: "loadstring sandboxed", src: "return loadstring('return 1 + 1')()"},
	{name: "loadstring cannot write globals", src: "return loadstring('x = 5')()"},
	// number formatting and parsing
	{name: "tostring", src: "return {tostring(0.1 + 0.2), tostring(1e15), tostring(-0), tostring(2^53), tostring(1e100), tostring(-1.5e-7), tostring(100000000000000)}"},
	{name: "infinities", src: "local z = 0 return {tostring(1/z), tostring(-1/z), tostring(z/z)}"},
	{name: "concat numbers", src: "return 'a' .. 1e15 .. (0.1 + 0.2) .. 3"},
	{name: "table.concat numbers", src: "return table.concat({1e15, 0.1, 7}, ',')"},
	{name: "tonumber", src: "return {tostring(tonumber('1e3')), tostring(tonumber(' 10 ')), tostring(tonumber('0x1A')), tostring(tonumber('1e')), tostring(tonumber('')), tostring(tonumber('10', 16)), tostring(tonumber('z', 36)), tostring(tonumber('.5')), tostring(tonumber('5.')), tostring(tonumber('0x')), tostring(tonumber('1 2'))}"},
	{name: "tonumber hex and inf", src: "return {tostring(tonumber('0x1p4')), tostring(tonumber('0x1.8')), tostring(tonumber('-0x10')), tostring(tonumber('infinity')), tostring(tonumber('-inf')), tostring(tonumber('1e400')), tostring(tonumber('+5')), tostring(tonumber('\\t5\\n'))}"},
	{name: "tonumber bad base", src: "return tonumber('10', 99)"},
	{name: "number arguments", src: "redis.call('set', KEYS[1], 0.1 + 0.2) redis.call('set', KEYS[2], 1e15) redis.call('set', KEYS[3], 3.0) return {redis.call('get', KEYS[1]), redis.call('get', KEYS[2]), redis.call('get', KEYS[3])}", keys: []string{"{t}a", "{t}b", "{t}c"}},
	// Lua -> reply
	{name: "array conversion", src: "return {1, 2.7, -2.7, 'a', true, false, nil, 'b'}"},
	{name: "big numbers", src: "return {1e20, -1e20}"},
	{name: "nested", src: "return {1, {2, {3, 'x'}}}"},
	{name: "true", src: "return true"},
	{name: "false", src: "return false"},
	{name: "nil", src: "return nil"},
	{name: "status table", src: "return {ok = 'fine'}"},
	{name: "status with newline", src: "return {ok = 'a\\nb'}"},
	{name: "error table", src: "return {err = 'MY x'}"},
	{name: "error table number", src: "return {err = 5}"},
	{name: "double", src: "return {double = 3.5}"},
	{name: "map", src: "return {map = {a = 1}}"},
	{name: "set", src: "return {set = {a = true}}"},
	{name: "big_number", src: "return {big_number = '123456789012345678901234567890'}"},
	{name: "setresp 3 true", src: "redis.setresp(3) return true"},
	{name: "setresp 3 false", src: "redis.setresp(3) return false"},
	// reply -> Lua
	{name: "status to table", src: "local r = redis.call('set', KEYS[1], 'v') return {type(r), r.ok}", keys: []string{"{t}a"}},
	{name: "nil bulk to false", src: "local r = redis.call('get', KEYS[1]) return {type(r), tostring(r)}", keys: []string{"{t}missing"}},
	{name: "resp3 null to nil", src: "redis.setresp(3) local r = redis.call('get', KEYS[1]) return type(r)", keys: []string{"{t}missing"}},
	{name: "hgetall resp2", src: "redis.call('hset', KEYS[1], 'f', 'v') return redis.call('hgetall', KEYS[1])", keys: []string{"{t}h"}},
	{name: "hgetall resp3", src: "redis.call('hset', KEYS[1], 'f', 'v') redis.setresp(3) local r = redis.call('hgetall', KEYS[1]) return {type(r.map), r.map.f}", keys: []string{"{t}h"}},
	// redis.call and redis.pcall
	{name: "unknown command", src: "return redis.call('nosuch')"},
	{name: "unknown command pcall", src: "return redis.pcall('nosuch')"},
	{name: "script arity", src: "return redis.call('get')"},
	{name: "script arity pcall", src: "return redis.pcall('get')"},
	{name: "noscript command", src: "return redis.call('client', 'list')"},
	{name: "blocking command", src: "return redis.call('blpop', KEYS[1], 0)", keys: []string{"{t}l"}},
	// 7.2 lets scripts call the blocking forms (they never block there),
	// WAIT, and its new WAITAOF and CLUSTER MYSHARDID; 7.0 refuses them.
	{name: "brpoplpush and blmove", src: "redis.call('rpush', KEYS[1], 'a', 'b', 'c') return {redis.pcall('brpoplpush', KEYS[1], KEYS[2], 0), redis.pcall('brpoplpush', KEYS[3], KEYS[2], 0), redis.pcall('brpoplpush', KEYS[1], KEYS[2], -1), redis.pcall('blmove', KEYS[1], KEYS[2], 'LEFT', 'LEFT', 0), redis.pcall('blmove', KEYS[1], KEYS[2], 'UP', 'LEFT', -1), redis.pcall('blmove', KEYS[1], KEYS[2], 'LEFT', 'RIGHT', 'x'), redis.pcall('blmove', KEYS[3], KEYS[2], 'LEFT', 'RIGHT', 0), redis.call('lrange', KEYS[2], 0, -1)}", keys: []string{"{t}l", "{t}m", "{t}n"}},
	{name: "bzpopmin and bzpopmax", src: "redis.call('zadd', KEYS[1], 1, 'a', 2.5, 'b', 3, 'c') redis.call('set', KEYS[2], 'x') return {redis.pcall('bzpopmin', KEYS[3], KEYS[1], 0), redis.pcall('bzpopmax', KEYS[1], 0), redis.pcall('bzpopmin', KEYS[2], KEYS[1], 0), redis.pcall('bzpopmin', KEYS[3], 0), redis.pcall('bzpopmax', KEYS[1], -1), redis.pcall('bzpopmin', KEYS[1], 'x'), redis.call('zrange', KEYS[1], 0, -1)}", keys: []string{"{t}z", "{t}s", "{t}n"}},
	{name: "bzpopmin resp3", src: "redis.call('zadd', KEYS[1], 1.5, 'a') redis.setresp(3) local r = redis.pcall('bzpopmin', KEYS[1], 0) if r.err then return r end return {r[1], r[2], tostring(r[3].double)}", keys: []string{"{t}z"}},
	{name: "wait", src: "return {redis.pcall('wait', 0, 0), redis.pcall('wait', 1, 100), redis.pcall('wait', 'x', 0), redis.pcall('wait', 0, -1), redis.pcall('wait', 0, 'x'), redis.pcall('wait', 0, '9223372036854775807'), redis.pcall('wait', 0)}"},
	{name: "waitaof", src: "return {redis.pcall('waitaof', 0, 0, 0), redis.pcall('waitaof', 1, 0, 0), redis.pcall('waitaof', 2, 0, 0), redis.pcall('waitaof', 'x', 0, 0), redis.pcall('waitaof', 0, -1, 0), redis.pcall('waitaof', 0, 0, -1), redis.pcall('waitaof', 0, 0, 'x'), redis.pcall('waitaof', 0, 0, '9223372036854775807')}"},
	{name: "zrank withscore", src: "redis.call('zadd', KEYS[1], 1, 'a', 2.5, 'b') return {redis.pcall('zrank', KEYS[1], 'b', 'withscore'), redis.pcall('zrevrank', KEYS[1], 'b', 'WITHSCORE'), redis.pcall('zrank', KEYS[1], 'nope', 'withscore'), redis.pcall('zrank', KEYS[1], 'b', 'withscores'), redis.pcall('zrank', KEYS[1], 'b', 'withscore', 'x'), redis.pcall('zrank', KEYS[2], 'b', 'withscore'), redis.pcall('zrank', KEYS[1], 'b')}", keys: []string{"{t}z", "{t}n"}},
	{name: "zrank withscore resp3", src: "redis.call('zadd', KEYS[1], 1, 'a', 2.5, 'b') redis.setresp(3) local r = redis.call('zrevrank', KEYS[1], 'a', 'withscore') return {r[1], tostring(r[2].double)}", keys: []string{"{t}z"}},
	{name: "cluster myshardid", src: "return {redis.pcall('cluster', 'myshardid'), redis.pcall('cluster', 'myshardid', 'x'), redis.pcall('cluster', 'myid'), redis.pcall('cluster', 'slot-stats', 'orderby', 'key-count'), redis.pcall('cluster', 'slot-stats')}"},
	{name: "no arguments", src: "return redis.call()"},
	{name: "bad argument type", src: "return redis.call({})"},
	{name: "nil argument", src: "return redis.pcall('get', KEYS[1])"},
	{name: "command error raised", src: "redis.call('set', KEYS[1], 'x') return redis.call('incr', KEYS[1])", keys: []string{"{t}s"}},
	{name: "command error pcall", src: "redis.call('set', KEYS[1], 'x') local r = redis.pcall('incr', KEYS[1]) return {type(r), r.err}", keys: []string{"{t}s"}},
	{name: "pcall of redis.call", src: "local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), type(e), e}"},
	{name: "pcall of error table", src: "local ok, e = pcall(error, {err = 'x'}) return {tostring(ok), e}"},
	{name: "pcall of global", src: "local ok, e = pcall(function() return x end) return {tostring(ok), e}"},
	{name: "case-insensitive command", src: "return {redis.call('PING'), redis.call('ping')}"},
	// error formats
	{name: "error string", src: "error('boom')"},
	{name: "error level 0", src: "error('x', 0)"},
	{name: "error number", src: "error(42)"},
	{name: "error nil", src: "error()"},
	{name: "error table", src: "error({err = 'My err'})"},
	{name: "error table with code", src: "error({err = '-MY x'})"},
	{name: "error_reply raised", src: "error(redis.error_reply('boom'))"},
	{name: "error on line 3", src: "local a = 1\nlocal b = 2\nreturn redis.call('nosuch')"},
	{name: "error in function", src: "local function f()\n  return nosuch\nend\nreturn f()"},
	{name: "concat nil local", src: "local a = nil return 'x' .. a"},
	{name: "concat nil field", src: "local t = {} return 'x' .. t.y"},
	// redis.* helpers
	{name: "error_reply", src: "return redis.error_reply('x')"},
	{name: "error_reply with code", src: "return redis.error_reply('MY x')"},
	{name: "error_reply with dash", src: "return redis.error_reply('-MY x')"},
	{name: "error_reply empty", src: "return redis.error_reply('')"},
	{name: "error_reply bad", src: "return redis.error_reply(5)"},
	{name: "error_reply field", src: "return redis.error_reply('x').err"},
	{name: "status_reply", src: "return redis.status_reply('OK2')"},
	{name: "status_reply bad", src: "return redis.status_reply()"},
	{name: "sha1hex", src: "return {redis.sha1hex(''), redis.sha1hex('abc'), redis.sha1hex(12)}"},
	{name: "sha1hex bad", src: "return redis.sha1hex()"},
	{name: "log", src: "redis.log(redis.LOG_WARNING, 'from a test') return 1"},
	{name: "log one argument", src: "return redis.log(1)"},
	{name: "log bad level", src: "return redis.log(99, 'x')"},
	{name: "setresp bad", src: "return redis.setresp(4)"},
	{name: "setresp none", src: "return redis.setresp()"},
	{name: "setresp string", src: "redis.setresp('3') return redis.setresp('x')"},
	{name: "set_repl string", src: "return redis.set_repl('x')"},
	{name: "sha1hex table", src: "return redis.sha1hex({})"},
	{name: "status_reply newline", src: "return redis.status_reply('a\\nb')"},
	{name: "error_reply newline", src: "return redis.error_reply('a\\nb')"},
	{name: "nested status and error", src: "return {1, {err = 'x'}, {ok = 'fine'}, 3}"},
	{name: "map with false", src: "return {map = {[1] = true, x = false}}"},
	{name: "resp3 map with false", src: "redis.setresp(3) return {map = {[1] = true, x = false}}"},
	{name: "double as string", src: "return {double = '1.5'}"},
	{name: "log level as string", src: "return redis.log('x', 'y')"},
	{name: "acl_check_cmd unknown subcommand", src: "return redis.acl_check_cmd('client', 'nosuch')"},
	{name: "set_repl", src: "return redis.set_repl(redis.REPL_ALL)"},
	{name: "set_repl bad", src: "return redis.set_repl(99)"},
	{name: "set_repl none", src: "return redis.set_repl()"},
	{name: "replicate_commands", src: "return redis.replicate_commands()"},
	{name: "breakpoint", src: "return redis.breakpoint()"},
	{name: "constants", src: "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL, redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}"},
	{name: "acl_check_cmd", src: "return {redis.acl_check_cmd('get', 'x'), redis.pcall(redis.acl_check_cmd, 'nosuch')}"},
	// error texts kept in errors.go
	{name: "acl_check_cmd no args", src: "return redis.acl_check_cmd()"},
	{name: "call no args", src: "return redis.pcall()"},
	{name: "error_reply no args", src: "return redis.error_reply()"},
	{name: "status_reply not a string", src: "return redis.status_reply(1)"},
	{name: "sha1hex no args", src: "return redis.sha1hex()"},
	{name: "random empty interval", src: "return {pcall(function() return math.random(0) end)}"},
	{name: "random empty interval 2", src: "return {pcall(function() return math.random(2, 1) end)}"},
	{name: "random three args", src: "return math.random(1, 2, 3)"},
	{name: "nonexistent global", src: "return {pcall(function() return nosuch end)}"},
	{name: "readonly table", src: "return {pcall(function() string.x = 1 end)}"},
	// syntax
	{name: "goto", src: "goto a\n::a::"},
	{name: "label", src: "::a::"},
	{name: "syntax error", src: "x = = 1"},
	// shebang flags
	{name: "no-writes write", src: "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'b')", keys: []string{"{t}a"}},
	{name: "no-writes read", src: "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", keys: []string{"{t}a"}},
	// may-replicate commands count as writes for no-writes scripts
	{name: "no-writes publish", src: "#!lua flags=no-writes\nreturn redis.call('publish', 'c', 'm')"},
	{name: "no-writes spublish", src: "#!lua flags=no-writes\nreturn redis.call('spublish', '{t}c', 'm')"},
	{name: "no-writes pfcount", src: "#!lua flags=no-writes\nreturn redis.call('pfcount', KEYS[1])", keys: []string{"{t}a"}},
	{name: "unknown flag", src: "#!lua flags=foo\nreturn 1"},
	{name: "unknown option", src: "#!lua xyz\nreturn 1"},
	{name: "unknown engine", src: "#!luax\nreturn 1"},
	{name: "shebang only", src: "#!lua"},
	{name: "plain shebang", src: "#!lua\nreturn redis.call('set', KEYS[1], 'b')", keys: []string{"{t}a"}},
	{name: "shebang line numbers", src: "#!lua\n\nreturn redis.call('nosuch')"},
	// arguments as go-redis sends them
	{name: "argument conversion", src: "return ARGV", args: []any{"s", []byte("b"), 7, int64(-3), uint8(9), 1.5, float32(0.25), 1e21, true, false, nil, 2 * time.Millisecond}},
	{name: "one slice argument", src: "return ARGV", args: []any{[]string{"x", "y"}}},
	{name: "one nil argument", src: "return #ARGV", args: []any{nil}},
	{name: "runtime errors", src: "return {pcall(function() return nil + 1 end), pcall(function() return {} < {} end), pcall(function() for i = 1, 'x' do end end)}"},
	{name: "setmetatable on a number", src: "return setmetatable(1, {})"},
	// standard library and runtime errors as Lua 5.1 in Redis has them
	{name: "stdlib 2", src: "return nil + 1"},
	{name: "stdlib 3", src: "return {} < {}"},
	{name: "stdlib 4", src: "for i = 1, 'x' do end"},
	{name: "stdlib 5", src: "return 2^'a'"},
	{name: "stdlib 6", src: "return 10 % nil"},
	{name: "stdlib 7", src: "return 1 < 'x'"},
	{name: "stdlib 9", src: "return setmetatable(1, {})"},
	{name: "stdlib 10", src: "return assert(false)"},
	{name: "stdlib 11", src: "return assert(false, 'msg')"},
	{name: "stdlib 12", src: "return tonumber()"},
	{name: "stdlib 13", src: "return select(-5, 1)"},
	{name: "stdlib 14", src: "return unpack(nil)"},
	{name: "stdlib 15", src: "return math.floor('a')"},
	{name: "stdlib 16", src: "return string.format('%s %s %s', 1e15, 0.1, 3)"},
	{name: "stdlib 17", src: "return string.format('%5.1f|%-5d|%x|%X|%o|%e|%g|%c', 3.14159, 42, 255, 255, 8, 12345.678, 0.0001, 65)"},
	{name: "stdlib 18", src: "return string.format('%q', 'a\"b\\nc\\0d')"},
	{name: "stdlib 19", src: "return string.format('%10s|%-10s|', 'hi', 'hi')"},
	{name: "stdlib 20", src: "return string.format('%d', 3.7)"},
	{name: "stdlib 21", src: "return string.format('%i', 3)"},
	{name: "stdlib 22", src: "return string.format('%5.2s', 'abc')"},
	{name: "stdlib 23", src: "return string.format('%%')"},
	{name: "stdlib 24", src: "return string.format('%d')"},
	{name: "stdlib 25", src: "return {string.sub('hello', -3), string.sub('hello', 2, -2), string.sub('hello', 0), string.sub('hello', 10)}"},
	{name: "stdlib 26", src: "return {string.find('hello world', 'o w'), string.find('hello', 'l+'), string.find('a.b', '.', 1, true)}"},
	{name: "stdlib 27", src: "return {string.match('key:123', '(%a+):(%d+)')}"},
	{name: "stdlib 28", src: "return string.gsub('hello world', 'o', '0')"},
	{name: "stdlib 29", src: "return string.gsub('abc', '%w', '%0%0')"},
	{name: "stdlib 30", src: "return string.gsub('abc', '', '-')"},
	{name: "stdlib 31", src: "return {string.byte('ABC', 1, -1)}"},
	{name: "stdlib 32", src: "return string.char(72, 105)"},
	{name: "stdlib 33", src: "return string.rep('x', 0)"},
	{name: "stdlib 34", src: "return string.rep('x', -1)"},
	{name: "stdlib 35", src: "return string.len('\\0ab')"},
	{name: "stdlib 36", src: "return string.reverse('abc')"},
	{name: "stdlib 37", src: "return {string.lower('ABC'), string.upper('abc')}"},
	{name: "stdlib 38", src: "local t = {} for w in string.gmatch('one two three', '%a+') do t[#t+1] = w end return t"},
	{name: "stdlib 39", src: "return tostring(math.huge)"},
	{name: "stdlib 40", src: "return {math.floor(3.7), math.ceil(3.2), math.max(1, 5, 3), math.min(4, 2), math.abs(-3), math.fmod(7, 3), math.sqrt(16), math.pow(2, 10)}"},
	{name: "stdlib 41", src: "return tostring(math.pi)"},
	{name: "stdlib 42", src: "return {math.modf(3.7)}"},
	{name: "stdlib 43", src: "return tostring(select('#', 1, 2, 3))"},
	{name: "stdlib 44", src: "return {select(2, 'a', 'b', 'c')}"},
	{name: "stdlib 45", src: "return {unpack({1, 2, 3})}"},
	{name: "stdlib 46", src: "local t = {3, 1, 2} table.sort(t) return t"},
	{name: "stdlib 47", src: "local t = {3, 1, 2} table.sort(t, function(a, b) return a > b end) return t"},
	{name: "stdlib 48", src: "local t = {1, 2, 3} table.remove(t, 1) return t"},
	{name: "stdlib 49", src: "local t = {1, 2, 3} table.insert(t, 2, 9) return t"},
	{name: "stdlib 50", src: "return table.maxn({1, 2, nil, 4})"},
	{name: "stdlib 51", src: "return #{1, 2, nil, 4}"},
	{name: "stdlib 52", src: "return tostring(next({}))"},
	{name: "stdlib 53", src: "return type(coroutine.create(function() end))"},
	{name: "stdlib 54", src: "local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end) return {co(1), co(5)}"},
	{name: "stdlib 55", src: "return tostring(rawequal('a', 'a'))"},
	{name: "stdlib 56", src: "return tostring(2^63 == 2^63 + 1)"},
	{name: "stdlib 57", src: "return 7 % -3"},
	{name: "stdlib 58", src: "return -7 % 3"},
	{name: "stdlib 59", src: "return 5 // 2"},
	{name: "stdlib 60", src: "return 0x10"},
	{name: "stdlib 61", src: "return 1e2"},
	{name: "stdlib 62", src: "return 'a' < 'b'"},
	{name: "stdlib 63", src: "return tostring(10 == '10')"},
	{name: "stdlib 64", src: "return '10' * '2'"},
	{name: "stdlib 65", src: "return ' 0x10 ' + 0"},
	{name: "stdlib 66", src: "return '1e1' + 0"},
	{name: "stdlib 67", src: "return math.floor(-0.0)"},
	{name: "stdlib 68", src: "return tostring(-0.0)"},
	{name: "stdlib 69", src: "return string.format('%.3f', 1/3)"},
	{name: "stdlib 70", src: "return tostring(1e308 * 10)"},
	{name: "stdlib 71", src: "return collectgarbage('count') > 0"},
	{name: "stdlib 72", src: "return type(gcinfo())"},
	{name: "stdlib 73", src: "return assert(1 == 1, 'x')"},
	{name: "stdlib 74", src: "return string.format('%g|%g|%g|%g|%.3g|%10.4f|%-8.2e|%+d|% d|%05d', 1e20, 3.14159265, 100000, 1000000, 2/3, 1/3, 12345.678, 5, 5, 42)"},
	{name: "stdlib 75", src: "return string.format('%s|%s|%s', true, nil, 'x')"},
	{name: "stdlib 76", src: "return string.format('%d', 'x')"},
	{name: "stdlib 77", src: "return string.format('%d', '12')"},
	{name: "stdlib 78", src: "return string.format('%5.1s|', 'abc')"},
	{name: "stdlib 79", src: "return string.format('%c%c', 104, 105)"},
	{name: "stdlib 80", src: "return string.format('%x', -1)"},
	{name: "stdlib 81", src: "return string.format('%u', 3.9)"},
	{name: "stdlib 82", src: "return string.format('%z', 1)"},
	// runtime errors name the variable as Lua 5.1 does
	{name: "named runtime error 1", src: "local t = nil return t.x"},
	{name: "named runtime error 2", src: "local t = {} return t.a.b"},
	{name: "named runtime error 3", src: "local f = nil f()"},
	{name: "named runtime error 4", src: "local t = {} t.f()"},
	{name: "named runtime error 5", src: "local a = 'x' return a + 1"},
	{name: "named runtime error 6", src: "local s = 'abc' return s:nosuch()"},
	{name: "named runtime error 7", src: "return ('x'):bad()"},
	{name: "named runtime error 8", src: "local t = nil t.x = 1"},
	{name: "named runtime error 9", src: "local t = {} t.a.b = 1"},
	{name: "named runtime error 10", src: "local function g() local u = nil return function() return u.x end end return g()()"},
	{name: "named runtime error 11", src: "local a, b = 1, nil return a + b"},
	{name: "named runtime error 12", src: "return KEYS.x.y"},
	{name: "named runtime error 13", src: "local t = nil\nlocal u = {}\nreturn u.v .. t.x"},
	{name: "named runtime error 14", src: "local ok, e = pcall(function() local t = nil return t.x end) return e"},
	{name: "named runtime error 15", src: "local ok, e = pcall(function() local q = {} return q.r.s end) return e"},
	{name: "named runtime error 16", src: "local t = {} return t.y()"},
	{name: "named runtime error 17", src: "local t = {a = {}} return t.a.b.c"},
	{name: "named runtime error 18", src: "for i = 1, 2 do local z = nil z() end"},
	{name: "named runtime error 19", src: "local k = {} local v = k[1][2] return v"},
	{name: "stack overflow", src: "local function f(n) return f(n + 1) + 1 end return f(1)"},
	{name: "deep recursion", src: "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(150)"},
	{name: "unary error 1", src: "return -{}"},
	{name: "unary error 2", src: "local t = {} return -t"},
	{name: "unary error 3", src: "return #nil"},
	{name: "unary error 4", src: "local n = 5 return #n"},
	{name: "unary error 5", src: "local t = {x = true} return #t.x"},
	{name: "unary error 6", src: "local s = 'a' return -s"},
	{name: "unary error 7", src: "return -KEYS"},
	{name: "unary error 8", src: "local a = {} return #a + #nil"},
	{name: "argument error 1", src: "return string.rep()"},
	{name: "argument error 2", src: "return string.sub()"},
	{name: "argument error 3", src: "return string.rep('x')"},
	{name: "argument error 4", src: "return string.rep('x', nil)"},
	{name: "argument error 5", src: "return math.floor()"},
	{name: "argument error 6", src: "return tostring()"},
	{name: "argument error 7", src: "return setmetatable()"},
	{name: "argument error 8", src: "return table.insert()"},
	{name: "argument error 9", src: "return string.byte()"},
	{name: "argument error 10", src: "return ('x'):rep()"},
	{name: "argument error 11", src: "return type()"},
	{name: "argument error 12", src: "return ('x'):rep('y')"},
	{name: "argument error 13", src: "local s = 5 return s:rep(2)"},
	{name: "argument error 14", src: "return ('x'):sub({})"},
	// math.random with a fixed seed
	{name: "randomseed", src: "math.randomseed(7) return {math.random(1000000), math.random(1000000), math.random(5, 10), math.random() < 1}"},
}

// TestSandboxMatchesRedis runs every sandbox case on a real redis-server
// and on the simulator and compares the replies and errors.
func TestSandboxMatchesRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	for _, tc := range sandboxCases {
		t.Run(tc.name, func(t *testing.T) {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			want := outcomeOf(client.Eval(ctx, tc.src, tc.keys, tc.args...))
			sim := diffNew(t)
			got := outcomeOf(sim.RunSource(ctx, tc.src, tc.keys, tc.args...))
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("%s: simulator differs from redis-server (-redis +simulator):\n%s", tc.src, diff)
			}
		})
	}
}

// TestRandomMatchesFreshServer checks that math.random starts where a
// fresh redis-server's generator starts, and continues across scripts.
func TestRandomMatchesFreshServer(t *testing.T) {
	client := diffStandalone(t).Client()
	ctx := context.Background()
	sim := diffNew(t)
	const src = "return {math.random(1000000), math.random(1000000)}"
	for i := 0; i < 3; i++ {
		want := outcomeOf(client.Eval(ctx, src, nil))
		got := outcomeOf(sim.RunSource(ctx, src, nil))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("run %d differs (-redis +simulator):\n%s", i, diff)
		}
	}
}
