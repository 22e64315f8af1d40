package lualib

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// cjsonConfig holds one cjson instance's settings, with the defaults of
// Lua CJSON 2.1.0 as Redis builds it.
type cjsonConfig struct {
	sparseConvert  bool
	sparseRatio    int
	sparseSafe     int
	encodeMaxDepth int
	decodeMaxDepth int
	precision      int
	keepBuffer     bool
	encodeInvalid  int // 0 off, 1 on, 2 null
	decodeInvalid  bool
}

func defaultCJSONConfig() *cjsonConfig {
	return &cjsonConfig{
		sparseRatio: 2, sparseSafe: 10,
		encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		precision: 14, keepBuffer: true, decodeInvalid: true,
	}
}

// OpenCJSON sets the global "cjson" to Lua CJSON 2.1.0 as bundled with
// Redis 7.0. cjson.null is a userdata singleton that decode returns for JSON
// null and encode writes as null.
func OpenCJSON(L *lua.LState) {
	null := L.NewUserData()
	null.Value = NullPointer{}
	L.SetGlobal("cjson", newCJSON(L, null))
}

// NullPointer is the Value of the userdata standing for a C NULL light
// userdata (cjson.null): Redis's tostring prints it as "userdata: (nil)",
// the same on every run, where gopher-lua would print a Go address.
type NullPointer struct{}

func newCJSON(L *lua.LState, null *lua.LUserData) *lua.LTable {
	cfg := defaultCJSONConfig()
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int { return cjsonEncode(L, cfg, null) },
		"decode": func(L *lua.LState) int { return cjsonDecode(L, cfg, null) },
		"encode_sparse_array": func(L *lua.LState) int {
			const fn = "encode_sparse_array"
			cjsonArgCount(L, 3, fn)
			cfg.sparseConvert = cjsonBoolOption(L, 1, fn, cfg.sparseConvert)
			cfg.sparseRatio = cjsonIntOption(L, 2, fn, cfg.sparseRatio, 0, math.MaxInt32)
			cfg.sparseSafe = cjsonIntOption(L, 3, fn, cfg.sparseSafe, 0, math.MaxInt32)
			L.Push(lua.LBool(cfg.sparseConvert))
			L.Push(lua.LNumber(cfg.sparseRatio))
			L.Push(lua.LNumber(cfg.sparseSafe))
			return 3
		},
		"encode_max_depth":        cjsonIntSetting("encode_max_depth", &cfg.encodeMaxDepth, 1, math.MaxInt32),
		"decode_max_depth":        cjsonIntSetting("decode_max_depth", &cfg.decodeMaxDepth, 1, math.MaxInt32),
		"encode_number_precision": cjsonIntSetting("encode_number_precision", &cfg.precision, 1, 14),
		"encode_keep_buffer":      cjsonBoolSetting("encode_keep_buffer", &cfg.keepBuffer),
		"encode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgCount(L, 1, "encode_invalid_numbers")
			cfg.encodeInvalid = cjsonEnumOption(L, 1, "encode_invalid_numbers", cfg.encodeInvalid, true)
			pushEnum(L, cfg.encodeInvalid)
			return 1
		},
		"decode_invalid_numbers": cjsonBoolSetting("decode_invalid_numbers", &cfg.decodeInvalid),
		"new": func(L *lua.LState) int {
			L.Push(newCJSON(L, null))
			return 1
		},
	})
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return Reorder(L, t, 0, "encode", "decode", "encode_sparse_array", "encode_max_depth", "decode_max_depth",
		"encode_number_precision", "encode_keep_buffer", "encode_invalid_numbers", "decode_invalid_numbers", "new",
		"null", "_NAME", "_VERSION")
}

// cjsonIntSetting is the function fn that reads and sets one integer
// setting (*p), as json_integer_option does: an argument within min and
// max sets it; the setting is returned.
func cjsonIntSetting(fn string, p *int, min, max int) lua.LGFunction {
	return func(L *lua.LState) int {
		cjsonArgCount(L, 1, fn)
		*p = cjsonIntOption(L, 1, fn, *p, min, max)
		L.Push(lua.LNumber(*p))
		return 1
	}
}

// cjsonBoolSetting is cjsonIntSetting for an on/off setting.
func cjsonBoolSetting(fn string, p *bool) lua.LGFunction {
	return func(L *lua.LState) int {
		cjsonArgCount(L, 1, fn)
		*p = cjsonBoolOption(L, 1, fn, *p)
		L.Push(lua.LBool(*p))
		return 1
	}
}

func cjsonArgCount(L *lua.LState, max int, fn string) {
	if L.GetTop() > max {
		argError(L, max+1, fn, "found too many arguments")
	}
}

func cjsonIntOption(L *lua.LState, i int, fn string, cur, min, max int) int {
	if L.Get(i) == lua.LNil {
		return cur
	}
	n := checkInteger(L, i, fn)
	if n < int64(min) || n > int64(max) {
		argError(L, i, fn, fmt.Sprintf("expected integer between %d and %d", min, max))
	}
	return int(n)
}

func cjsonBoolOption(L *lua.LState, i int, fn string, cur bool) bool {
	v := 0
	if cur {
		v = 1
	}
	return cjsonEnumOption(L, i, fn, v, false) == 1
}

// cjsonEnumOption reads an on/off(/null) option: a boolean or one of the
// option names.
func cjsonEnumOption(L *lua.LState, i int, fn string, cur int, withNull bool) int {
	opts := []string{"off", "on"}
	if withNull {
		opts = append(opts, "null")
	}
	switch v := L.Get(i).(type) {
	case *lua.LNilType:
		return cur
	case lua.LBool:
		if v {
			return 1
		}
		return 0
	}
	s := checkString(L, i, fn)
	for k, o := range opts {
		if o == s {
			return k
		}
	}
	argError(L, i, fn, fmt.Sprintf("invalid option '%s'", s))
	return cur
}

// pushEnum pushes an option's value as CJSON reports it: a boolean, or the
// string "null".
func pushEnum(L *lua.LState, v int) {
	if v == 2 {
		L.Push(lua.LString("null"))
	} else {
		L.Push(lua.LBool(v == 1))
	}
}

func cjsonEncode(L *lua.LState, cfg *cjsonConfig, null *lua.LUserData) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	e := &jsonEncoder{L: L, cfg: cfg, null: null}
	e.value(L.Get(1), 0)
	L.Push(lua.LString(e.buf.String()))
	return 1
}

type jsonEncoder struct {
	L    *lua.LState
	cfg  *cjsonConfig
	null *lua.LUserData
	buf  strings.Builder
}

func (e *jsonEncoder) fail(v lua.LValue, reason string) {
	raise(e.L, "Cannot serialise %s: %s", luaTypeName(v), reason)
}

// luaTypeName is lua_typename as C Lua reports it; light and full userdata
// both read "userdata".
func luaTypeName(v lua.LValue) string {
	return v.Type().String()
}

func (e *jsonEncoder) value(v lua.LValue, depth int) {
	if e.buf.Len() > lua.MaxStringSize-64 {
		e.L.RaiseMemoryError() // the memory budget
	}
	switch x := v.(type) {
	case lua.LString:
		e.str(string(x))
	case lua.LNumber:
		e.number(x)
	case lua.LBool:
		if x {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	case *lua.LNilType:
		e.buf.WriteString("null")
	case *lua.LTable:
		depth++
		if depth > e.cfg.encodeMaxDepth {
			raise(e.L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := e.arrayLength(x); n > 0 {
			e.array(x, n, depth)
		} else {
			e.object(x, depth)
		}
	case *lua.LUserData:
		if x == e.null {
			e.buf.WriteString("null")
			return
		}
		e.fail(v, "type not supported")
	default:
		e.fail(v, "type not supported")
	}
}

func (e *jsonEncoder) number(n lua.LNumber) {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch e.cfg.encodeInvalid {
		case 0:
			e.fail(n, "must not be NaN or Inf")
		case 1:
			// Redis's CJSON prints them with %g: inf, -inf, nan.
		default:
			e.buf.WriteString("null")
			return
		}
	}
	e.buf.WriteString(formatG(f, e.cfg.precision))
}

// arrayLength returns the highest positive integer key when every key is
// one, 0 for an empty table, and -1 when the table is an object (or a sparse
// array that encode_sparse_array says to convert).
func (e *jsonEncoder) arrayLength(t *lua.LTable) int {
	// lua_cjson keeps the highest key in a C int: a key past 2^31 converts
	// to INT_MIN (x86-64), which makes the table an object unless a later
	// key (in next order) raises it again.
	var max int32
	items := 0
	isArray := true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !isArray {
			return
		}
		if !ok || float64(n) < 1 || math.Floor(float64(n)) != float64(n) {
			isArray = false
			return
		}
		if float64(n) > float64(max) {
			max = cInt32(float64(n))
		}
		items++
	})
	if !isArray {
		return -1
	}
	c := e.cfg
	if c.sparseRatio > 0 && int(max) > items*c.sparseRatio && int(max) > c.sparseSafe {
		if !c.sparseConvert {
			e.fail(t, "excessively sparse array")
		}
		return -1
	}
	if max <= 0 {
		return -1
	}
	return int(max)
}

// cInt32 is C's (int) conversion of a double on x86-64: out of range gives
// INT_MIN.
func cInt32(f float64) int32 {
	if f >= -2147483648 && f < 2147483648 {
		return int32(f)
	}
	return math.MinInt32
}

func (e *jsonEncoder) array(t *lua.LTable, n, depth int) {
	e.buf.WriteByte('[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			e.buf.WriteByte(',')
		}
		e.value(t.RawGetInt(i), depth)
	}
	e.buf.WriteByte(']')
}

func (e *jsonEncoder) object(t *lua.LTable, depth int) {
	e.buf.WriteByte('{')
	first := true
	t.ForEach(func(k, v lua.LValue) {
		if !first {
			e.buf.WriteByte(',')
		}
		first = false
		switch x := k.(type) {
		case lua.LNumber:
			e.buf.WriteByte('"')
			e.number(x)
			e.buf.WriteString(`":`)
		case lua.LString:
			e.str(string(x))
			e.buf.WriteByte(':')
		default:
			e.fail(k, "table key must be a number or string")
		}
		e.value(v, depth)
	})
	e.buf.WriteByte('}')
}

func (e *jsonEncoder) str(s string) {
	e.L.CheckStringSize(int64(e.buf.Len()) + int64(len(s)) + 2) // escapes may add more; value checks again
	e.buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			e.buf.WriteString(`\"`)
		case '\\':
			e.buf.WriteString(`\\`)
		case '/':
			e.buf.WriteString(`\/`)
		case '\b':
			e.buf.WriteString(`\b`)
		case '\f':
			e.buf.WriteString(`\f`)
		case '\n':
			e.buf.WriteString(`\n`)
		case '\r':
			e.buf.WriteString(`\r`)
		case '\t':
			e.buf.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&e.buf, `\u%04x`, c)
			} else {
				e.buf.WriteByte(c)
			}
		}
	}
	e.buf.WriteByte('"')
}
