package simulate

import (
	"math/big"
	"strconv"

	"github.com/redis/go-redis/v9"
)

func statusReply(s string) Reply  { return Reply{Kind: KindStatus, Str: s} }
func intReply(n int64) Reply      { return Reply{Kind: KindInt, Int: n} }
func bulkReply(s string) Reply    { return Reply{Kind: KindBulk, Str: s} }
func doubleReply(f float64) Reply { return Reply{Kind: KindDouble, Float: f} }
func arrayReply(e []Reply) Reply  { return Reply{Kind: KindArray, Elems: e} }
func okReply() Reply              { return statusReply("OK") }
func nilReply() Reply             { return Reply{} }

// formatDouble formats a double the way Redis 7.0 does in RESP2 bulk replies
// ("%.17g"; "inf" and "-inf" for infinities).
func formatDouble(f float64) string {
	switch {
	case f > 1.7976931348623157e308:
		return "inf"
	case f < -1.7976931348623157e308:
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// Downgrade turns a RESP3-rich reply into what a RESP2 client, or a script
// before redis.setresp(3), sees.
func Downgrade(r Reply) Reply { return downgrade(r, Redis70) }

// downgrade is Downgrade as line p formats doubles.
func downgrade(r Reply, p Profile) Reply {
	switch r.Kind {
	case KindMap, KindSet, KindArray:
		out := make([]Reply, len(r.Elems))
		for i := range r.Elems {
			out[i] = downgrade(r.Elems[i], p)
		}
		return arrayReply(out)
	case KindDouble:
		return bulkReply(p.formatDouble(r.Float))
	case KindBool:
		return intReply(r.Int)
	case KindBigNumber, KindVerbatim:
		return bulkReply(r.Str)
	}
	return r
}

// Error is an error reply, with Redis's text. It satisfies go-redis's
// redis.Error, as errors read from a real server do.
type Error string

func (e Error) Error() string { return string(e) }

// RedisError marks Error as a server error for go-redis.
func (e Error) RedisError() {}

var _ redis.Error = Error("")

// ToGo returns what go-redis v9 (Protocol 3) returns for r from Do: string,
// int64, float64, bool, []any, map[any]any; redis.Nil for a null; an Error
// for an error reply. Nested nulls are nil and nested errors are Error values.
func ToGo(r Reply) (any, error) {
	switch r.Kind {
	case KindNil:
		return nil, redis.Nil
	case KindError:
		return nil, Error(r.Str)
	}
	return toGoValue(r), nil
}

func toGoValue(r Reply) any {
	switch r.Kind {
	case KindStatus, KindBulk, KindVerbatim:
		return r.Str
	case KindBigNumber:
		if n, ok := new(big.Int).SetString(r.Str, 10); ok {
			return n // go-redis decodes RESP3 big numbers as *big.Int
		}
		return r.Str
	case KindError:
		return Error(r.Str)
	case KindInt:
		return r.Int
	case KindDouble:
		return r.Float
	case KindBool:
		return r.Int != 0
	case KindArray, KindSet:
		out := make([]any, len(r.Elems))
		for i := range r.Elems {
			out[i] = toGoValue(r.Elems[i])
		}
		return out
	case KindMap:
		m := make(map[any]any, len(r.Elems)/2)
		for i := 0; i+1 < len(r.Elems); i += 2 {
			m[toGoValue(r.Elems[i])] = toGoValue(r.Elems[i+1])
		}
		return m
	}
	return nil
}
