package simulate

import (
	"fmt"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// stringFormat is Lua 5.1's string.format (lstrlib.c str_format): C printf
// conversions, "%s" of a number in Lua's "%.14g", "%q" quoting, and Lua's
// errors for missing or mistyped arguments (gopher-lua prints Go's
// "%!d(MISSING)" instead).
func stringFormat(L *lua.LState) int {
	format := L.CheckString(1)
	var b strings.Builder
	arg := 1
	for i := 0; i < len(format); i++ {
		c := format[i]
		if b.Len() > lua.MaxStringSize-200 {
			L.CheckStringSize(int64(b.Len()) + 200)
		}
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			b.WriteByte('%')
			continue
		}
		// lstrlib.c's scanformat: at most five flags, and two digits each
		// for width and precision, so no conversion can ask for a
		// gigabyte of padding.
		start := i
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			i++
		}
		if i-start >= 6 {
			L.RaiseError("invalid format (repeated flags)")
		}
		digits := func() {
			for n := 0; n < 2 && i < len(format) && isDigit(format[i]); n++ {
				i++
			}
		}
		digits()
		if i < len(format) && format[i] == '.' {
			i++
			digits()
		}
		if i < len(format) && isDigit(format[i]) {
			L.RaiseError("invalid format (width or precision too long)")
		}
		if i >= len(format) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		spec, conv := format[start:i], format[i]
		arg++
		if arg > L.GetTop() {
			L.ArgError(arg, "no value")
		}
		switch conv {
		case 'c':
			fmt.Fprintf(&b, "%"+spec+"c", rune(byte(int64(L.CheckNumber(arg)))))
		case 'd', 'i':
			fmt.Fprintf(&b, "%"+spec+"d", int64(formatNumberArg(L, arg)))
		case 'u':
			fmt.Fprintf(&b, "%"+spec+"d", uint64(int64(formatNumberArg(L, arg))))
		case 'o', 'x', 'X':
			fmt.Fprintf(&b, "%"+spec+string(conv), uint64(int64(formatNumberArg(L, arg))))
		case 'e', 'E', 'f':
			fmt.Fprintf(&b, "%"+spec+string(conv), formatNumberArg(L, arg))
		case 'g', 'G':
			if !strings.Contains(spec, ".") {
				spec += ".6" // C's default precision; Go's %g would print the shortest form
			}
			b.WriteString(formatCg(fmt.Sprintf("%"+spec+string(conv), formatNumberArg(L, arg))))
		case 'q':
			q := L.CheckString(arg)
			L.CheckStringSize(int64(b.Len()) + 2*int64(len(q)) + 2)
			b.WriteString(quoteLua(q))
		case 's':
			s, ok := concatString(L.Get(arg))
			if !ok {
				L.TypeError(arg, lua.LTString)
			}
			L.CheckStringSize(int64(b.Len()) + int64(len(s)) + 99)
			fmt.Fprintf(&b, "%"+spec+"s", s)
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// formatNumberArg is luaL_checknumber: numbers, and strings that convert.
func formatNumberArg(L *lua.LState, n int) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := parseLuaNumber(string(v)); ok {
			return f
		}
	}
	L.TypeError(n, lua.LTNumber)
	return 0
}

// formatCg adjusts Go's %g output to C's: Go writes "1e+06" as C does,
// but spells infinities "+Inf"/"Inf" and NaN "NaN".
func formatCg(s string) string {
	r := strings.NewReplacer("+Inf", "inf", "-Inf", "-inf", "Inf", "inf", "NaN", "nan")
	return r.Replace(s)
}

// quoteLua is "%q": a double-quoted string that Lua reads back unchanged.
func quoteLua(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString("\\\n")
		case '\r':
			b.WriteString("\\r")
		case 0:
			b.WriteString("\\000")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
