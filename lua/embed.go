// Package lua holds redlua's own Redis Lua scripts, one file per script
// version (<name>.v<version>.lua), and the sum file that guards released
// versions against change. It is data only: parse it with registry.New(lua.FS).
package lua

import "embed"

// FS holds every script file and scripts.sum.
//
//go:embed *.lua scripts.sum
var FS embed.FS
