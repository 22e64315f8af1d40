// Package lualib provides, as gopher-lua modules, the four C libraries that
// Redis 7.0 bundles into its Lua scripting environment: cjson, bit (LuaBitOp),
// struct and cmsgpack. Each Open function sets one global table in the given
// state; behaviour, including error texts, follows the versions Redis 7.0
// ships, and the package's differential test checks it against a real server.
//
// The tables are ordinary writable tables: Redis makes them read-only, and the
// simulator does so by wrapping every library global in a read-only proxy
// after opening it.
package lualib
