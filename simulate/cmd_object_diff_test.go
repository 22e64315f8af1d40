package simulate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// objectCases compare every OBJECT subcommand with redis-server: HELP,
// arity and unknown subcommands, missing keys, FREQ under the default
// maxmemory-policy, IDLETIME, and REFCOUNT of the integers Redis shares
// (0..9999 stored as SET, APPEND on a new key, INCR and GETSET store them)
// against those it does not (larger or negative integers, APPEND and
// SETRANGE results, INCRBYFLOAT, every aggregate).
var objectCases = [][]string{
	// A copy of a shared integer is an object of its own; RESTORE's
	// IDLETIME sets the access time back; SETEX, BITOP, SORT STORE and
	// TOUCH count as accesses.
	{"SET a 5", "COPY a c", "OBJECT REFCOUNT a", "OBJECT REFCOUNT c", "OBJECT ENCODING c", "SETEX e 100 7", "OBJECT REFCOUNT e", "OBJECT IDLETIME e",
		"SETBIT b 3 1", "BITOP OR o b b", "OBJECT IDLETIME o", "RPUSH l 3 1 2", "SORT l STORE sl", "OBJECT IDLETIME sl", "TOUCH a c nope", "OBJECT IDLETIME a"},
	{"OBJECT HELP", "OBJECT help", "OBJECT HELP x", "OBJECT", "OBJECT foo", "OBJECT foo k", "OBJECT FREQ", "OBJECT IDLETIME", "OBJECT REFCOUNT", "OBJECT ENCODING", "OBJECT REFCOUNT a b", "OBJECT IDLETIME a b"},
	{"OBJECT FREQ k", "OBJECT IDLETIME k", "OBJECT REFCOUNT k", "OBJECT ENCODING k", "SET k v", "OBJECT FREQ k", "OBJECT freq k", "OBJECT IDLETIME k", "OBJECT idletime k", "OBJECT REFCOUNT k", "OBJECT Refcount k"},
	{"SET a 100", "SET b 9999", "SET c 10000", "SET d -1", "SET e 0", "SET f 00", "SET g ' 1'", "SET h abc", "SET i 100000", "SET j 12345678901234567890123", "SET k -0", "SET l +5",
		"OBJECT REFCOUNT a", "OBJECT REFCOUNT b", "OBJECT REFCOUNT c", "OBJECT REFCOUNT d", "OBJECT REFCOUNT e", "OBJECT REFCOUNT f", "OBJECT REFCOUNT g", "OBJECT REFCOUNT h", "OBJECT REFCOUNT i", "OBJECT REFCOUNT j", "OBJECT REFCOUNT k", "OBJECT REFCOUNT l",
		"OBJECT ENCODING a", "OBJECT ENCODING c", "OBJECT ENCODING f"},
	{"APPEND k 100", "OBJECT REFCOUNT k", "OBJECT ENCODING k", "APPEND k 5", "OBJECT REFCOUNT k", "OBJECT ENCODING k", "SET k 7", "APPEND k ''", "OBJECT REFCOUNT k", "SETRANGE r 0 5", "OBJECT REFCOUNT r", "SET s 12", "SETRANGE s 0 ''", "OBJECT REFCOUNT s", "SETRANGE s 0 3", "OBJECT REFCOUNT s", "OBJECT ENCODING s"},
	{"INCR n", "OBJECT REFCOUNT n", "INCRBY n 9998", "OBJECT REFCOUNT n", "INCR n", "OBJECT REFCOUNT n", "DECR n", "OBJECT REFCOUNT n", "DECRBY n 10000", "OBJECT REFCOUNT n", "INCRBY n 9999999", "OBJECT REFCOUNT n",
		"SET f 3.0", "INCRBYFLOAT f 1", "OBJECT REFCOUNT f", "OBJECT ENCODING f", "GETSET g 7", "OBJECT REFCOUNT g", "GETSET g 8", "OBJECT REFCOUNT g"},
	{"MSET a 1 b 20000", "MSETNX c 3 d x", "SETNX e 4", "SET f 5 EX 100", "SET g 6 PX 100000", "SET h 7 EX 100", "SET h 8 KEEPTTL", "SET h 9 GET", "SET h 10 XX",
		"OBJECT REFCOUNT a", "OBJECT REFCOUNT b", "OBJECT REFCOUNT c", "OBJECT REFCOUNT d", "OBJECT REFCOUNT e", "OBJECT REFCOUNT f", "OBJECT REFCOUNT g", "OBJECT REFCOUNT h", "RENAME h i", "OBJECT REFCOUNT i"},
	{"HSET h a 100", "RPUSH l 1", "SADD s 1", "SADD t a", "ZADD z 1 a", "XADD x 1-1 a 1", "PFADD p a", "SET bits ''", "SETRANGE bits 0 1",
		"OBJECT REFCOUNT h", "OBJECT REFCOUNT l", "OBJECT REFCOUNT s", "OBJECT REFCOUNT t", "OBJECT REFCOUNT z", "OBJECT REFCOUNT x", "OBJECT REFCOUNT p", "OBJECT REFCOUNT bits",
		"OBJECT IDLETIME h", "OBJECT IDLETIME l", "OBJECT IDLETIME s", "OBJECT IDLETIME z", "OBJECT IDLETIME x", "OBJECT IDLETIME p", "OBJECT FREQ h", "OBJECT FREQ x"},
	{"SUNIONSTORE u s", "ZUNIONSTORE v 1 z", "SADD s 2", "SUNIONSTORE u s", "OBJECT REFCOUNT u", "OBJECT REFCOUNT v", "OBJECT IDLETIME u", "OBJECT IDLETIME v"},
	// from a script: the same replies, Redis's script errors for an
	// unknown subcommand and a wrong arity
	{"SET k 5", "SET m hello",
		`EVAL 'return redis.call("object","refcount",KEYS[1])' 1 k`, `EVAL 'return redis.call("object","refcount",KEYS[1])' 1 m`,
		`EVAL 'return redis.call("object","idletime",KEYS[1])' 1 m`, `EVAL 'return redis.call("object","freq",KEYS[1])' 1 m`,
		`EVAL 'return redis.pcall("object","freq",KEYS[1])' 1 m`, `EVAL 'return redis.call("object","freq",KEYS[1])' 1 missing`,
		`EVAL 'return redis.call("object","help")' 0`, `EVAL 'return redis.call("object","encoding",KEYS[1])' 1 k`,
		`EVAL 'return redis.pcall("object","foo")' 0`, `EVAL 'return redis.pcall("object","help","x")' 0`, `EVAL 'return redis.pcall("object")' 0`,
		`EVAL 'return redis.pcall("object","refcount")' 0`, `EVAL 'return redis.call("set",KEYS[1],"100") and redis.call("object","refcount",KEYS[1])' 1 n`,
		`EVAL 'return redis.call("incr",KEYS[1]) and redis.call("object","refcount",KEYS[1])' 1 n`},
}

// TestObjectMatchesRedis runs objectCases on redis-server and on the
// simulator. The simulator's clock follows the wall clock command by
// command, so IDLETIME must agree to within the second by which Redis's
// LRU clock (cached, of 1 s resolution) may round differently.
func TestObjectMatchesRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	for i, seq := range objectCases {
		t.Run(fmt.Sprint(i, " ", seq[0]), func(t *testing.T) {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			clock := NewVirtualClock(time.Now())
			sim := diffNew(t, WithClock(clock))
			for _, line := range seq {
				args := splitCommand(line)
				want := outcomeOf(client.Do(ctx, args...))
				clock.Set(diffNow(t))
				got := outcomeOf(sim.Do(ctx, args...))
				if isIdleTime(args) {
					if w, ok := want.Val.(int64); ok {
						if g, ok := got.Val.(int64); ok && g-w <= 1 && w-g <= 1 {
							got.Val = w
						}
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s: simulator differs from redis-server (-redis +simulator):\n%s", line, diff)
				}
			}
			if diff := cmp.Diff(realKeyspace(t, client), sim.Dump(), cmp.Comparer(ttlClose)); diff != "" {
				t.Fatalf("keyspace after %v differs (-redis +simulator):\n%s", seq, diff)
			}
		})
	}
}

// isIdleTime reports whether args is OBJECT IDLETIME, directly or as the
// only command of an EVAL.
func isIdleTime(args []any) bool {
	line := strings.ToLower(fmt.Sprint(args...))
	return strings.Contains(line, "idletime") && !strings.Contains(line, "help")
}
