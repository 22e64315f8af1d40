package lua

var CompatVarArg = true
var FieldsPerFlush = 50
var RegistrySize = 256 * 20
var RegistryGrowStep = 32
var CallStackSize = 256
var MaxTableGetLoop = 100
var MaxArrayIndex = 67108864

type LNumber float64

const LNumberBit = 64
const LNumberScanFormat = "%f"
const LuaVersion = "Lua 5.1"

// Lua 5.1's limits on nested calls (luaconf.h, lstate.h), which the VM
// reproduces so that scripts fail where Lua 5.1 fails and with its words.
const (
	// LuaMaxCalls is LUAI_MAXCALLS: the CallInfo array may not grow past
	// it ("stack overflow").
	LuaMaxCalls = 20000
	// LuaMaxCCalls is LUAI_MAXCCALLS: nested luaD_call calls ("C stack
	// overflow"), and parser nesting ("chunk has too many syntax levels").
	LuaMaxCCalls = 200
	// LuaMaxCStack is LUAI_MAXCSTACK: the most values a Go function may
	// have on its stack (lua_checkstack), arguments included.
	LuaMaxCStack = 8000
	// LuaBasicCISize is BASIC_CI_SIZE, the CallInfo array's first size.
	LuaBasicCISize = 8
)

// The memory budget. Lua 5.1 allocates until malloc fails; a Go process
// that runs out of memory dies instead, so the VM refuses, with Lua's
// memory error (RaiseMemoryError), to build a string or a table past these
// sizes, before allocating.
const (
	// MaxStringSize is the longest string a script may build (string.rep,
	// "..", table.concat, string.format, string.gsub, the encoders): 512
	// MiB, Redis's proto-max-bulk-len, the largest string Redis stores.
	MaxStringSize = 512 << 20
	// MaxTableSlots bounds each part of a table (array slots, hash nodes):
	// 2^24, where Lua 5.1's own structural limit is 2^26.
	MaxTableSlots = 1 << 24
	// MemErrMsg is Lua's MEMERRMSG.
	MemErrMsg = "not enough memory"
)
