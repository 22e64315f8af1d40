package simulate

import (
	"math"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// maxReplyDepth bounds the nesting of a script's reply; Redis fails deeper
// (or self-referencing) tables with a Lua stack error, and so do we.
const maxReplyDepth = 1000

// toLua converts a command's reply into the Lua value redis.call returns
// (redisProtocolToLuaType). resp is the script's redis.setresp version: with
// 2 the reply is first downgraded to what a RESP2 client would read.
func toLua(L *lua.LState, r Reply, resp int, p Profile) lua.LValue {
	if resp == 2 {
		switch r.Kind {
		case KindMap, KindSet, KindDouble, KindBool, KindBigNumber, KindVerbatim:
			r = downgrade(r, p)
		case KindArray:
			if hasRESP3(r.Elems) {
				r = downgrade(r, p)
			}
		}
	}
	return toLuaValue(L, r, resp)
}

func hasRESP3(elems []Reply) bool {
	for i := range elems {
		switch elems[i].Kind {
		case KindMap, KindSet, KindDouble, KindBool, KindBigNumber, KindVerbatim:
			return true
		case KindArray:
			if hasRESP3(elems[i].Elems) {
				return true
			}
		}
	}
	return false
}

func toLuaValue(L *lua.LState, r Reply, resp int) lua.LValue {
	switch r.Kind {
	case KindInt:
		return lua.LNumber(r.Int)
	case KindBulk:
		return lua.LString(r.Str)
	case KindStatus:
		return field(L, "ok", lua.LString(r.Str))
	case KindError:
		return errorTable(L, errorReplyText("-"+r.Str))
	case KindNil:
		if resp == 2 {
			return lua.LFalse
		}
		return lua.LNil
	case KindArray:
		t := L.NewTable() // Redis fills an empty table, one index at a time
		for i := range r.Elems {
			t.RawSetInt(i+1, toLuaValue(L, r.Elems[i], resp))
		}
		return t
	case KindMap:
		m := L.NewTable()
		for i := 0; i+1 < len(r.Elems); i += 2 {
			m.RawSet(toLuaValue(L, r.Elems[i], resp), toLuaValue(L, r.Elems[i+1], resp))
		}
		return field(L, "map", m)
	case KindSet:
		s := L.NewTable()
		for i := range r.Elems {
			s.RawSet(toLuaValue(L, r.Elems[i], resp), lua.LTrue)
		}
		return field(L, "set", s)
	case KindDouble:
		return field(L, "double", lua.LNumber(r.Float))
	case KindBool:
		return lua.LBool(r.Int != 0)
	case KindBigNumber:
		return field(L, "big_number", lua.LString(r.Str))
	case KindVerbatim:
		v := L.NewTable() // "string" first, as Redis sets them
		v.RawSetString("string", lua.LString(r.Str))
		v.RawSetString("format", lua.LString("txt"))
		return field(L, "verbatim_string", v)
	}
	return lua.LNil
}

func field(L *lua.LState, name string, v lua.LValue) *lua.LTable {
	t := L.NewTable()
	t.RawSetString(name, v)
	return t
}

// fromLua converts a script's return value into its reply
// (luaReplyToRedisReply). resp is the script's redis.setresp version, which
// decides how booleans are sent.
func fromLua(v lua.LValue, resp int) Reply {
	return fromLuaDepth(v, resp, 0)
}

func fromLuaDepth(v lua.LValue, resp, depth int) Reply {
	switch x := v.(type) {
	case lua.LString:
		return Reply{Kind: KindBulk, Str: string(x)}
	case lua.LBool:
		if resp == 3 {
			return Reply{Kind: KindBool, Int: boolInt(bool(x))}
		}
		if x {
			return Reply{Kind: KindInt, Int: 1}
		}
		return Reply{Kind: KindNil}
	case lua.LNumber:
		return Reply{Kind: KindInt, Int: luaNumberToInt(float64(x))}
	case *lua.LTable:
		if depth >= maxReplyDepth {
			return errorReply(errStackLimit)
		}
		return tableReply(x, resp, depth)
	}
	return Reply{Kind: KindNil}
}

// luaNumberToInt is C's (long long) cast as Redis compiles it on x86-64:
// truncation toward zero, and the "integer indefinite" value INT64_MIN for
// NaN and anything out of range.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// tableReply reads the special fields in Redis's order: err, ok, double,
// big_number, verbatim_string, map, set; anything else is an array that
// stops at the first nil.
func tableReply(t *lua.LTable, resp, depth int) Reply {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		return Reply{Kind: KindError, Str: noNewlines(string(s))}
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		return Reply{Kind: KindStatus, Str: noNewlines(string(s))}
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		return Reply{Kind: KindDouble, Float: float64(n)}
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		return Reply{Kind: KindBigNumber, Str: noNewlines(string(s))}
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, okf := vt.RawGetString("format").(lua.LString)
		s, oks := vt.RawGetString("string").(lua.LString)
		if okf && oks && len(f) == 3 {
			return Reply{Kind: KindVerbatim, Str: string(s)}
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		var elems []Reply
		m.ForEach(func(k, v lua.LValue) {
			elems = append(elems, fromLuaDepth(k, resp, depth+1), fromLuaDepth(v, resp, depth+1))
		})
		return Reply{Kind: KindMap, Elems: elems}
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		var elems []Reply
		s.ForEach(func(k, _ lua.LValue) {
			elems = append(elems, fromLuaDepth(k, resp, depth+1))
		})
		return Reply{Kind: KindSet, Elems: elems}
	}
	var elems []Reply
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			break
		}
		elems = append(elems, fromLuaDepth(v, resp, depth+1))
	}
	if elems == nil {
		elems = []Reply{}
	}
	return Reply{Kind: KindArray, Elems: elems}
}

// noNewlines replaces CR and LF by spaces, as Redis does for status and
// error texts so that they stay one protocol line.
func noNewlines(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	return s
}
