package lua

// The libraries Redis 7.0 exposes to scripts. The fork drops upstream's
// package (require, module), io, os, debug and channel libraries: Redis
// hides them from scripts and the simulator never opens them.
const (
	// BaseLibName is here for consistency; the base functions have no namespace/library.
	BaseLibName = ""
	// TabLibName is the name of the table Library.
	TabLibName = "table"
	// StringLibName is the name of the string Library.
	StringLibName = "string"
	// MathLibName is the name of the math Library.
	MathLibName = "math"
	// CoroutineLibName is the name of the coroutine Library.
	CoroutineLibName = "coroutine"
)

type luaLib struct {
	libName string
	libFunc LGFunction
}

var luaLibs = []luaLib{
	{BaseLibName, OpenBase},
	{TabLibName, OpenTable},
	{StringLibName, OpenString},
	{MathLibName, OpenMath},
	{CoroutineLibName, OpenCoroutine},
}

// OpenLibs loads the built-in libraries. It is equivalent to running
// OpenBase, then iterating over the other OpenXXX functions in any order.
func (ls *LState) OpenLibs() {
	// NB: Map iteration order in Go is deliberately randomised, so must open Base
	// prior to iterating.
	for _, lib := range luaLibs {
		ls.Push(ls.NewFunction(lib.libFunc))
		ls.Push(LString(lib.libName))
		ls.Call(1, 0)
	}
}
