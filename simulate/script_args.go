package simulate

import (
	"encoding"
	"fmt"
	"net"
	"strconv"
	"time"
)

// argStrings converts command and script arguments as go-redis writes them
// on the wire, so a script sees the same ARGV from the simulator as from a
// server: strings and []byte as they are; integers in decimal; floats
// in the shortest 'f' form (1.5, 0.0001, never an exponent); bool as "1"
// or "0"; nil as ""; time.Time as RFC 3339 with nanoseconds;
// time.Duration as nanoseconds; encoding.BinaryMarshaler via MarshalBinary;
// net.IP as its bytes. With flatten (script arguments, as go-redis's Eval
// and Script.Run treat them), a lone []string or []any argument is spread
// into several and a lone nil means none. Any other type is an error
// naming it.
func argStrings(dst []string, args []any, flatten bool) ([]string, error) {
	if flatten && len(args) == 1 {
		switch v := args[0].(type) {
		case nil:
			return dst, nil
		case []string:
			return append(dst, v...), nil
		case []any:
			args = v
		}
	}
	for _, a := range args {
		s, err := argString(a)
		if err != nil {
			return nil, err
		}
		dst = append(dst, s)
	}
	return dst, nil
}

func argString(a any) (string, error) {
	switch v := a.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case *string:
		if v == nil {
			return "", nil
		}
		return *v, nil
	case []byte:
		return string(v), nil
	case int:
		return strconv.FormatInt(int64(v), 10), nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 64), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	case time.Duration:
		return strconv.FormatInt(v.Nanoseconds(), 10), nil
	case net.IP:
		return string(v), nil
	case encoding.BinaryMarshaler:
		b, err := v.MarshalBinary()
		if err != nil {
			return "", fmt.Errorf("simulate: marshal %T argument: %w", a, err)
		}
		return string(b), nil
	}
	return "", fmt.Errorf("simulate: can't pass a %T as a command or script argument; use a string, []byte, number or bool, or implement encoding.BinaryMarshaler", a)
}
