// Package luasyntax is the one strict Lua 5.1 lexer and parser of redlua:
// positions with columns, comments kept, Lua 5.1's grammar and limits, and
// the Lua 5.2+ constructs Redis's Lua 5.1 rejects (goto, labels, //, the
// bitwise operators, ...) recorded instead of failing the parse, so the
// caller decides how to report them. The registry judges a script's syntax
// with it at registration, and lint runs its analyzers over its trees, so
// both word a syntax error and position it the same way.
package luasyntax
