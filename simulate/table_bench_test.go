package simulate

import (
	"context"
	"testing"
)

// BenchmarkRunTableHeavy builds tables the way job-queue scripts do (string
// fields, an array, removals) and encodes them: the cost of Lua 5.1's table
// layout against gopher-lua's maps.
func BenchmarkRunTableHeavy(b *testing.B) {
	const src = `
local t = {}
for i = 1, 200 do t['field' .. i] = i end
for i = 1, 200, 3 do t['field' .. i] = nil end
local a = {}
for i = 1, 200 do a[#a + 1] = i end
local n = 0
for k, v in pairs(t) do n = n + v end
return {n, #cjson.encode(t), #cmsgpack.pack(a)}`
	srv := New()
	ctx := context.Background()
	if err := srv.RunSource(ctx, src, nil).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := srv.RunSource(ctx, src, nil).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
