package lualib_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/simulate"
)

// TestSandboxMatchesRedis runs whole scripts through the simulator, where the
// libraries sit behind read-only proxies, and through EVAL on redis-server,
// comparing full replies and full error texts.
func TestSandboxMatchesRedis(t *testing.T) {
	client := redistest.Standalone(t).Client()
	sim := simulate.New()
	ctx := context.Background()
	for _, src := range []string{
		"return cjson.encode({1, 2, {a = 1}})",
		"return cjson.decode('[1,2,3]')",
		"return cjson.decode('[1,')",
		"return cjson.encode(function() end)",
		"return cjson.decode('null') == cjson.null",
		"cjson.encode = nil",
		"cjson.x = 1",
		"bit.band = nil",
		"struct.pack = nil",
		"cmsgpack.pack = nil",
		"return rawget(cjson, 'encode') ~= nil",
		"return getmetatable(cjson) == nil",
		"return type(cjson.null)",
		"return bit.tohex(-1)",
		"return bit.tobit('x')",
		"return struct.pack('>I2', 258)",
		"return struct.unpack('>I2', '\\1\\2')",
		"return struct.pack('q')",
		"return cmsgpack.pack({1, 2, 3})",
		"return cmsgpack.unpack(cmsgpack.pack({1, 'a'}, 2))",
		"return cmsgpack.unpack('\\196')",
		"return {pcall(cjson.decode, 'x')}",
		"return {pcall(function() return cjson.decode('x') end)}",
		"return cjson.encode(redis.call('PING'))",
	} {
		want, wantErr := client.Eval(ctx, src, nil).Result()
		got, gotErr := sim.RunSource(ctx, src, nil).Result()
		if d := cmp.Diff(fmt.Sprint(want), fmt.Sprint(got)); d != "" || fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Errorf("%s:\n got %v, %v\nwant %v, %v", src, got, gotErr, want, wantErr)
		}
	}
}
