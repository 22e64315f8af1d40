package simulate

import (
	"regexp"
	"strconv"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// gopher-lua's instruction layout (opcode.go): 6-bit opcode, 8-bit A,
// 9-bit B and C; RK operands at or above 256 are constants.
const (
	opMove       = lua.OP_MOVE
	opLoadNil    = lua.OP_LOADNIL
	opGetUpval   = lua.OP_GETUPVAL
	opGetGlobal  = lua.OP_GETGLOBAL
	opGetTable   = lua.OP_GETTABLE
	opGetTableKS = lua.OP_GETTABLEKS
	opSetTable   = lua.OP_SETTABLE
	opSetTableKS = lua.OP_SETTABLEKS
	opSelf       = lua.OP_SELF
	rkConstant   = 256
)

func opCode(i uint32) int { return int(i >> 26) }
func argA(i uint32) int   { return int(i>>18) & 0xff }
func argB(i uint32) int   { return int(i & 0x1ff) }
func argC(i uint32) int   { return int(i>>9) & 0x1ff }
func argBx(i uint32) int  { return int(i & 0x3ffff) }

// unnamedRuntimeError matches the runtime errors for which Lua 5.1 names
// the variable involved, in their unnamed form.
var unnamedRuntimeError = regexp.MustCompile(`attempt to (index|call|perform arithmetic on) a (\w+) value$`)

// nameOperand adds Lua 5.1's description of the offending variable to a
// runtime error raised at line of proto ("attempt to index a nil value"
// becomes "attempt to index local 't' (a nil value)"), as ldebug.c's
// getobjname does. gopher-lua does not expose the failing instruction, so
// the name is only added when exactly one instruction on that line could
// have failed that way; otherwise the message stays unnamed.
func nameOperand(msg string, proto *lua.FunctionProto, line int, h hint) string {
	m := unnamedRuntimeError.FindStringSubmatchIndex(msg)
	if m == nil || proto == nil {
		return msg
	}
	what := msg[m[2]:m[3]]
	pc, reg := -1, -1
	for i, inst := range proto.Code {
		if i >= len(proto.DbgSourcePositions) || proto.DbgSourcePositions[i] != line {
			continue
		}
		r := operandOf(proto, i, inst, what, h)
		if r < 0 {
			continue
		}
		if pc >= 0 {
			return msg // more than one candidate: do not guess
		}
		pc, reg = i, r
	}
	if pc < 0 {
		return msg
	}
	name := objectName(proto, pc, reg, 0)
	if name == "" {
		return msg
	}
	return msg[:m[0]] + "attempt to " + what + " " + name + " (a " + msg[m[4]:m[5]] + " value)"
}

// hint is what gopher-lua's original message tells about the failure: the
// key that was indexed, or which arithmetic operand was wrong.
type hint struct {
	key     string
	hasKey  bool
	operand int // 1 or 2 for arithmetic, 0 if unknown
}

var (
	indexKeyMessage = regexp.MustCompile(`attempt to index a non-table object\(\w+\) with key '([^']*)'`)
	arithMessage    = regexp.MustCompile(`cannot perform \w+ operation between (\w+) and \w+`)
)

// hintOf reads the hint from gopher-lua's message, before it is reworded.
func hintOf(msg string) hint {
	if m := indexKeyMessage.FindStringSubmatch(msg); m != nil {
		return hint{key: m[1], hasKey: true}
	}
	if m := arithMessage.FindStringSubmatch(msg); m != nil {
		if m[1] != "number" {
			return hint{operand: 1}
		}
		return hint{operand: 2}
	}
	return hint{}
}

// keyMatches reports whether an indexing instruction's key operand rk may
// be the key gopher-lua reported.
func keyMatches(proto *lua.FunctionProto, rk int, h hint) bool {
	if !h.hasKey || rk < rkConstant {
		return true
	}
	s, ok := concatString(proto.Constants[rk-rkConstant])
	return ok && s == h.key
}

// operandOf returns the register the instruction at pc would fail on for
// the kind of error, or -1 when it cannot fail that way.
func operandOf(proto *lua.FunctionProto, pc int, inst uint32, what string, h hint) int {
	switch op := opCode(inst); what {
	case "index":
		switch op {
		case opGetTable, opGetTableKS, opSelf:
			if keyMatches(proto, argC(inst), h) {
				return argB(inst)
			}
		case opSetTable, opSetTableKS:
			if keyMatches(proto, argB(inst), h) {
				return argA(inst)
			}
		}
	case "call":
		if op == lua.OP_CALL || op == lua.OP_TAILCALL {
			if objectName(proto, pc, argA(inst), 0) == "global '"+concatFn+"'" {
				return -1 // our rewritten "..", which cannot fail to be called
			}
			return argA(inst)
		}
	case "perform arithmetic on":
		switch op {
		case lua.OP_UNM:
			return argB(inst)
		case lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW:
			b, c := argB(inst), argC(inst)
			switch {
			case h.operand == 1 && b < rkConstant:
				return b
			case h.operand == 2 && c < rkConstant:
				return c
			case h.operand == 0 && b < rkConstant && c >= rkConstant:
				return b
			case h.operand == 0 && c < rkConstant && b >= rkConstant:
				return c
			}
		}
	}
	return -1
}

// objectName describes register reg at pc: a local variable, or where
// its value was loaded from (a global, a field, an upvalue, a method).
func objectName(proto *lua.FunctionProto, pc, reg, depth int) string {
	if name := localName(proto, pc, reg); name != "" {
		return "local '" + name + "'"
	}
	if depth > 8 {
		return ""
	}
	for i := pc - 1; i >= 0; i-- {
		inst := proto.Code[i]
		op, a := opCode(inst), argA(inst)
		if op == opLoadNil && a <= reg && reg <= argB(inst) {
			return ""
		}
		if a != reg || !setsA(op) {
			if op == opSelf && a+1 == reg {
				return ""
			}
			continue
		}
		switch op {
		case opGetGlobal:
			if s, ok := proto.Constants[argBx(inst)].(lua.LString); ok {
				return "global '" + string(s) + "'"
			}
		case opGetTable, opGetTableKS:
			// Lua 5.1 calls any indexed value a field; a key that is not
			// a constant string shows as '?'.
			if k := argC(inst); k >= rkConstant {
				if s, ok := proto.Constants[k-rkConstant].(lua.LString); ok {
					return "field '" + string(s) + "'"
				}
			}
			return "field '?'"
		case opSelf:
			if k := argC(inst); k >= rkConstant {
				if s, ok := proto.Constants[k-rkConstant].(lua.LString); ok {
					return "method '" + string(s) + "'"
				}
			}
		case opGetUpval:
			if b := argB(inst); b < len(proto.DbgUpvalues) {
				return "upvalue '" + proto.DbgUpvalues[b] + "'"
			}
		case opMove:
			if b := argB(inst); b < a {
				return objectName(proto, i, b, depth+1)
			}
		}
		return ""
	}
	return ""
}

// setsA reports whether the opcode writes its A register.
func setsA(op int) bool {
	switch op {
	case lua.OP_MOVE, lua.OP_LOADK, lua.OP_LOADBOOL, lua.OP_GETUPVAL, lua.OP_GETGLOBAL,
		lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_NEWTABLE, lua.OP_SELF, lua.OP_ADD,
		lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW, lua.OP_UNM, lua.OP_NOT,
		lua.OP_LEN, lua.OP_CONCAT, lua.OP_CALL, lua.OP_CLOSURE, lua.OP_VARARG, lua.OP_MOVEN:
		return true
	}
	return false
}

// localName is luaF_getlocalname: the name of the reg-th local variable
// active at pc.
func localName(proto *lua.FunctionProto, pc, reg int) string {
	n := reg
	for _, lv := range proto.DbgLocals {
		if lv.StartPc > pc {
			break
		}
		if pc <= lv.EndPc || lv.EndPc == 0 {
			if n == 0 {
				return lv.Name
			}
			n--
		}
	}
	return ""
}

// unaryMessage rewrites gopher-lua's "__unm undefined" and "__len
// undefined", which do not say what the operand was, into Lua 5.1's
// messages, reading the operand from the failing function's registers.
func unaryMessage(msg string, proto *lua.FunctionProto, line int, register func(int) lua.LValue) string {
	var op int
	var verb, tail string
	switch {
	case strings.HasSuffix(msg, "__unm undefined"):
		op, verb, tail = lua.OP_UNM, "perform arithmetic on", "__unm undefined"
	case strings.HasSuffix(msg, "__len undefined"):
		op, verb, tail = lua.OP_LEN, "get length of", "__len undefined"
	default:
		return msg
	}
	if proto == nil || register == nil {
		return msg
	}
	pc, reg := -1, -1
	for i, inst := range proto.Code {
		if i >= len(proto.DbgSourcePositions) || proto.DbgSourcePositions[i] != line || opCode(inst) != op {
			continue
		}
		if !badUnaryOperand(op, register(argB(inst))) {
			continue
		}
		if pc >= 0 {
			return msg
		}
		pc, reg = i, argB(inst)
	}
	if pc < 0 {
		return msg
	}
	typ := register(reg).Type().String()
	what := "a " + typ + " value"
	if name := objectName(proto, pc, reg, 0); name != "" {
		what = name + " (a " + typ + " value)"
	}
	return strings.TrimSuffix(msg, tail) + "attempt to " + verb + " " + what
}

// badUnaryOperand reports whether v makes "-v" or "#v" fail.
func badUnaryOperand(op int, v lua.LValue) bool {
	switch v := v.(type) {
	case lua.LNumber:
		return op == lua.OP_LEN
	case lua.LString:
		return op == lua.OP_UNM && !isNumeric(string(v))
	case *lua.LTable:
		return op == lua.OP_UNM
	}
	return true
}

func isNumeric(s string) bool {
	_, ok := parseLuaNumber(s)
	return ok
}

var missingArgument = regexp.MustCompile(`bad argument #(\d+) to (\S+) \((\w+) expected, got nil\)`)

// noValueMessage says "got no value", as Lua 5.1 does, when the argument
// gopher-lua reports as nil was not passed at all.
func noValueMessage(msg string, goArgs func(int) bool) string {
	m := missingArgument.FindStringSubmatchIndex(msg)
	if m == nil || goArgs == nil {
		return msg
	}
	n, err := strconv.Atoi(msg[m[2]:m[3]])
	if err != nil || goArgs(n) {
		return msg
	}
	return msg[:m[0]] + strings.TrimSuffix(msg[m[0]:m[1]], "got nil)") + "got no value)" + msg[m[1]:]
}

var quotedBadArgument = regexp.MustCompile(`bad argument #(\d+) to '([^']*)' \(`)

// methodArgument renumbers an argument error raised in a method call
// ("s:rep()"), where Lua 5.1 does not count self, as luaL_argerror does.
func methodArgument(msg string, proto *lua.FunctionProto, line int) string {
	m := quotedBadArgument.FindStringSubmatchIndex(msg)
	if m == nil || proto == nil {
		return msg
	}
	name := msg[m[4]:m[5]]
	method := false
	for i, inst := range proto.Code {
		if i >= len(proto.DbgSourcePositions) || proto.DbgSourcePositions[i] != line || opCode(inst) != opSelf {
			continue
		}
		if k := argC(inst); k >= rkConstant {
			if s, ok := proto.Constants[k-rkConstant].(lua.LString); ok && string(s) == name {
				method = true
			}
		}
	}
	n, err := strconv.Atoi(msg[m[2]:m[3]])
	if !method || err != nil {
		return msg
	}
	if n == 1 {
		end := strings.Index(msg[m[1]:], ")")
		if end < 0 {
			return msg
		}
		return msg[:m[0]] + "calling '" + name + "' on bad self (" + msg[m[1]:m[1]+end] + ")" + msg[m[1]+end+1:]
	}
	return msg[:m[2]] + strconv.Itoa(n-1) + msg[m[3]:]
}
