package simulate

import (
	"context"
	"strings"
	"testing"
)

// TestSandboxTexts pins the replies of the main sandbox rules, as
// redis-server 7.0.15 gives them (TestSandboxMatchesRedis compares with a
// live server; this test also runs where none is installed). "<sha>" stands
// for the script's SHA1.
func TestSandboxTexts(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"return x", "ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: <sha>, on @user_script:1."},
		{"x = 1", "ERR user_script:1: Attempt to modify a readonly table script: <sha>, on @user_script:1."},
		{"rawset(_G, 'x', 1)", "ERR Attempt to modify a readonly table script: <sha>, on @user_script:1."},
		{"string.x = 1", "ERR user_script:1: Attempt to modify a readonly table script: <sha>, on @user_script:1."},
		{"return print", "ERR user_script:1: Script attempted to access nonexistent global variable 'print' script: <sha>, on @user_script:1."},
		{"goto a\n::a::", "ERR Error compiling script (new function): user_script:1: '=' expected near 'a'"},
		// Upstream builds of every supported server (LUA_COMPAT_LSTR 1);
		// Debian's 7.0.15 accepts it.
		{"return [[a [[b]]", "ERR Error compiling script (new function): user_script:1: nesting of [[...]] is deprecated near '['"},
		{"#!lua\nreturn 1 --[[ a\n[[ b ]]", "ERR Error compiling script (new function): user_script:3: nesting of [[...]] is deprecated near '['"},
		{"\n\nreturn redis.call('nosuch')", "ERR Unknown Redis command called from script script: <sha>, on @user_script:3."},
		{"return redis.call('get')", "ERR Wrong number of args calling Redis command from script script: <sha>, on @user_script:1."},
		{"return redis.pcall('get')", "ERR Wrong number of args calling Redis command from script"},
		{"return redis.call('client', 'list')", "ERR This Redis command is not allowed from script script: <sha>, on @user_script:1."},
		{"#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')", "ERR Write commands are not allowed from read-only scripts. script: <sha>, on @user_script:2."},
		{"#!lua flags=foo\nreturn 1", "ERR Unexpected flag in script shebang: foo"},
		{"error('boom')", "ERR user_script:1: boom script: <sha>, on @user_script:1."},
		{"error({err = 'MY x'})", "MY x script: <sha>, on @user_script:1."},
		{"return redis.error_reply('x')", "ERR x"},
		{"return {err = 'MY x'}", "MY x"},
		{"return redis.setresp(4)", "ERR RESP version must be 2 or 3. script: <sha>, on @user_script:1."},
		{"local t = nil return t.x", "ERR user_script:1: attempt to index local 't' (a nil value) script: <sha>, on @user_script:1."},
	} {
		err := New().RunSource(context.Background(), tc.src, []string{"k"}).Err()
		want := strings.ReplaceAll(tc.want, "<sha>", sha1Hex(tc.src))
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, want)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"return tostring(0.1 + 0.2) .. ' ' .. tostring(1e15) .. ' ' .. 2^53", "0.3 1e+15 9.007199254741e+15"},
		{"return tostring(tonumber('1e3')) .. tostring(tonumber(' 10 ')) .. tostring(tonumber('1e'))", "100010nil"},
		{"local ok, e = pcall(redis.call, 'nosuch') return e", "ERR Unknown Redis command called from script"},
		{"return redis.REDIS_VERSION", RedisVersion},
		{"return _VERSION", "Lua 5.1"},
		{"local f, e = loadstring('return [[a [[b]]') return e", `[string "return [[a [[b]]"]:1: nesting of [[...]] is deprecated near '['`},
		{"return string.format('%s %5.2f %d', 1e15, 1/3, 7)", "1e+15  0.33 7"},
	} {
		got, err := New().RunSource(context.Background(), tc.src, nil).Text()
		if err != nil || got != tc.want {
			t.Errorf("%q = %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
}

// A library with a "[[" nested in a long string fails FUNCTION LOAD as
// upstream servers fail it (Redis 7.2.6: "user_function:2: nesting of
// [[...]] is deprecated near '['").
func TestFunctionLoadRefusesANestedLongBracket(t *testing.T) {
	code := "#!lua name=l\nredis.register_function('f', function() return [[a [[b]] end)"
	err := New().Do(context.Background(), "FUNCTION", "LOAD", code).Err()
	want := "ERR Error compiling function: user_function:2: nesting of [[...]] is deprecated near '['"
	if err == nil || err.Error() != want {
		t.Errorf("FUNCTION LOAD = %v, want %s", err, want)
	}
}
