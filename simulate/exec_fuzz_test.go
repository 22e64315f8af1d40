package simulate

import (
	"strings"
	"testing"
	"time"
)

// FuzzExec feeds arbitrary argument lists to the command engine: whatever
// arrives, it answers with a reply or an error, never a panic.
func FuzzExec(f *testing.F) {
	for _, seed := range []string{
		"SET k v PX 100", "SET k v EX", "ZADD z NX GT 1 a", "ZRANGE z 0 -1 WITHSCORES REV", "HINCRBY h f 9223372036854775807",
		"EXPIRE k 10 NX XX", "ZRANGEBYSCORE z (1 +inf LIMIT 0 -1", "MSET a", "INCRBY k -9223372036854775808", "PEXPIREAT k 99999999999999999",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		// Seed each type so the command meets real values too.
		execFuzzed(t, line, 2, []string{"SET", "k", "10"}, []string{"HSET", "h", "f", "1"}, []string{"ZADD", "z", "1", "a"})
	})
}

// execFuzzed runs one space-separated command line on a keyspace holding
// what the seed commands made, at a fixed instant, with replies built for
// protocol resp. Whatever the line, the reply must be a reply or an error
// with text, and convert to Go values as it is and downgraded to RESP2.
func execFuzzed(t *testing.T, line string, resp int, seeds ...[]string) (*Keyspace, time.Time) {
	ks := NewKeyspace()
	now := time.Unix(1_700_000_000, 0)
	cc := &CallContext{Now: now, Clock: NewVirtualClock(now), RESP: resp}
	for _, argv := range seeds {
		ks.Exec(cc, argv)
	}
	r := ks.Exec(cc, strings.Split(line, " "))
	if r.Kind == KindError && r.Str == "" {
		t.Fatalf("%q: an error reply without text", line)
	}
	_, _ = ToGo(r)
	_, _ = ToGo(Downgrade(r))
	return ks, now
}
