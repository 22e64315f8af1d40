package lualib

import (
	"math"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

type msgpackErr int

const (
	mpOK msgpackErr = iota
	mpEOF
	mpBadFormat
)

// msgpackCursor reads values from the input, recording the first error the
// way the C cursor does.
type msgpackCursor struct {
	L   *lua.LState
	p   string
	err msgpackErr
}

func msgpackUnpack(L *lua.LState, limit, offset int) int {
	s := checkString(L, 1, "unpack")
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		raise(L, "Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	} else if offset > len(s) {
		raise(L, "Start offset %d greater than input length %d.", offset, len(s))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	c := &msgpackCursor{L: L, p: s[offset:]}
	var vals []lua.LValue
	for cnt := 0; len(c.p) > 0 && cnt < limit; cnt++ {
		// mp_decode_to_lua_type's luaL_checkstack(L, 1, ...): the values
		// decoded so far are on the C function's stack, after its
		// arguments, and LUAI_MAXCSTACK bounds them.
		if L.GetTop()+len(vals)+1 > lua.LuaMaxCStack {
			raise(L, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
		}
		v := c.decode()
		switch c.err {
		case mpEOF:
			raise(L, "Missing bytes in input.")
		case mpBadFormat:
			raise(L, "Bad data format in input.")
		}
		vals = append(vals, v)
	}
	n := len(vals)
	if !decodeAll {
		next := len(s) - len(c.p)
		if len(c.p) == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
		n++
	}
	for _, v := range vals {
		L.Push(v)
	}
	return n
}

func (c *msgpackCursor) need(n int) bool {
	if len(c.p) < n {
		c.err = mpEOF
		return false
	}
	return true
}

func (c *msgpackCursor) take(n int) string {
	s := c.p[:n]
	c.p = c.p[n:]
	return s
}

// fixed reads an n-byte big-endian payload after a one-byte type tag.
func (c *msgpackCursor) fixed(n int) (uint64, bool) {
	if !c.need(1 + n) {
		return 0, false
	}
	b := c.take(1 + n)[1:]
	var v uint64
	for i := 0; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, true
}

func (c *msgpackCursor) decode() lua.LValue {
	if !c.need(1) {
		return lua.LNil
	}
	tag := c.p[0]
	num := func(n int, conv func(uint64) float64) lua.LValue {
		v, ok := c.fixed(n)
		if !ok {
			return lua.LNil
		}
		return lua.LNumber(conv(v))
	}
	switch tag {
	case 0xcc, 0xcd, 0xce:
		return num(1<<(tag-0xcc), func(v uint64) float64 { return float64(v) })
	case 0xcf:
		// Redis pushes it through lua_pushinteger, a signed 64-bit integer.
		return num(8, func(v uint64) float64 { return float64(int64(v)) })
	case 0xd0:
		return num(1, func(v uint64) float64 { return float64(int8(v)) })
	case 0xd1:
		return num(2, func(v uint64) float64 { return float64(int16(v)) })
	case 0xd2:
		return num(4, func(v uint64) float64 { return float64(int32(v)) })
	case 0xd3:
		return num(8, func(v uint64) float64 { return float64(int64(v)) })
	case 0xca:
		return num(4, func(v uint64) float64 { return float64(math.Float32frombits(uint32(v))) })
	case 0xcb:
		return num(8, math.Float64frombits)
	case 0xc0:
		c.take(1)
		return lua.LNil
	case 0xc3:
		c.take(1)
		return lua.LTrue
	case 0xc2:
		c.take(1)
		return lua.LFalse
	case 0xd9, 0xda, 0xdb:
		n, ok := c.fixed(1 << (tag - 0xd9))
		if !ok {
			return lua.LNil
		}
		return c.str(n)
	case 0xdc, 0xdd:
		n, ok := c.fixed(2 << (tag - 0xdc))
		if !ok {
			return lua.LNil
		}
		return c.array(n)
	case 0xde, 0xdf:
		n, ok := c.fixed(2 << (tag - 0xde))
		if !ok {
			return lua.LNil
		}
		return c.hash(n)
	}
	switch {
	case tag&0x80 == 0:
		c.take(1)
		return lua.LNumber(tag)
	case tag&0xe0 == 0xe0:
		c.take(1)
		return lua.LNumber(int8(tag))
	case tag&0xe0 == 0xa0:
		l := int(tag & 0x1f)
		if !c.need(1 + l) {
			return lua.LNil
		}
		return lua.LString(c.take(1 + l)[1:])
	case tag&0xf0 == 0x90:
		c.take(1)
		return c.array(uint64(tag & 0xf))
	case tag&0xf0 == 0x80:
		c.take(1)
		return c.hash(uint64(tag & 0xf))
	}
	c.err = mpBadFormat
	return lua.LNil
}

func (c *msgpackCursor) str(n uint64) lua.LValue {
	if uint64(len(c.p)) < n {
		c.err = mpEOF
		return lua.LNil
	}
	return lua.LString(c.take(int(n)))
}

func (c *msgpackCursor) array(n uint64) lua.LValue {
	t := c.L.NewTable()
	for i := uint64(1); i <= n; i++ {
		v := c.decode()
		if c.err != mpOK {
			return t
		}
		t.RawSetInt(int(i), v)
	}
	return t
}

func (c *msgpackCursor) hash(n uint64) lua.LValue {
	t := c.L.NewTable()
	for ; n > 0; n-- {
		k := c.decode()
		if c.err != mpOK {
			return t
		}
		v := c.decode()
		if c.err != mpOK {
			return t
		}
		// lua_settable's own errors carry no position: the running
		// function is the C library.
		switch kk := k.(type) {
		case *lua.LNilType:
			c.L.Error(lua.LString("table index is nil"), 0)
		case lua.LNumber:
			if math.IsNaN(float64(kk)) {
				c.L.Error(lua.LString("table index is NaN"), 0)
			}
		}
		t.RawSet(k, v)
	}
	return t
}
