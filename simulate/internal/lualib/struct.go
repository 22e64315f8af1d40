package lualib

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// Sizes of the C types on the 64-bit Linux builds Redis ships.
const (
	structMaxIntSize = 32
	structMaxAlign   = 8
	structIntSize    = 4
)

// OpenStruct sets the global "struct" to Roberto Ierusalimschy's struct
// library as bundled with Redis: pack, unpack and size.
func OpenStruct(L *lua.LState) {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
	L.SetGlobal("struct", Reorder(L, t, 3, "pack", "unpack", "size"))
}

// structFormat walks a format string, holding the current endianness and
// maximum alignment.
type structFormat struct {
	L      *lua.LState
	fmt    string
	pos    int
	big    bool
	align  int
	fnName string
}

func newStructFormat(L *lua.LState, name string) *structFormat {
	return &structFormat{L: L, fmt: checkString(L, 1, name), align: 1, fnName: name}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (f *structFormat) getnum(def int) int {
	if f.pos >= len(f.fmt) || !isDigit(f.fmt[f.pos]) {
		return def
	}
	a := 0
	for f.pos < len(f.fmt) && isDigit(f.fmt[f.pos]) {
		d := int(f.fmt[f.pos] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			raise(f.L, "integral size overflow")
		}
		a = a*10 + d
		f.pos++
	}
	return a
}

// optsize returns the size of option opt, reading its count if it has one;
// options that need no alignment report 0.
func (f *structFormat) optsize(opt byte) int {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return f.getnum(1)
	case 'i', 'I':
		sz := f.getnum(structIntSize)
		if sz > structMaxIntSize {
			raise(f.L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func (f *structFormat) toAlign(pos, size int, opt byte) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > f.align {
		size = f.align
	}
	return (size - (pos & (size - 1))) & (size - 1)
}

func (f *structFormat) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.big = true
	case '<':
		f.big = false
	case '!':
		a := f.getnum(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			raise(f.L, "alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		f.argError(1, fmt.Sprintf("invalid format option '%c'", opt))
	}
}

func (f *structFormat) argError(n int, msg string) {
	raise(f.L, "bad argument #%d to '%s' (%s)", n, f.fnName, msg)
}

func (f *structFormat) next() (byte, bool) {
	if f.pos >= len(f.fmt) || f.fmt[f.pos] == 0 {
		return 0, false
	}
	c := f.fmt[f.pos]
	f.pos++
	return c, true
}

func structPack(L *lua.LState) int {
	f := newStructFormat(L, "pack")
	var out []byte
	arg := 2
	for opt, ok := f.next(); ok; opt, ok = f.next() {
		size := f.optsize(opt)
		for n := f.toAlign(len(out), size, opt); n > 0; n-- {
			out = append(out, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			out = putInteger(out, f.number(arg), f.big, size)
			arg++
		case 'x':
			out = append(out, 0)
		case 'f':
			bits := math.Float32bits(float32(f.number(arg)))
			arg++
			out = appendOrdered(out, uint64(bits), 4, f.big)
		case 'd':
			bits := math.Float64bits(f.number(arg))
			arg++
			out = appendOrdered(out, bits, 8, f.big)
		case 'c', 's':
			s := f.str(arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				f.argError(arg, "string too short")
			}
			L.CheckStringSize(int64(len(out)) + int64(size) + 1)
			out = append(out, s[:size]...)
			if opt == 's' {
				out = append(out, 0)
			}
		default:
			f.control(opt)
		}
	}
	L.Push(lua.LString(out))
	return 1
}

// putInteger stores n in size bytes. Like the C library it goes through a
// 64-bit unsigned value, so bytes past the eighth are always zero.
func putInteger(out []byte, n float64, big bool, size int) []byte {
	var v uint64
	if n < 0 {
		v = uint64(int64(n))
	} else {
		v = float64ToUint64(n)
	}
	buf := make([]byte, size)
	for i := 0; i < size; i++ {
		b := byte(v)
		v >>= 8
		if i >= 8 {
			b = 0
		}
		if big {
			buf[size-1-i] = b
		} else {
			buf[i] = b
		}
	}
	return append(out, buf...)
}

// float64ToUint64 converts like x86-64 C code does, where values out of
// range give 0x8000000000000000.
func float64ToUint64(n float64) uint64 {
	if n != n || n >= 18446744073709551616.0 {
		return 1 << 63
	}
	return uint64(n)
}

func appendOrdered(out []byte, bits uint64, size int, big bool) []byte {
	buf := make([]byte, 8)
	if big {
		binary.BigEndian.PutUint64(buf, bits)
		return append(out, buf[8-size:]...)
	}
	binary.LittleEndian.PutUint64(buf, bits)
	return append(out, buf[:size]...)
}

func getInteger(data string, big, signed bool, size int) float64 {
	var l uint64
	if big {
		for i := 0; i < size; i++ {
			l = l<<8 | uint64(data[i])
		}
	} else {
		for i := size - 1; i >= 0; i-- {
			l = l<<8 | uint64(data[i])
		}
	}
	if !signed {
		return float64(l)
	}
	// The C code shifts by size*8-1, which x86-64 reduces modulo 64.
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFormat(L, "unpack")
	data := checkString(L, 2, "unpack")
	ld := len(data)
	start := optInteger(L, 3, "unpack", 1)
	if start < 1 {
		f.argError(3, "offset must be 1 or greater")
	}
	pos := int(start - 1)
	var res []lua.LValue
	for opt, ok := f.next(); ok; opt, ok = f.next() {
		size := f.optsize(opt)
		pos += f.toAlign(pos, size, opt)
		if size > ld || pos > ld-size {
			f.argError(2, "data string too short")
		}
		// luaL_checkstack(L, 2, "too many results"): the results so far
		// sit on the C function's stack after its arguments.
		if L.GetTop()+len(res)+2 > lua.LuaMaxCStack {
			raise(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a'
			res = append(res, lua.LNumber(getInteger(data[pos:], f.big, signed, size)))
		case 'x':
		case 'f':
			bits := readOrdered(data[pos:], 4, f.big)
			res = append(res, lua.LNumber(math.Float32frombits(uint32(bits))))
		case 'd':
			bits := readOrdered(data[pos:], 8, f.big)
			res = append(res, lua.LNumber(math.Float64frombits(bits)))
		case 'c':
			if size == 0 {
				var prev lua.LNumber
				ok := false
				if len(res) > 0 {
					prev, ok = toNumber(res[len(res)-1])
				}
				if !ok {
					raise(L, "format 'c0' needs a previous size")
				}
				res = res[:len(res)-1]
				size = int(prev)
				if prev != prev || prev < 0 || float64(prev) > float64(ld) || pos > ld-size {
					f.argError(2, "data string too short")
				}
			}
			res = append(res, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				raise(L, "unfinished string in data")
			}
			size = e + 1
			res = append(res, lua.LString(data[pos:pos+e]))
		default:
			f.control(opt)
		}
		pos += size
	}
	for _, v := range res {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(res) + 1
}

// toNumber reports whether v is a number or a string Lua would convert.
func toNumber(v lua.LValue) (lua.LNumber, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return x, true
	case lua.LString:
		n, err := parseLuaNumber(string(x))
		return lua.LNumber(n), err == nil
	}
	return 0, false
}

func readOrdered(data string, size int, big bool) uint64 {
	var v uint64
	for i := 0; i < size; i++ {
		if big {
			v = v<<8 | uint64(data[i])
		} else {
			v = v<<8 | uint64(data[size-1-i])
		}
	}
	return v
}

func structSize(L *lua.LState) int {
	f := newStructFormat(L, "size")
	pos := 0
	for opt, ok := f.next(); ok; opt, ok = f.next() {
		size := f.optsize(opt)
		pos += f.toAlign(pos, size, opt)
		if opt == 's' {
			f.argError(1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			f.argError(1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// number and str check pack's value arguments. The C code pushes a marker
// nil after the arguments, so a missing one is reported as nil.
func (f *structFormat) number(arg int) float64 {
	if arg > f.L.GetTop() {
		argError(f.L, arg, f.fnName, "number expected, got nil")
	}
	return checkNumber(f.L, arg, f.fnName)
}

func (f *structFormat) str(arg int) string {
	if arg > f.L.GetTop() {
		argError(f.L, arg, f.fnName, "string expected, got nil")
	}
	return checkString(f.L, arg, f.fnName)
}
