package simulate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// keyCases cover the keyspace commands: TOUCH, RENAMENX, COPY, RANDOMKEY,
// the databases (SELECT, MOVE, SWAPDB, FLUSHDB, FLUSHALL) and PING's
// arity. Every sequence ends in database 0, which the test compares.
var keyCases = [][]string{
	{"PING a b", "PING a", "PING", "FLUSHALL x", "SET k v", "FLUSHALL a b", "EXISTS k", "FLUSHALL ASYNC", "EXISTS k", "SET k v", "FLUSHALL sync", "FLUSHDB x", "SET k v", "FLUSHDB ASYNC", "EXISTS k", "SET k v", "FLUSHDB", "DBSIZE"},
	{"SET a 1", "TOUCH a b a", "TOUCH b", "RENAMENX a b", "GET b", "RENAMENX missing c", "SET a 2", "RENAMENX a b", "RENAMENX a a", "RENAMENX b b", "SET t x PX 100000", "RENAMENX t u", "PTTL u", "DEL a b", "RANDOMKEY", "DEL u", "RANDOMKEY"},
	{"SET s 12", "COPY s d", "GET d", "OBJECT ENCODING d", "COPY s d", "COPY s d REPLACE", "COPY s s", "COPY missing d", "COPY s d FOO", "COPY s d DB", "COPY s d DB x", "COPY s d DB 16", "COPY s d DB -1", "COPY s d DB 2147483648", "COPY s s DB 0", "APPEND s x", "COPY s r", "OBJECT ENCODING r"},
	{"HSET h a 1 b 2", "EXPIRE h 100", "COPY h h2", "HGETALL h2", "TTL h2", "RPUSH l a b", "COPY l l2", "LRANGE l2 0 -1", "ZADD z 1 a 2 b", "COPY z z2", "ZRANGE z2 0 -1 WITHSCORES", "SADD st 1 2 x", "COPY st st2", "SCARD st2", "OBJECT ENCODING st2", "XADD x 1-1 f v", "COPY x x2", "XRANGE x2 - +", "HSET h c 1", "HLEN h2", "SET d v", "COPY h d REPLACE", "TYPE d"},
	{"SET k v", "SELECT 16", "SELECT -1", "SELECT x", "SELECT 2147483648", "SELECT 0", "MOVE k 0", "MOVE k 16", "MOVE k x", "MOVE missing 1", "MOVE k 1", "EXISTS k", "SELECT 1", "GET k", "SET k2 w EX 100", "MOVE k2 0", "SELECT 0", "GET k2", "TTL k2", "SET k v0", "SELECT 1", "MOVE k 0", "SELECT 0", "GET k"},
	{"SET a 0", "SELECT 2", "SET b 2", "SWAPDB 0 2", "SELECT 0", "GET a", "GET b", "SWAPDB 0 16", "SWAPDB x 0", "SWAPDB 0 x", "SWAPDB 0 0", "SWAPDB 3 4", "COPY b c DB 5", "SELECT 5", "GET c", "FLUSHDB", "DBSIZE", "SELECT 2", "GET a", "SELECT 0", "DBSIZE"},
	{"SET a 1", "SELECT 3", "SET b 3", "FLUSHALL", "DBSIZE", "SELECT 0", "DBSIZE", "SET c 1", "MIGRATE", "SWAPDB 0"},
}

func TestKeyCommandsMatchRedis(t *testing.T) { runCommandCases(t, keyCases) }

// scriptStep is one EVAL of a differential script sequence.
type scriptStep struct {
	src  string
	keys []string
	args []any
}

// runScriptCases runs each sequence of scripts on a fresh redis-server
// database and a fresh simulator; replies, errors and database 0 must agree.
func runScriptCases(t *testing.T, cases [][]scriptStep) {
	t.Helper()
	client := diffStandalone(t).Client()
	ctx := context.Background()
	for i, seq := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sim := diffNew(t, WithClock(NewVirtualClock(time.Now())))
			for _, st := range seq {
				want := outcomeOf(client.Eval(ctx, st.src, st.keys, st.args...))
				got := outcomeOf(sim.RunSource(ctx, st.src, st.keys, st.args...))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s: simulator differs from redis-server (-redis +simulator):\n%s", st.src, diff)
				}
			}
			if diff := cmp.Diff(realKeyspace(t, client), sim.Dump(), cmp.Comparer(ttlClose)); diff != "" {
				t.Fatalf("keyspace differs (-redis +simulator):\n%s", diff)
			}
		})
	}
}

// scriptCases check what only a script shows: RESP2 shapes, nil as false,
// a SELECT that lasts until the script ends, blocking commands that do
// not block.
var scriptCases = [][]scriptStep{
	{
		{"redis.call('SET', KEYS[1], 'db0'); redis.call('SELECT', 1); redis.call('SET', KEYS[1], 'db1'); return redis.call('GET', KEYS[1])", []string{"{k}a"}, nil},
		{"return redis.call('GET', KEYS[1])", []string{"{k}a"}, nil},
		{"redis.call('SELECT', 1); local v = redis.call('GET', KEYS[1]); redis.call('MOVE', KEYS[1], 0); return v", []string{"{k}a"}, nil},
		{"redis.call('SELECT', 1); return redis.call('EXISTS', KEYS[1])", []string{"{k}a"}, nil},
		{"redis.call('SELECT', 2); redis.call('SET', KEYS[1], 'two'); redis.call('SWAPDB', 0, 2); redis.call('SELECT', 0); return redis.call('GET', KEYS[1])", []string{"{k}b"}, nil},
		{"return redis.pcall('SELECT', 99)", nil, nil},
		{"return redis.pcall('PING', 'a', 'b')", nil, nil},
	},
	{
		{"redis.call('HSET', KEYS[1], 'z', 1, 'a', 2); return redis.call('HRANDFIELD', KEYS[1], 5, 'WITHVALUES')", []string{"h"}, nil},
		{"redis.setresp(3); return redis.call('HRANDFIELD', KEYS[1], 5, 'WITHVALUES')", []string{"h"}, nil},
		{"redis.call('SET', KEYS[1], 'ohmytext'); redis.call('SET', KEYS[2], 'mynewtext'); return redis.call('LCS', KEYS[1], KEYS[2], 'IDX', 'WITHMATCHLEN')", []string{"{s}a", "{s}b"}, nil},
		{"redis.setresp(3); return redis.call('LCS', KEYS[1], KEYS[2], 'IDX')", []string{"{s}a", "{s}b"}, nil},
		{"return redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', 'INCRBY', 'u2', 0, 5, 'GET', 'u2', 0)", []string{"bf"}, nil},
		{"return redis.call('BLMPOP', 0, 2, KEYS[1], KEYS[2], 'LEFT')", []string{"{l}a", "{l}b"}, nil},
		{"redis.call('RPUSH', KEYS[2], 'x', 'y'); return redis.call('BLMPOP', 1, 2, KEYS[1], KEYS[2], 'RIGHT', 'COUNT', 5)", []string{"{l}a", "{l}b"}, nil},
		{"return redis.call('GETEX', KEYS[1], 'PX', 100000)", []string{"{s}a"}, nil},
		{"redis.call('SETEX', KEYS[1], 100, 'v'); return redis.call('TTL', KEYS[1])", []string{"ex"}, nil},
	},
}

func TestKeyScriptsMatchRedis(t *testing.T) { runScriptCases(t, scriptCases) }
