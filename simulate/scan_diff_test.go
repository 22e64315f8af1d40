package simulate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// scanExactCases have replies whose order Redis defines (small encodings
// answer in one call, in the encoding's order), so they compare exactly.
var scanExactCases = [][]string{
	{"HSET h z 1 a 2 m 3", "HSCAN h 0", "HSCAN h 99 COUNT 1", "HSCAN h 0 MATCH a*", "HSCAN h 0 MATCH nomatch", "HDEL h a", "HSET h a 9", "HSCAN h 0"},
	{"SADD s 10 9 -3 100 0", "SMEMBERS s", "SSCAN s 0", "SSCAN s 0 MATCH 1*", "SSCAN s 0 COUNT 1", "OBJECT ENCODING s"},
	{"ZADD z 0.1 a 1 b 2.5 c 1e20 d 1.5e-7 e -0 f inf g", "ZSCAN z 0", "ZSCAN z 0 MATCH [a-c]", "OBJECT ENCODING z"},
	{"SET k v", "SCAN 0", "KEYS *", "KEYS k", "KEYS x*", "SCAN 0 MATCH k", "SCAN 0 TYPE hash", "SCAN 0 TYPE STRING", "SCAN 0 TYPE nosuchtype"},
	{"SCAN abc", "SCAN ' 1'", "SCAN 0 COUNT 0", "SCAN 0 COUNT -1", "SCAN 0 COUNT x", "SCAN 0 FOO", "SCAN 0 MATCH", "SCAN -1", "SCAN 18446744073709551615", "SCAN 18446744073709551616", "SCAN +0", "SCAN ''", "SCAN -"},
	{"HSCAN missing 0 FOO", "HSCAN missing x", "SET str v", "HSCAN str 0", "SSCAN str 0", "ZSCAN str 0", "HSET h f v", "HSCAN h 0 TYPE string", "HSCAN h 0 COUNT 0", "HSCAN h 0 NOVALUES", "SSCAN h 0"},
	{"SET i 12", "OBJECT ENCODING i", "SET e ''", "OBJECT ENCODING e", "APPEND e x", "OBJECT ENCODING e", "APPEND n 12", "OBJECT ENCODING n", "SET m ' 12'", "OBJECT ENCODING m",
		"SET m 12345678901234567890", "OBJECT ENCODING m", "SET m 01", "OBJECT ENCODING m", "INCRBYFLOAT f 1.5", "INCRBYFLOAT f 1.5", "OBJECT ENCODING f", "SETRANGE r 0 ab", "OBJECT ENCODING r",
		"INCR r2", "OBJECT ENCODING r2", "APPEND r2 1", "OBJECT ENCODING r2", "INCR r2", "OBJECT ENCODING r2", "SET big " + strings.Repeat("y", 44), "OBJECT ENCODING big", "SET big " + strings.Repeat("y", 45), "OBJECT ENCODING big"},
	{"RPUSH l a", "OBJECT ENCODING l", "XADD x 1-1 f v", "OBJECT ENCODING x", "OBJECT ENCODING missing", "OBJECT FOO l", "OBJECT ENCODING", "OBJECT ENCODING a b"},
	{"HSET h f " + strings.Repeat("v", 64), "OBJECT ENCODING h", "HSET h g " + strings.Repeat("v", 65), "OBJECT ENCODING h", "HDEL h g", "OBJECT ENCODING h",
		"HINCRBY h2 " + strings.Repeat("f", 65) + " 1", "OBJECT ENCODING h2", "HSETNX h3 " + strings.Repeat("f", 65) + " 1", "OBJECT ENCODING h3", "HINCRBYFLOAT h4 " + strings.Repeat("f", 65) + " 1", "OBJECT ENCODING h4"},
	{"SADD s 1 2", "SADD s 01", "OBJECT ENCODING s", "SADD t -0", "OBJECT ENCODING t", "SADD u a", "OBJECT ENCODING u", "SADD v 9223372036854775807 -9223372036854775808", "OBJECT ENCODING v", "SMEMBERS v"},
	{"ZINCRBY z 1 " + strings.Repeat("q", 65), "OBJECT ENCODING z", "ZADD y 1 " + strings.Repeat("q", 64), "OBJECT ENCODING y", "ZADD y 2 " + strings.Repeat("r", 65), "OBJECT ENCODING y", "ZREM y " + strings.Repeat("r", 65), "OBJECT ENCODING y"},
	// Scripts page with the SCAN family too (a job queue's pagination script).
	{"HSET h a 1 b 2 c 3", "SADD {s}s 3 1 2", "ZADD {s}z 2 x 1 y",
		"EVAL 'local out, cursor = {}, \"0\" repeat local r = redis.call(\"HSCAN\", KEYS[1], cursor, \"MATCH\", ARGV[1]) cursor = r[1] for _, v in ipairs(r[2]) do out[#out+1] = v end until cursor == \"0\" return out' 1 h *",
		"EVAL 'return {redis.call(\"SSCAN\", KEYS[1], 0), redis.call(\"ZSCAN\", KEYS[2], 0), redis.call(\"OBJECT\", \"ENCODING\", KEYS[1])}' 2 {s}s {s}z",
		"EVAL 'return redis.call(\"SCAN\", 0, \"TYPE\", \"zset\")' 0", "EVAL 'return redis.call(\"KEYS\", \"{s}z*\")' 0"},
}

func TestScanExactMatchesRedis(t *testing.T) { runCommandCases(t, scanExactCases) }

// TestEncodingThresholdsMatchRedis grows hashes, sets and sorted sets
// across their entry-count thresholds and compares OBJECT ENCODING after
// every step, then shrinks them (Redis never converts back).
func TestEncodingThresholdsMatchRedis(t *testing.T) {
	client := diffStandalone(t).Client()
	sim := diffNew(t)
	step := func(args ...any) {
		t.Helper()
		compareDo(t, t.Fatalf, client, sim, args...)
	}
	for i := 1; i <= 520; i++ {
		step("HSET", "h", fmt.Sprint("f", i), "v")
		if i <= 135 {
			step("ZADD", "z", i, fmt.Sprint("m", i))
			step("OBJECT", "ENCODING", "z")
		}
		if i <= 3 || i >= 510 {
			step("OBJECT", "ENCODING", "h")
		}
		step("SADD", "s", i)
		if i >= 510 {
			step("OBJECT", "ENCODING", "s")
		}
	}
	for i := 1; i <= 130; i++ {
		step("HDEL", "h", fmt.Sprint("f", i*3))
		step("ZREM", "z", fmt.Sprint("m", i))
		step("SREM", "s", i)
	}
	step("OBJECT", "ENCODING", "h")
	step("OBJECT", "ENCODING", "z")
	step("OBJECT", "ENCODING", "s")
	step("ZADD", "z", "-0", "negzero")
	step("EVAL", "return redis.call('ZSCORE', KEYS[1], ARGV[1])", 1, "z", "negzero") // "-0" in a skiplist
	step("ZADD", "small", "-0", "negzero")
	step("EVAL", "return redis.call('ZSCORE', KEYS[1], ARGV[1])", 1, "small", "negzero") // "0" in a listpack
	step("ZRANGESTORE", "zs", "z", 0, 2)
	step("OBJECT", "ENCODING", "zs")
	step("ZRANGE", "zs", 0, -1, "WITHSCORES")
}

// TestScanIterationMatchesRedis fills both servers with the same keys and
// big collections (hash tables, so the order is undefined) and compares
// what a full SCAN/HSCAN/SSCAN/ZSCAN iteration and KEYS return as sets.
func TestScanIterationMatchesRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	sim := diffNew(t)
	both := func(args ...any) {
		t.Helper()
		if err := client.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := sim.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 300; i++ {
		switch i % 5 {
		case 0:
			both("SET", fmt.Sprintf("user:%d", i), i)
		case 1:
			both("HSET", fmt.Sprintf("job:{q}:%d", i), "f", i)
		case 2:
			both("SADD", fmt.Sprintf("set:%d", i), i)
		case 3:
			both("ZADD", fmt.Sprintf("z?%d", i), i, "m")
		case 4:
			both("RPUSH", fmt.Sprintf("list[%d]", i), i)
		}
	}
	for i := 0; i < 600; i++ {
		both("HSET", "bighash", fmt.Sprint("field", i), i)
		if i < 400 {
			both("SADD", "bigset", fmt.Sprint("member", i))
			both("ZADD", "bigzset", i%7, fmt.Sprint("m", i))
		}
	}
	patterns := []string{"*", "user:*", "user:1?", "job:{q}:*", "set:[0-9]", "set:[^1]*", "z\\?1*", "list\\[*", "*[", "user:[9-7]*", "*:1*", "[", "\\", "field1*", "member3?", "m1[0-3]"}
	for pi, pat := range patterns {
		want, err := client.Keys(ctx, pat).Result()
		if err != nil {
			t.Fatal(err)
		}
		got, err := sim.Do(ctx, "KEYS", pat).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		sameSet(t, "KEYS "+pat, want, got)
		counts := []int{7, 1000}
		if pi < 2 {
			counts = append(counts, 1) // one element per call: the cursor's whole walk
		}
		for _, count := range counts {
			for _, typ := range []string{"", "hash", "string"} {
				opts := []any{"MATCH", pat, "COUNT", count}
				if typ != "" {
					opts = append(opts, "TYPE", typ)
				}
				sameSet(t, fmt.Sprint("SCAN ", opts), iterate(t, client, nil, opts, 2), iterate(t, sim, nil, opts, 2))
			}
			for _, key := range []string{"bighash", "bigset", "bigzset"} {
				cmd := map[string]string{"bighash": "HSCAN", "bigset": "SSCAN", "bigzset": "ZSCAN"}[key]
				opts := []any{"MATCH", pat, "COUNT", count}
				sameSet(t, fmt.Sprint(cmd, " ", key, opts), iterate(t, client, []any{cmd, key}, opts, 2), iterate(t, sim, []any{cmd, key}, opts, 2))
			}
		}
	}
	for _, args := range [][]any{{"HGETALL", "bighash"}, {"SMEMBERS", "bigset"}, {"ZSCAN", "bigzset", 0}, {"KEYS", "*"}, {"SCAN", 0}} {
		if sim.ReplyOrder(args...) != OrderUndefined {
			t.Errorf("ReplyOrder%v = defined; Redis's order is undefined for a hash table", args)
		}
	}
	for _, args := range [][]any{{"HGETALL", "job:{q}:1"}, {"SMEMBERS", "set:2"}, {"ZSCAN", "z?3", 0}, {"LRANGE", "list[4]", 0, -1}} {
		if sim.ReplyOrder(args...) != OrderDefined {
			t.Errorf("ReplyOrder%v = undefined; Redis defines it for a small encoding", args)
		}
	}
}

// doer is what the real client and the simulator share.
type doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// iterate runs a scan command to cursor 0 (at most 10,000 calls) and
// returns what it listed, elements of a group (field and value) joined.
func iterate(t *testing.T, d doer, prefix, opts []any, group int) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	cursor := "0"
	if len(prefix) == 0 {
		prefix, group = []any{"SCAN"}, 1
	} else if prefix[0] == "SSCAN" {
		group = 1
	}
	for calls := 0; calls < 10000; calls++ {
		args := append(append(append([]any{}, prefix...), cursor), opts...)
		v, err := d.Do(ctx, args...).Slice()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		cursor = v[0].(string)
		elems := v[1].([]any)
		for i := 0; i+group <= len(elems); i += group {
			parts := make([]string, group)
			for j := range parts {
				parts[j] = fmt.Sprint(elems[i+j])
			}
			out = append(out, strings.Join(parts, "="))
		}
		if cursor == "0" {
			return dedupe(out)
		}
	}
	t.Fatalf("%v did not finish in 10,000 calls", prefix)
	return nil
}

func dedupe(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func sameSet(t *testing.T, what string, want, got []string) {
	t.Helper()
	want, got = dedupe(append([]string{}, want...)), dedupe(append([]string{}, got...))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s lists other elements than redis-server (-redis +simulator):\n%s", what, diff)
	}
}
