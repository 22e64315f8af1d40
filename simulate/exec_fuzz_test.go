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
		argv := strings.Split(line, " ")
		ks := NewKeyspace()
		now := time.Unix(1_700_000_000, 0)
		cc := &CallContext{Now: now, Clock: NewVirtualClock(now), RESP: 2}
		// Seed each type so the command meets real values too.
		ks.Exec(cc, []string{"SET", "k", "10"})
		ks.Exec(cc, []string{"HSET", "h", "f", "1"})
		ks.Exec(cc, []string{"ZADD", "z", "1", "a"})
		r := ks.Exec(cc, argv)
		if r.Kind == KindError && r.Str == "" {
			t.Fatalf("%q: an error reply without text", line)
		}
		_ = Downgrade(r)
		_, _ = ToGo(r)
	})
}
