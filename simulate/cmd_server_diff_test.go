package simulate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// serverCases are the server and cluster commands whose replies do not
// describe the server, so they agree exactly; MEMORY USAGE of values in
// small encodings does too.
var serverCases = [][]string{
	{"PING", "PING hello", "PING a b", "ECHO x", "FLUSHALL x", "FLUSHALL async", "FLUSHALL SYNC", "FLUSHALL sync x", "SET k v", "FLUSHALL ASYNC", "EXISTS k"},
	{"ASKING", "ASKING x", "READONLY", "READWRITE", "READWRITE x", "CLUSTER INFO", "CLUSTER KEYSLOT foo", "CLUSTER MYID", "CLUSTER HELP", "CLUSTER COUNTKEYSINSLOT 1", "CLUSTER GETKEYSINSLOT 1 1", "CLUSTER SLOTS", "CLUSTER SHARDS", "CLUSTER NODES", "CLUSTER LINKS", "CLUSTER FOO", "CLUSTER INFO x", "CLUSTER"},
	{"LOLWUT", "LOLWUT VERSION x", "LOLWUT VERSION 7", "LOLWUT VERSION", "LOLWUT foo", "LASTSAVE x"},
	{"SET a 1", "SET b hello", "SET c 'a string of more than forty-four bytes, so that it is raw'", "APPEND d xyz", "HSET h f v g w", "RPUSH l a b c", "SADD s 1 2 3", "SADD s2 1 100000", "SADD t a b", "ZADD z 1 a 2 b", "XADD x 1-1 f v", "XADD x 2-1 f v g w", "XGROUP CREATE x g 0", "XREADGROUP GROUP g c STREAMS x >",
		"MEMORY USAGE a", "MEMORY USAGE b", "MEMORY USAGE c", "MEMORY USAGE d", "MEMORY USAGE h", "MEMORY USAGE l", "MEMORY USAGE s", "MEMORY USAGE s2", "MEMORY USAGE t", "MEMORY USAGE z", "MEMORY USAGE x", "MEMORY USAGE x SAMPLES 0", "MEMORY USAGE nokey",
		"MEMORY USAGE a SAMPLES x", "MEMORY USAGE a SAMPLES -1", "MEMORY USAGE a FOO", "MEMORY USAGE a SAMPLES", "MEMORY HELP", "MEMORY HELP x", "MEMORY FOO", "MEMORY PURGE", "MEMORY DOCTOR", "MEMORY"},
	{"COMMAND COUNT", "COMMAND COUNT x", "COMMAND HELP", "COMMAND FOO", "COMMAND INFO get xread zunionstore georadius nosuch", "COMMAND DOCS nosuch",
		"COMMAND GETKEYS get a", "COMMAND GETKEYS get", "COMMAND GETKEYS ping", "COMMAND GETKEYS nosuch a", "COMMAND GETKEYS xread COUNT 1 STREAMS a b 0 0", "COMMAND GETKEYS xreadgroup GROUP g c STREAMS a 0",
		"COMMAND GETKEYSANDFLAGS zunionstore d 2 a b", "COMMAND GETKEYS sort a BY x LIMIT 0 1 GET y STORE b", "COMMAND GETKEYS sort_ro a", "COMMAND GETKEYS migrate h p '' 0 5 KEYS a b", "COMMAND GETKEYS migrate h p k 0 5",
		"COMMAND GETKEYS eval s 0", "COMMAND GETKEYS eval s 2 a b c", "COMMAND GETKEYS georadius k 0 0 1 km STORE d", "COMMAND GETKEYS lmpop 2 a b LEFT", "COMMAND GETKEYS xgroup create s g 0", "COMMAND GETKEYSANDFLAGS set a b", "COMMAND GETKEYSANDFLAGS set a b get", "COMMAND GETKEYSANDFLAGS bitfield a GET u8 0", "COMMAND GETKEYSANDFLAGS bitfield a SET u8 0 1", "COMMAND GETKEYSANDFLAGS bitfield_ro a GET u8 0",
		"COMMAND LIST x", "COMMAND LIST FILTERBY foo x", "COMMAND LIST FILTERBY module x", "COMMAND LIST FILTERBY pattern x"},
	// Each line's table: 7.2's ZRANK WITHSCORE, WAITAOF, CLUSTER MYSHARDID; 7.4's HEXPIRE family.
	{"COMMAND GETKEYS HEXPIRE k 10 FIELDS 1 f", "COMMAND GETKEYSANDFLAGS HPTTL k FIELDS 1 f", "COMMAND GETKEYS WAITAOF 0 0 0", "COMMAND GETKEYS WAIT 0 0",
		"COMMAND GETKEYS ZRANK k m WITHSCORE", "COMMAND GETKEYS CLUSTER MYSHARDID", "COMMAND GETKEYS BLMOVE a b LEFT LEFT 0", "COMMAND GETKEYSANDFLAGS BZPOPMIN a b 0"},
	{"ACL HELP", "CLIENT HELP", "CONFIG HELP", "LATENCY HELP", "MODULE HELP", "SLOWLOG HELP", "SLOWLOG HELP x", "SLOWLOG FOO", "SLOWLOG RESET", "SLOWLOG GET 0", "SLOWLOG GET -2", "SLOWLOG GET x", "SLOWLOG GET 1 2", "SLOWLOG RESET x"},
	// From scripts.
	{"EVAL \"return redis.call('function', 'help')\" 0", "EVAL \"return redis.call('script', 'help')\" 0", "EVAL \"return redis.call('pubsub', 'help')\" 0", "EVAL \"return redis.call('acl', 'help')\" 0", "EVAL \"return redis.call('slowlog', 'help')\" 0", "EVAL \"return redis.call('slowlog', 'get', '0')\" 0", "EVAL \"return redis.pcall('config', 'help', 'x')\" 0",
		"EVAL \"redis.setresp(3); return redis.call('lolwut')\" 0", "EVAL \"redis.setresp(3); local t = redis.call('lolwut'); return {t.verbatim_string.format, t.verbatim_string.string}\" 0",
		"EVAL \"redis.setresp(3); local t = redis.call('memory', 'doctor'); return t.verbatim_string.format\" 0", "EVAL \"return string.sub(redis.call('info', 'server'), 1, 8)\" 0"},
	{"EVAL \"return redis.pcall('cluster', 'info')\" 0", "EVAL \"return redis.pcall('cluster', 'foo')\" 0", "EVAL \"return redis.pcall('readonly')\" 0", "EVAL \"return redis.pcall('asking')\" 0",
		"EVAL \"return redis.call('command', 'count')\" 0", "EVAL \"return redis.call('command', 'getkeys', 'set', 'a', 'b')\" 0", "EVAL \"return redis.call('lolwut')\" 0", "EVAL \"return redis.pcall('ping', 'a', 'b')\" 0",
		"EVAL \"return redis.pcall('flushall', 'x')\" 0", "EVAL \"return redis.call('memory', 'usage', KEYS[1])\" 1 nokey", "EVAL \"return redis.pcall('memory', 'purge')\" 0"},
}

func TestServerCommandsMatchRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	for i, seq := range serverCases {
		t.Run(fmt.Sprint(i, " ", seq[0]), func(t *testing.T) {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sim := diffNew(t, WithClock(NewVirtualClock(time.Now())))
			for _, line := range seq {
				args := splitCommand(line)
				if args[0] == "EVAL" {
					args = splitScriptCommand(line)
				}
				want := outcomeOf(client.Do(ctx, args...))
				got := outcomeOf(sim.Do(ctx, args...))
				if knownDifference(t, line) {
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s: simulator differs from redis-server (-redis +simulator):\n%s", line, diff)
				}
			}
		})
	}
}

// TestCommandInfoMatchesRedis: COMMAND INFO agrees with the server on
// every command (name, arity, flags, key positions, categories, key
// specs, subcommands) but for what the command table does not carry:
// key specs' notes and command tips.
func TestCommandInfoMatchesRedis(t *testing.T) {
	srv := diffStandalone(t)
	if p := diffNewProfile(t); p != Redis70 {
		t.Skipf("COMMAND describes Redis 7.0.15's command table under every profile; %s's differs (docs/simulator.md)", p)
	}
	client := srv.Client()
	ctx := context.Background()
	sim := diffNew(t)
	want, err := client.Do(ctx, "COMMAND").Slice()
	if err != nil {
		t.Fatal(err)
	}
	got, err := sim.Do(ctx, "COMMAND").Slice()
	if err != nil {
		t.Fatal(err)
	}
	byName := func(xs []any) map[string]any {
		m := map[string]any{}
		for _, x := range xs {
			info := stripDocs(x).([]any)
			m[info[0].(string)] = info
		}
		return m
	}
	if diff := cmp.Diff(byName(want), byName(got)); diff != "" {
		t.Fatalf("COMMAND differs (-redis +simulator):\n%s", diff)
	}
	for _, args := range [][]any{{"COMMAND", "LIST"}, {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "stream"}, {"COMMAND", "LIST", "FILTERBY", "PATTERN", "X*"}, {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"}} {
		w, _ := client.Do(ctx, args...).StringSlice()
		g, _ := sim.Do(ctx, args...).StringSlice()
		sort.Strings(w) // Redis lists in its hash table's order
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%v differs (-redis +simulator):\n%s", args, diff)
		}
	}
}

// stripDocs drops a command's tips and its key specs' notes, recursively
// through the subcommands, and puts sets (flags, categories) in order.
func stripDocs(x any) any {
	info := x.([]any)
	out := append([]any(nil), info...)
	out[2] = sortedStrings(out[2])
	out[6] = sortedStrings(out[6])
	out[7] = nil // tips
	var specs []any
	for _, s := range out[8].([]any) {
		m := map[any]any{}
		for k, v := range s.(map[any]any) {
			if k != "notes" {
				m[k] = v
			}
		}
		m["flags"] = sortedStrings(m["flags"])
		specs = append(specs, m)
	}
	out[8] = specs
	var subs []any
	for _, s := range out[9].([]any) {
		subs = append(subs, stripDocs(s))
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].([]any)[0].(string) < subs[j].([]any)[0].(string) })
	out[9] = subs
	return out
}

func sortedStrings(x any) []string {
	var out []string
	for _, s := range x.([]any) {
		out = append(out, fmt.Sprint(s))
	}
	sort.Strings(out)
	return out
}

// TestInfoIsPlausible: INFO has Redis's sections in Redis's order for
// each way of asking, only fields the server has too, the server's
// version, and keyspace lines that count the same keys.
func TestInfoIsPlausible(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	client.FlushAll(ctx)
	sim := diffNew(t, WithClock(NewVirtualClock(time.Now())))
	for _, c := range [][]any{{"SET", "a", "1"}, {"SET", "b", "2", "EX", "100"}, {"HSET", "h", "f", "v"}, {"SET", "c", "3", "PX", "5000"}} {
		client.Do(ctx, c...)
		sim.Do(ctx, c...)
	}
	parse := func(s string) (titles []string, fields map[string]map[string]string) {
		fields = map[string]map[string]string{}
		sec := ""
		for _, line := range strings.Split(s, "\r\n") {
			switch {
			case strings.HasPrefix(line, "# "):
				sec = line[2:]
				titles = append(titles, sec)
				fields[sec] = map[string]string{}
			case line != "":
				k, v, _ := strings.Cut(line, ":")
				fields[sec][k] = v
			}
		}
		return titles, fields
	}
	for _, args := range [][]any{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"}, {"INFO", "Server", "keyspace"}, {"INFO", "nosuch"}, {"INFO", "memory", "cpu", "memory"}} {
		w, err := client.Do(ctx, args...).Text()
		if err != nil {
			t.Fatal(err)
		}
		g, err := sim.Do(ctx, args...).Text()
		if err != nil {
			t.Fatal(err)
		}
		wt, wf := parse(w)
		gt, gf := parse(g)
		if diff := cmp.Diff(wt, gt); diff != "" {
			t.Fatalf("%v: sections differ (-redis +simulator):\n%s", args, diff)
		}
		for sec, fs := range gf {
			for k := range fs {
				if _, ok := wf[sec][k]; !ok {
					t.Errorf("%v: the simulator's %s field %q is not the server's", args, sec, k)
				}
			}
		}
		if v, ok := wf["Server"]["redis_version"]; ok && gf["Server"]["redis_version"] != v {
			t.Errorf("%v: redis_version %q, server %q", args, gf["Server"]["redis_version"], v)
		}
		if ks, ok := wf["Keyspace"]; ok {
			strip := func(s string) string { return s[:strings.Index(s, ",avg_ttl=")] }
			if strip(ks["db0"]) != strip(gf["Keyspace"]["db0"]) {
				t.Errorf("%v: keyspace %q, server %q", args, gf["Keyspace"]["db0"], ks["db0"])
			}
		}
	}
	w, _ := client.Do(ctx, "MEMORY", "STATS").Result()
	g, _ := sim.Do(ctx, "MEMORY", "STATS").Result()
	keys := func(m any) []string {
		var out []string
		for k := range m.(map[any]any) {
			out = append(out, k.(string))
		}
		sort.Strings(out)
		return out
	}
	if diff := cmp.Diff(keys(w), keys(g)); diff != "" {
		t.Errorf("MEMORY STATS fields differ (-redis +simulator):\n%s", diff)
	}
	ws, _ := client.Do(ctx, "LASTSAVE").Int64()
	gs, _ := sim.Do(ctx, "LASTSAVE").Int64()
	if d := gs - time.Now().Unix(); d > 1 || d < -1 || ws <= 0 {
		t.Errorf("LASTSAVE = %d, want about now (%d); server %d", gs, time.Now().Unix(), ws)
	}
}
