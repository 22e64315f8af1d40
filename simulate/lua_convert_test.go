package simulate

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// TestRESP3ToLua checks redisProtocolToLuaType's RESP3 shapes, which a
// script sees after redis.setresp(3).
func TestRESP3ToLua(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	bulk := func(s string) Reply { return Reply{Kind: KindBulk, Str: s} }
	for _, tc := range []struct {
		name  string
		reply Reply
		probe string // a Lua expression over the converted value v
		want  string
	}{
		{"null", Reply{Kind: KindNil}, "type(v)", "nil"},
		{"true", Reply{Kind: KindBool, Int: 1}, "tostring(v)", "true"},
		{"false", Reply{Kind: KindBool}, "tostring(v)", "false"},
		{"double", Reply{Kind: KindDouble, Float: 1.5}, "tostring(v.double)", "1.5"},
		{"big number", Reply{Kind: KindBigNumber, Str: "12345678901234567890"}, "v.big_number", "12345678901234567890"},
		{"verbatim", Reply{Kind: KindVerbatim, Str: "hi"}, "v.verbatim_string.format .. ':' .. v.verbatim_string.string", "txt:hi"},
		{"map", Reply{Kind: KindMap, Elems: []Reply{bulk("a"), {Kind: KindInt, Int: 1}}}, "tostring(v.map.a)", "1"},
		{"set", Reply{Kind: KindSet, Elems: []Reply{bulk("m")}}, "tostring(v.set.m)", "true"},
		{"status", Reply{Kind: KindStatus, Str: "OK"}, "v.ok", "OK"},
		{"error code kept", Reply{Kind: KindError, Str: "WRONGTYPE Operation against a key"}, "v.err", "WRONGTYPE Operation against a key"},
		{"error without code", Reply{Kind: KindError, Str: "oops"}, "v.err", "ERR oops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			L.SetGlobal("v", toLua(L, tc.reply, 3, Redis70))
			if err := L.DoString("result = " + tc.probe); err != nil {
				t.Fatal(err)
			}
			if got := L.GetGlobal("result").String(); got != tc.want {
				t.Errorf("%s = %q; want %q", tc.probe, got, tc.want)
			}
		})
	}
}

// TestLuaToReply checks luaReplyToRedisReply's rules for script results.
func TestLuaToReply(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	for _, tc := range []struct {
		src  string
		resp int
		want Reply
	}{
		{"return 3.99", 2, Reply{Kind: KindInt, Int: 3}},
		{"return -3.99", 2, Reply{Kind: KindInt, Int: -3}},
		{"return 1e30", 2, Reply{Kind: KindInt, Int: math.MinInt64}},
		{"return 0/0", 2, Reply{Kind: KindInt, Int: math.MinInt64}},
		{"return true", 2, Reply{Kind: KindInt, Int: 1}},
		{"return false", 2, Reply{Kind: KindNil}},
		{"return true", 3, Reply{Kind: KindBool, Int: 1}},
		{"return false", 3, Reply{Kind: KindBool}},
		{"return {ok = 'a\\r\\nb'}", 2, Reply{Kind: KindStatus, Str: "a  b"}},
		{"return {err = 'E x', ok = 'y'}", 2, Reply{Kind: KindError, Str: "E x"}},
		{"return {1, nil, 3}", 2, Reply{Kind: KindArray, Elems: []Reply{{Kind: KindInt, Int: 1}}}},
		{"return {}", 2, Reply{Kind: KindArray, Elems: []Reply{}}},
		{"return {double = 2.5}", 2, Reply{Kind: KindDouble, Float: 2.5}},
		{"return {big_number = '9'}", 2, Reply{Kind: KindBigNumber, Str: "9"}},
		{"return {verbatim_string = {format = 'txt', string = 's'}}", 2, Reply{Kind: KindVerbatim, Str: "s"}},
		{"return {set = {a = true}}", 2, Reply{Kind: KindSet, Elems: []Reply{{Kind: KindBulk, Str: "a"}}}},
		{"return {map = {a = false}}", 3, Reply{Kind: KindMap, Elems: []Reply{{Kind: KindBulk, Str: "a"}, {Kind: KindBool}}}},
		{"return function() end", 2, Reply{Kind: KindNil}},
	} {
		if err := L.DoString("result = (function() " + tc.src + " end)()"); err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got := fromLua(L.GetGlobal("result"), tc.resp)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (resp %d) (-want +got):\n%s", tc.src, tc.resp, diff)
		}
	}
	// A table that contains itself ends in an error, not a hang.
	if err := L.DoString("result = {} result[1] = result"); err != nil {
		t.Fatal(err)
	}
	if got := fromLua(L.GetGlobal("result"), 2); !hasError(got) {
		t.Errorf("self-referencing table did not produce an error reply")
	}
}

func hasError(r Reply) bool {
	if r.Kind == KindError {
		return true
	}
	for _, e := range r.Elems {
		if hasError(e) {
			return true
		}
	}
	return false
}

func TestLuaNumbers(t *testing.T) {
	for n, want := range map[float64]string{
		0.1 + 0.2: "0.3", 1e15: "1e+15", 100000000000000: "1e+14", 3: "3", -0.5: "-0.5",
		math.Inf(1): "inf", math.Inf(-1): "-inf", 2e-7: "2e-07", 123456789012: "123456789012",
	} {
		if got := formatLuaNumber(n); got != want {
			t.Errorf("formatLuaNumber(%v) = %q; want %q", n, got, want)
		}
	}
	if got := formatLuaNumber(math.Copysign(0, -1)); got != "-0" {
		t.Errorf("negative zero = %q; want -0", got)
	}
	for n, want := range map[float64]string{0.30000000000000004: "0.30000000000000004", 1e15: "1000000000000000", 3: "3", 1e20: "1e+20"} {
		if got := formatArgNumber(n); got != want {
			t.Errorf("formatArgNumber(%v) = %q; want %q", n, got, want)
		}
	}
	for s, want := range map[string]any{
		"1e3": 1000.0, " 10 ": 10.0, "0x1A": 26.0, "-0x10": -16.0, ".5": 0.5, "5.": 5.0, "inf": math.Inf(1),
		"1e": nil, "": nil, " ": nil, "0x": nil, "1 2": nil, "1_000": nil, "0x1p4": 16.0, "0x1.8": 1.5, "+5": 5.0, "1e400": math.Inf(1), "abc": nil,
	} {
		f, ok := parseLuaNumber(s)
		switch {
		case want == nil && ok:
			t.Errorf("parseLuaNumber(%q) = %v; want no number", s, f)
		case want != nil && (!ok || f != want.(float64)):
			t.Errorf("parseLuaNumber(%q) = %v, %v; want %v", s, f, ok, want)
		}
	}
}
