package simulate

import (
	"context"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// zsetAlgebraCases cover ZUNION/ZINTER/ZDIFF (and STORE forms),
// ZINTERCARD, ZMSCORE, ZMPOP, BZMPOP and ZRANDMEMBER: each option, sets as
// inputs, both encodings (listpack, skiplist) and invalid calls.
var zsetAlgebraCases = [][]string{
	{"ZADD a 1 x 2 y 3 z", "ZADD b 10 y 20 z 30 w", "ZUNION 2 a b", "ZUNION 2 a b WITHSCORES", "ZINTER 2 a b WITHSCORES", "ZDIFF 2 a b WITHSCORES", "ZDIFF 2 b a", "ZUNION 2 a b WEIGHTS 2 0.5 WITHSCORES", "ZUNION 2 a b AGGREGATE MIN WITHSCORES", "ZINTER 2 a b AGGREGATE max WITHSCORES weights 1 -1", "ZINTER 2 a b WEIGHTS 1 2 AGGREGATE SUM WEIGHTS 3 4 WITHSCORES", "ZINTERCARD 2 a b", "ZINTERCARD 2 a b LIMIT 1", "ZINTERCARD 2 a b LIMIT 0", "ZINTERCARD 1 a"},
	{"ZADD a 1 x 2 y", "ZUNIONSTORE d 2 a missing", "ZRANGE d 0 -1 WITHSCORES", "OBJECT ENCODING d", "ZINTERSTORE d 2 a missing", "EXISTS d", "ZDIFFSTORE d 1 a", "ZRANGE d 0 -1 WITHSCORES", "ZDIFFSTORE d 2 a a", "EXISTS d", "ZINTER 2 missing a", "ZUNION 1 missing", "ZDIFF 1 missing", "ZINTERCARD 2 a missing", "ZINTER 2 a a WITHSCORES", "ZUNION 2 a a WITHSCORES", "ZINTER 2 a a WEIGHTS 1 2 AGGREGATE MAX WITHSCORES"},
	// sets as inputs score 1
	{"SADD s 1 2 x", "ZADD z 5 x 7 2", "ZUNION 2 s z WITHSCORES", "ZINTER 2 s z WITHSCORES", "ZDIFF 2 s z WITHSCORES", "ZDIFF 2 z s", "ZINTERSTORE d 2 s z WEIGHTS 3 1", "ZRANGE d 0 -1 WITHSCORES", "SADD t 9 8", "ZUNIONSTORE e 2 s t", "ZRANGE e 0 -1 WITHSCORES", "TYPE e"},
	// infinities, NaN from inf*0 and inf + -inf
	{"ZADD a inf x -inf y 1 z", "ZADD b -inf x inf y 0 z", "ZUNION 2 a b WITHSCORES", "ZINTER 2 a b WITHSCORES", "ZUNION 2 a b WEIGHTS 0 0 WITHSCORES", "ZINTER 2 a b WEIGHTS 0 1 WITHSCORES", "ZINTER 2 a b AGGREGATE MIN WEIGHTS 0 1 WITHSCORES", "ZINTER 2 a b AGGREGATE MAX WEIGHTS 1 0 WITHSCORES", "ZUNION 2 a b WEIGHTS inf -inf WITHSCORES", "ZUNION 1 a WEIGHTS -0 WITHSCORES", "ZUNIONSTORE d 1 a WEIGHTS -0", "ZRANGE d 0 -1 WITHSCORES", "ZUNION 2 a b WEIGHTS nan 1", "ZUNION 2 a b WEIGHTS 1 x", "ZUNION 2 a b WEIGHTS 1e400 1 WITHSCORES", "ZUNION 2 a b WEIGHTS ' 1' 1"},
	// float sums: 0.1 + 0.2, three inputs combined in size order
	{"ZADD a 0.1 m", "ZADD b 0.2 m 1 n", "ZADD c 0.3 m 1 n 2 o", "ZUNION 3 c b a WITHSCORES", "ZINTER 3 a b c WITHSCORES", "ZUNIONSTORE d 3 c a b", "ZSCORE d m", "ZINTER 3 c b a WEIGHTS 1e17 1 3 WITHSCORES"},
	// skiplist inputs and a result too large for a listpack
	{"ZADD big 1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 2 b", "OBJECT ENCODING big", "ZADD a 3 b 4 c", "ZUNIONSTORE d 2 big a", "OBJECT ENCODING d", "ZINTERSTORE e 2 big a", "OBJECT ENCODING e", "ZRANGE d 0 -1 WITHSCORES", "ZDIFFSTORE f 2 big a", "OBJECT ENCODING f"},
	{"SET s v", "ZADD a 1 x", "ZUNION 2 a s", "ZUNION 2 missing s WEIGHTS x", "ZINTER 2 s missing", "ZDIFF 1 s", "ZINTERCARD 1 s", "ZUNIONSTORE s 1 a", "TYPE s", "LPUSH l 1", "ZINTERSTORE d 2 a l"},
	{"ZADD a 1 x", "ZUNION 0 a", "ZUNIONSTORE d 0 a", "ZINTERCARD 0 a", "ZINTER -1 a", "ZUNION x a", "ZUNION 3 a b", "ZUNION 2 a b WEIGHTS 1", "ZUNION 1 a AGGREGATE", "ZUNION 1 a AGGREGATE foo", "ZUNIONSTORE d 1 a WITHSCORES", "ZINTERCARD 1 a WITHSCORES", "ZINTERCARD 1 a LIMIT -1", "ZINTERCARD 1 a LIMIT x", "ZINTERCARD 1 a LIMIT", "ZINTERCARD 1 a WEIGHTS 1", "ZDIFF 1 a WEIGHTS 1", "ZDIFF 1 a AGGREGATE SUM", "ZDIFF 1 a WITHSCORES", "ZUNION 1 a FOO", "ZUNION", "ZUNIONSTORE d 1"},
	// ZMSCORE
	{"ZADD a 1.5 x -0 y inf z", "ZMSCORE a x y z nope", "ZMSCORE missing x y", "SET s v", "ZMSCORE s x", "ZMSCORE a"},
	// ZMPOP and BZMPOP (which, with something to pop, does not block)
	{"ZADD a 1 x 2 y 3 z", "ZADD b 4 w", "ZMPOP 1 a MIN", "ZMPOP 2 missing a MAX COUNT 5", "EXISTS a", "ZMPOP 2 a b min count 1", "ZMPOP 1 b MIN", "ZMPOP 2 a b MIN", "ZADD c 1 x", "BZMPOP 0 2 missing c MAX COUNT 2", "ZADD c 1 x 2 y", "BZMPOP 0.5 1 c min", "EXISTS c"},
	{"ZADD a 1 x", "SET s v", "ZMPOP 2 missing s MIN", "ZMPOP 2 a s MIN", "ZMPOP 0 a MIN", "ZMPOP -1 a MIN", "ZMPOP x a MIN", "ZMPOP 2 a MIN", "ZMPOP 1 a FOO", "ZMPOP 1 a MIN COUNT 0", "ZMPOP 1 a MIN COUNT -1", "ZMPOP 1 a MIN COUNT x", "ZMPOP 1 a MIN COUNT 1 COUNT 2", "ZMPOP 1 a MIN COUNT", "ZMPOP 1 a MIN FOO 1", "BZMPOP x 1 a MIN", "BZMPOP -1 1 a MIN", "BZMPOP 0 0 a MIN", "BZMPOP x 0 a MIN", "BZMPOP 0 1 a FOO", "ZMPOP 1 a"},
	// ZRANDMEMBER: what does not depend on the draw
	{"ZADD a 1 x 2 y 3 z", "ZRANDMEMBER a 3", "ZRANDMEMBER a 100 WITHSCORES", "ZRANDMEMBER a 0", "ZRANDMEMBER a 0 WITHSCORES", "ZRANDMEMBER missing", "ZRANDMEMBER missing 5", "ZRANDMEMBER missing -5 WITHSCORES", "ZADD one 7 m", "ZRANDMEMBER one", "ZRANDMEMBER one -3 WITHSCORES", "ZRANDMEMBER one 1 withscores", "ZRANDMEMBER one -1"},
	{"ZADD a 1 x", "ZRANDMEMBER a x", "ZRANDMEMBER a -0", "ZRANDMEMBER a 1 FOO", "ZRANDMEMBER a 1 WITHSCORES x", "ZRANDMEMBER a 4611686018427387904 WITHSCORES", "ZRANDMEMBER a -4611686018427387905 WITHSCORES", "ZRANDMEMBER a 4611686018427387904", "ZRANDMEMBER a 9223372036854775807 WITHSCORES", "ZRANDMEMBER missing -9223372036854775807", "ZRANDMEMBER a 1.5", "SET s v", "ZRANDMEMBER s", "ZRANDMEMBER s 2", "ZRANDMEMBER s x", "ZRANDMEMBER missing x"},
}

func TestZSetAlgebraMatchesRedis(t *testing.T) { runCommandCases(t, zsetAlgebraCases) }

// TestZSetAlgebraInScripts compares the shapes a script sees: RESP2's
// (flat member, score lists; scores as strings) by default, RESP3's after
// redis.setresp(3). Direct calls (above) speak RESP3, as go-redis does.
func TestZSetAlgebraInScripts(t *testing.T) {
	runSandboxCases(t, []sandboxCase{
		{src: "redis.setresp(3) redis.call('ZADD', KEYS[1], 1, 'x', 2.5, 'y') return redis.call('ZUNION', 1, KEYS[1], 'WITHSCORES')", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('ZADD', KEYS[1], 1, 'x', 2.5, 'y') return redis.call('ZMPOP', 1, KEYS[1], 'MAX', 'COUNT', 2)", keys: []string{"{k}a"}},
		{src: "redis.call('ZADD', KEYS[1], 1, 'x', 2.5, 'y') return redis.call('ZMPOP', 1, KEYS[1], 'MAX', 'COUNT', 2)", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('ZADD', KEYS[1], 1, 'x', 2.5, 'y') return redis.call('ZRANDMEMBER', KEYS[1], 5, 'WITHSCORES')", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('ZADD', KEYS[1], 1, 'x') return redis.call('ZMSCORE', KEYS[1], 'x', 'nope')", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) return redis.call('BZMPOP', 0, 1, KEYS[1], 'MIN')", keys: []string{"{k}a"}},
		{src: "return redis.call('BZMPOP', 0, 1, KEYS[1], 'MIN')", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('SADD', KEYS[1], 3, 1) return redis.call('SINTER', KEYS[1])", keys: []string{"{k}a"}},
		{src: "redis.call('SADD', KEYS[1], 3, 1) return redis.call('SUNION', KEYS[1])", keys: []string{"{k}a"}},
		{src: "redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'p', 15.087269, 37.502669, 'c') return redis.call('GEOPOS', KEYS[1], 'p', 'nope')", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'p', 15.087269, 37.502669, 'c') return redis.call('GEOPOS', KEYS[1], 'p', 'nope')", keys: []string{"{k}a"}},
		{src: "redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'p', 15.087269, 37.502669, 'c') return redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'WITHCOORD', 'WITHDIST', 'WITHHASH', 'ASC')", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'p', 15.087269, 37.502669, 'c') return redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'WITHCOORD', 'WITHDIST', 'WITHHASH', 'ASC')", keys: []string{"{k}a"}},
		{src: "redis.call('GEOADD', KEYS[1], 1, 2, 'p') return redis.call('GEODIST', KEYS[1], 'p', 'p', 'km')", keys: []string{"{k}a"}},
		{src: "redis.call('PFADD', KEYS[1], 'a', 'b') return {redis.call('PFCOUNT', KEYS[1]), redis.call('GET', KEYS[1])}", keys: []string{"{k}a"}},
		{src: "return redis.pcall('PFADD', KEYS[1], 'a') ", keys: []string{"{k}a"}},
		{src: "redis.setresp(3) redis.call('SADD', KEYS[1], 3, 1) return redis.call('SRANDMEMBER', KEYS[1], 3)", keys: []string{"{k}a"}},
	})
}

// TestZRandMemberDraws checks what a fixed reply cannot: distinct members
// with their own scores for a positive count, repetition for a negative
// one, and the same draws from two fresh servers.
func TestZRandMemberDraws(t *testing.T) {
	ctx := context.Background()
	scores := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}
	draw := func() [][]any {
		s := New(WithProtocol(2))
		for m, sc := range scores {
			s.Do(ctx, "ZADD", "z", sc, m)
		}
		var out [][]any
		for _, c := range []string{"2", "4", "-12"} {
			r, err := s.Do(ctx, "ZRANDMEMBER", "z", c, "WITHSCORES").Slice()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	first, second := draw(), draw()
	for i, want := range []int{2, 4, 12} {
		got := first[i]
		if len(got) != 2*want {
			t.Fatalf("draw %d: %v, want %d members with scores", i, got, want)
		}
		seen := map[any]bool{}
		for j := 0; j < len(got); j += 2 {
			m := got[j].(string)
			if scores[m] != got[j+1] {
				t.Fatalf("draw %d: %v scores %v, want %v", i, m, got[j+1], scores[m])
			}
			if seen[m] && i < 2 {
				t.Fatalf("draw %d repeats %v: %v", i, m, got)
			}
			seen[m] = true
			if got[j] != second[i][j] {
				t.Fatalf("draw %d differs between two fresh servers: %v and %v", i, got, second[i])
			}
		}
	}
}

// runSandboxCases runs each script on a flushed redis-server and a fresh
// simulator and compares the replies.
func runSandboxCases(t *testing.T, cases []sandboxCase) {
	t.Helper()
	client := diffStandalone(t).Client()
	ctx := context.Background()
	for _, tc := range cases {
		if err := client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		want := outcomeOf(client.Eval(ctx, tc.src, tc.keys, tc.args...))
		got := outcomeOf(diffNew(t).RunSource(ctx, tc.src, tc.keys, tc.args...))
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("%s: simulator differs from redis-server (-redis +simulator):\n%s", tc.src, diff)
		}
	}
}
