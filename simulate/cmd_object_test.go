package simulate

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// idleTime is OBJECT IDLETIME key on sim; it fails t on anything but an integer.
func idleTime(t *testing.T, sim *Server, key string) int64 {
	t.Helper()
	n, err := sim.Do(context.Background(), "OBJECT", "IDLETIME", key).Int64()
	if err != nil {
		t.Fatalf("OBJECT IDLETIME %s: %v", key, err)
	}
	return n
}

// TestObjectIdleTimeCountsWholeSeconds checks IDLETIME against a virtual
// clock: whole seconds of Redis's LRU clock since the key's last access,
// so 1.999 s after an access at a whole second reads 1 and 2 s reads 2.
func TestObjectIdleTimeCountsWholeSeconds(t *testing.T) {
	ctx := context.Background()
	clock := NewVirtualClock(time.Unix(1_700_000_000, 0))
	sim := New(WithClock(clock))
	if err := sim.Do(ctx, "SET", "k", "v").Err(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		advance time.Duration
		want    int64
	}{{0, 0}, {999 * time.Millisecond, 0}, {time.Millisecond, 1}, {999 * time.Millisecond, 1}, {time.Millisecond, 2}, {time.Hour, 3602}} {
		clock.Advance(step.advance)
		if got := idleTime(t, sim, "k"); got != step.want {
			t.Fatalf("after %v more: IDLETIME %d, want %d", step.advance, got, step.want)
		}
	}
	// An access at 0.5 s into a second counts from that second's start.
	clock.Advance(500 * time.Millisecond)
	sim.Do(ctx, "GET", "k")
	clock.Advance(600 * time.Millisecond)
	if got := idleTime(t, sim, "k"); got != 1 {
		t.Fatalf("1.1 s after a GET at x.5 s: IDLETIME %d, want 1", got)
	}
}

// TestObjectIdleTimeClockWrap checks Redis's arithmetic when its 24-bit
// LRU clock wraps between the access and OBJECT IDLETIME: it counts one
// second less than elapsed (estimateObjectIdleTime adds LRU_CLOCK_MAX, not
// LRU_CLOCK_MAX+1).
func TestObjectIdleTimeClockWrap(t *testing.T) {
	ctx := context.Background()
	clock := NewVirtualClock(time.Unix(100<<24-2, 0)) // the LRU clock reads 2^24-2
	sim := New(WithClock(clock))
	sim.Do(ctx, "SET", "k", "v")
	clock.Advance(5 * time.Second)
	if got := idleTime(t, sim, "k"); got != 4 {
		t.Fatalf("5 s across the wrap: IDLETIME %d, want Redis's 4", got)
	}
}

// TestObjectIdleTimeAccesses checks which commands count as an access, as
// redis-server 7.0.15 does (checked there by letting keys idle 3 s and
// running one command on each): every command that looks a key up for its
// value, and those that create one, reset IDLETIME; TYPE, EXISTS, the TTL
// family, OBJECT itself, KEYS, SCAN and DBSIZE do not, from a script
// neither.
func TestObjectIdleTimeAccesses(t *testing.T) {
	touch := []string{
		"GET K", "STRLEN K", "GETRANGE K 0 1", "MGET K", "EXPIRE K 100", "PEXPIRE K 100000 XX", "PERSIST K",
		"APPEND K ''", "SETRANGE K 0 ''", "SET K x NX", "SETNX K x", "MSETNX K x", "SET K w XX", "GETSET K w",
		"HGET K f", "LPUSH K x", "SINTER K", "PFCOUNT K", "RENAME K K",
		`EVAL 'return redis.call("get",KEYS[1])' 1 K`,
	}
	keep := []string{
		"TYPE K", "EXISTS K", "EXISTS K K", "TTL K", "PTTL K", "EXPIRETIME K", "PEXPIRETIME K",
		"OBJECT ENCODING K", "OBJECT REFCOUNT K", "OBJECT FREQ K", "OBJECT IDLETIME K", "KEYS *", "SCAN 0", "DBSIZE",
		"DEL none", "EXISTS none", `EVAL 'return redis.call("type",KEYS[1])' 1 K`, `EVAL 'return redis.call("ttl",KEYS[1])' 1 K`,
	}
	ctx := context.Background()
	clock := NewVirtualClock(time.Unix(1_700_000_000, 0))
	sim := New(WithClock(clock))
	type probe struct {
		line, key string
		want      int64
	}
	var probes []probe
	for i, line := range append(touch, keep...) {
		p := probe{line: line, key: fmt.Sprint("k", i), want: 3}
		if i < len(touch) {
			p.want = 0
		}
		if err := sim.Do(ctx, "SET", p.key, "v").Err(); err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	clock.Advance(3 * time.Second)
	for _, p := range probes {
		args := splitCommand(p.line)
		for j, a := range args {
			if a == "K" {
				args[j] = p.key
			}
		}
		sim.Do(ctx, args...)
	}
	for _, p := range probes {
		if got := idleTime(t, sim, p.key); got != p.want {
			t.Errorf("%s: IDLETIME %d after it, want %d", p.line, got, p.want)
		}
	}
}

// TestObjectIdleTimeNewValues checks that a command creating a value
// starts its idle time, whatever the kind, and that a snapshot keeps it.
func TestObjectIdleTimeNewValues(t *testing.T) {
	ctx := context.Background()
	clock := NewVirtualClock(time.Unix(1_700_000_000, 0))
	sim := New(WithClock(clock))
	sim.Do(ctx, "SADD", "src", "a")
	sim.Do(ctx, "ZADD", "zsrc", 1, "a")
	clock.Advance(10 * time.Second)
	creates := [][]any{
		{"SET", "s", "v"}, {"MSET", "m", "v"}, {"APPEND", "a", "v"}, {"INCR", "i"}, {"INCRBYFLOAT", "f", "1.5"},
		{"SETRANGE", "r", 2, "x"}, {"HSET", "h", "f", "v"}, {"RPUSH", "l", "x"}, {"SADD", "set", "x"},
		{"ZADD", "z", 1, "x"}, {"XADD", "x", "1-1", "f", "v"}, {"PFADD", "p", "a"}, {"SUNIONSTORE", "su", "src"},
		{"ZUNIONSTORE", "zu", 1, "zsrc"}, {"ZRANGESTORE", "zr", "zsrc", 0, -1},
		{"GEOADD", "g", 13.361389, 38.115556, "Palermo"}, {"XGROUP", "CREATE", "xs", "grp", "$", "MKSTREAM"},
	}
	for _, c := range creates {
		if err := sim.Do(ctx, c...).Err(); err != nil {
			t.Fatal(c, err)
		}
	}
	clock.Advance(7 * time.Second)
	snap := sim.Snapshot()
	sim.Do(ctx, "FLUSHALL")
	sim.Restore(snap)
	for _, c := range creates {
		key := c[1].(string)
		if c[0] == "XGROUP" {
			key = c[2].(string)
		}
		if got := idleTime(t, sim, key); got != 7 {
			t.Errorf("%v: IDLETIME %d 7 s later, want 7", c, got)
		}
	}
	// SUNIONSTORE and ZUNIONSTORE read their sources 7 s ago, not 17.
	for _, key := range []string{"src", "zsrc"} {
		if got := idleTime(t, sim, key); got != 7 {
			t.Errorf("%s: IDLETIME %d, want 7", key, got)
		}
	}
}

// TestObjectIdleTimeInvariant runs the generated corpus's commands and
// scripts (every group's) on a virtual clock: keys written or read in a
// first round, 10 s of idling, a second round; then every key's IDLETIME
// is 10 (not accessed since the first round) or 0 (accessed in the
// second). Anything else is a command that stores a value without
// stamping its access time (see value.lru) or touches keys Redis does not.
func TestObjectIdleTimeInvariant(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(40))
	var trail []string
	run := func(sim *Server) (restoresIdle bool) {
		for step, n := 0, 2+r.Intn(6); step < n; step++ {
			if r.Intn(4) == 0 {
				src, keys, args := corpusScript(r)
				trail = append(trail, fmt.Sprintf("EVAL %q %v %v", src, keys, args))
				sim.RunSource(ctx, src, keys, args...)
				continue
			}
			argv := corpusCommand(r)
			args := make([]any, len(argv))
			for i, a := range argv {
				args[i] = a
				// RESTORE ... IDLETIME n sets another idle time on purpose.
				restoresIdle = restoresIdle || (i > 0 && strings.EqualFold(argv[0], "restore") && strings.EqualFold(a, "idletime"))
			}
			trail = append(trail, strings.Join(argv, " "))
			sim.Do(ctx, args...)
		}
		return restoresIdle
	}
	checked := 0
	for c := 0; c < 1000; c++ {
		clock := NewVirtualClock(time.Unix(1_700_000_000, 0))
		sim := New(WithClock(clock))
		trail = trail[:0]
		skip := run(sim)
		trail = append(trail, "(10 s pass)")
		clock.Advance(10 * time.Second)
		skip = run(sim) || skip
		if skip {
			continue
		}
		for _, d := range sim.Dump() {
			idle := idleTime(t, sim, d.Key)
			if idle != 0 && idle != 10 {
				t.Fatalf("case %d: after %q, %s (%s) idle %d s, want 0 or 10", c, trail, d.Key, d.Type, idle)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d keys checked", checked)
	}
}

// RESTORE's IDLETIME sets the restored key's access time that many seconds
// back, as Redis does under its default maxmemory policy.
func TestRestoreIdleTime(t *testing.T) {
	ctx := context.Background()
	sim := New(WithClock(NewVirtualClock(time.Unix(1_700_000_000, 0))))
	if err := sim.Do(ctx, "SET", "a", "5").Err(); err != nil {
		t.Fatal(err)
	}
	payload, err := sim.Do(ctx, "DUMP", "a").Text()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Do(ctx, "RESTORE", "b", 0, payload, "IDLETIME", 100).Err(); err != nil {
		t.Fatal(err)
	}
	if idle, err := sim.Do(ctx, "OBJECT", "IDLETIME", "b").Int64(); err != nil || idle != 100 {
		t.Fatalf("OBJECT IDLETIME after RESTORE ... IDLETIME 100 = %d, %v; want 100", idle, err)
	}
}
