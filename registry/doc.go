// Package registry is the one owner of redlua's script contract: what a
// script file must look like, what it declares, and how it is named. It
// does no I/O beyond reading an fs.FS and links no Redis client; running
// and loading scripts is evalsha's job, simulating them simulate's.
//
// A script is one file per version, named "name.vVERSION.lua", and starts
// with an optional Redis 7 shebang and a header of comment lines:
//
//	#!lua flags=no-writes
//	-- name: mutex.inspect
//	-- version: 1
//	-- description: Report who holds the lock.
//	-- keys: lock
//	-- args:
//	-- returns: the holder, or nil
//	return redis.call('GET', KEYS[1])
//
// ParseScript (one file) and New (every *.lua file of one or more fs.FS)
// check all of it before anything reaches a server, and report every
// problem at once as *Error values with file:line:column and a hint:
//
//   - the shebang by Redis 7's rules (ParseShebang, the one flag parser);
//   - the header: required fields, a valid name and version, KEYS and ARGV
//     names ("name..." for a variadic tail), each field once; a header
//     that is there but malformed (misplaced, misspelt) is one problem
//     saying so;
//   - the Lua syntax, as Redis's Lua 5.1 compiles it: an error is
//     reported in Redis's words at Redis's line ("user_script:3: 'end'
//     expected (to close 'if' at line 1) near 'print'"), naming the Lua
//     5.2+ construct (goto, //, ...) when that is the cause, rather than
//     failing at SCRIPT LOAD;
//   - every literal KEYS[i] and ARGV[i] against the header (IndexProblem);
//   - in New, the file name against the header's name@version.
//
// A parsed Script carries its header fields with their lines, its flags,
// its SHA1 (as SCRIPT LOAD returns it) and a legacy variant for servers
// older than Redis 7, which cannot compile the shebang. CheckCall checks a
// call's key and argument counts the same way for every backend.
//
// Recorded versions never change: a sum file (Sum, ReadSum, VerifySum,
// Record, Release; cmd/luasum) is the ledger of every name@version ever
// recorded and its SHA1, like go.sum, and a changed recorded file fails
// verification. A change is a new version. Versions of a tagged release are
// marked released and must stay; others may be retired, never reused.
package registry
