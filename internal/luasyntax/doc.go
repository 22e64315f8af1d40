// Package luasyntax is the one strict Lua 5.1 lexer and parser of redlua:
// positions with columns, comments kept, Lua 5.1's grammar and limits, and
// the Lua 5.2+ constructs Redis's Lua 5.1 rejects (goto, labels, //, the
// bitwise operators, ...) recorded instead of failing the parse, so the
// caller decides how to report them. Parse words a syntax error as
// luacheck does (lint's E011); CheckLua51 compiles as Redis's Lua 5.1 does
// and words and places the error as Redis reports it, which the registry
// uses at registration.
package luasyntax
