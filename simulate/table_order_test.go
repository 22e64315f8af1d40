package simulate

import (
	"context"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Known answers recorded from redis-server 7.0.15: what Lua 5.1's table
// layout makes of a few tables real scripts build. They run without a
// server; TestTableOrderMatchesRedis compares thousands more against one.
func TestTableOrderKnownAnswers(t *testing.T) {
	src := `
local t = {}
t.attempts = 3
t.backoff = {type='fixed', delay=100}
local u = {parent={queueKey='q', id='i'}, attempts=0}
local v = {}
for i=1,20 do v['k'..i] = i end
v.k3 = nil v.k7 = nil v.x = 1
local w = {1,2,nil,4, [10]=5, a=1, [2.5]=3, [true]=1, [-1]=2}
local ks = {}
for k in pairs(v) do ks[#ks+1]=tostring(k) end
local ws = {}
for k in pairs(w) do ws[#ws+1]=tostring(k) end
local h = {} h[1]=1 h[2]=2 h[4]=4 h[5]=5
local h2 = {n=1} for i=1,10 do h2[i]=i end h2[5]=nil h2[10]=nil
return {cjson.encode(t), cjson.encode(u), table.concat(ks,','), table.concat(ws,','), #w, #h, #h2, cmsgpack.pack(u), cjson.encode({[1]=1,[2]=2,[4]=4})}`
	want := []any{
		`{"backoff":{"delay":100,"type":"fixed"},"attempts":3}`,
		`{"parent":{"id":"i","queueKey":"q"},"attempts":0}`,
		"k16,k19,k11,x,k17,k15,k20,k10,k8,k1,k12,k2,k9,k13,k18,k14,k6,k4,k5",
		"1,2,4,a,true,2.5,10,-1",
		int64(4), int64(5), int64(9),
		"\x82\xa6parent\x82\xa2id\xa1i\xa8queueKey\xa1q\xa8attempts\x00",
		"[1,2,null,4]",
	}
	got, err := New().RunSource(context.Background(), src, nil).Result()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-redis 7.0.15 +simulator):\n%s", diff)
	}
}

// The same program gives the same bytes on every run and every Server
// (gopher-lua's own tables iterated in Go map order).
func TestTableOrderIsDeterministic(t *testing.T) {
	ctx := context.Background()
	g := &tableGen{r: rand.New(rand.NewSource(tableOrderDefaultSeed))}
	a, b := New(), New()
	for c := 0; c < 100; c++ {
		src := g.script()
		first := outcomeOf(a.RunSource(ctx, src, nil))
		again := outcomeOf(a.RunSource(ctx, src, nil))
		other := outcomeOf(b.RunSource(ctx, src, nil))
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("case %d: second run on the same server differs:\n%s\nscript:\n%s", c, diff, src)
		}
		if diff := cmp.Diff(first, other); diff != "" {
			t.Fatalf("case %d: run on another server differs:\n%s\nscript:\n%s", c, diff, src)
		}
	}
}
