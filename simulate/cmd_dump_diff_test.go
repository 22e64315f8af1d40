package simulate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// dumpSetups build one key of each type and encoding; the simulator
// writes each DUMP payload byte for byte as Redis does, except those of
// hash-table sets and hashes (dumpUnordered), whose element order is the
// server's own.
var dumpSetups = [][]string{
	{"SET k 1"}, {"SET k -100"}, {"SET k 30000"}, {"SET k -2147483648"}, {"SET k 2147483648"}, {"SET k 12345678901"}, {"SET k 010"},
	{"SET k hello"}, {"SET k ''"}, {"SET k " + strings.Repeat("a", 21)}, {"SET k " + strings.Repeat("abc", 30)},
	{"SET k " + strings.Repeat("abcdefghij", 7) + "klmnopqrstuvwxyz0123456789"}, {"SET k 123456789012345678901234567890"},
	{"SET k " + strings.Repeat("0123456789abcdef", 700)}, {"SET k " + strings.Repeat("x", 5000) + strings.Repeat("yz", 3000)},
	{"SETBIT k 3000 1"}, {"SET k hello", "APPEND k world"},
	{"SADD k 1 2 3"}, {"SADD k -40000 5"}, {"SADD k 1 9999999999"}, {"SADD k a b c"},
	{"HSET k f v n 12 big 123456789012 neg -5000 s " + strings.Repeat("q", 70)},
	{"HSET k f v n 12 big 123456789012 neg -5000"},
	{"HSET k a 1 b 2", "HDEL k a", "HSET k c 3"},
	{"ZADD k 1 a 2.5 b -3 c inf d -inf e 1e20 f 0.1 g"},
	{"ZADD k 1 a 2 " + strings.Repeat("m", 80)},
	{"RPUSH k a b 1 -1 300 " + strings.Repeat("w", 100)},
	{"LPUSH k x y z"},
	{"RPUSH k" + strings.Repeat(" element-number-with-some-length", 400)},
	{"RPUSH k" + strings.Repeat(" 12345", 3000)},
}

// TestDumpMatchesRedis compares DUMP payloads byte for byte and checks
// that the simulator restores what redis-server dumps (and the reverse)
// into the same value, TTL and encoding.
var dumpUnordered = map[int]bool{20: true, 21: true}

func TestDumpMatchesRedis(t *testing.T) {
	client := diffStandalone(t).Client()
	ctx := context.Background()
	for i, setup := range dumpSetups {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sim := diffNew(t, WithClock(NewVirtualClock(time.Now())))
			for _, line := range setup {
				compareDo(t, t.Fatalf, client, sim, splitCommand(line)...)
			}
			unordered := dumpUnordered[i]
			if !unordered {
				compareDo(t, t.Fatalf, client, sim, "DUMP", "k")
			}
			real, err := client.Dump(ctx, "k").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range [][]any{
				{"RESTORE", "r", 0, real}, {"OBJECT", "ENCODING", "r"}, {"RESTORE", "r", 0, real}, {"RESTORE", "r", 100000, real, "REPLACE"},
				{"RESTORE", "r2", 5000, real, "ABSTTL"}, {"EXISTS", "r2"}, {"RESTORE", "r3", 99999999999999, real, "ABSTTL", "IDLETIME", 10},
				{"RESTORE", "r4", 0, real, "FREQ", 5}, {"OBJECT", "ENCODING", "r4"},
			} {
				compareDo(t, t.Fatalf, client, sim, c...)
			}
			if !unordered {
				compareDo(t, t.Fatalf, client, sim, "DUMP", "r")
			}
			// What the simulator dumps, Redis restores to the same value.
			own := sim.Do(ctx, "DUMP", "k").Val()
			compareDo(t, t.Fatalf, client, sim, "RESTORE", "own", 0, own)
			compareDo(t, t.Fatalf, client, sim, "OBJECT", "ENCODING", "own")
			if diff := cmp.Diff(realKeyspace(t, client), sim.Dump(), cmp.Comparer(ttlClose)); diff != "" {
				t.Fatalf("keyspace differs (-redis +simulator):\n%s", diff)
			}
		})
	}
}

var dumpCases = [][]string{
	{"SET k v", "DUMP missing", "RESTORE k 0 x", "RESTORE n 0 x", "RESTORE n -1 x", "RESTORE n x x", "RESTORE n 0 x FOO", "RESTORE n 0 x IDLETIME -1", "RESTORE n 0 x IDLETIME x", "RESTORE n 0 x FREQ 256", "RESTORE n 0 x FREQ 1 IDLETIME 1", "RESTORE n 0 x IDLETIME 1 FREQ 1", "RESTORE n 0 x IDLETIME", "RESTORE n 0 '0123456789'", "RESTORE k 0 x REPLACE", "RESTORE-ASKING k 0 x"},
}

func TestDumpErrorsMatchRedis(t *testing.T) { runCommandCases(t, dumpCases) }
