package simulate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/registry"
)

// Every command the simulator implements has exactly one work rule, and
// every rule names a command it implements.
func TestWorkRulesCoverEveryCommand(t *testing.T) {
	var missing, stale []string
	for name := range commands {
		if _, ok := workRules[name]; !ok {
			missing = append(missing, name)
		}
	}
	for name := range workRules {
		if _, ok := commands[name]; !ok {
			stale = append(stale, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("%d implemented commands have no rule in work_rules.go: %s", len(missing), strings.Join(missing, " "))
	}
	if len(stale) > 0 {
		t.Errorf("%d rules in work_rules.go name no implemented command: %s", len(stale), strings.Join(stale, " "))
	}
	if len(workRuleDuplicates) > 0 {
		t.Errorf("rules given twice in work_rules.go: %s", strings.Join(workRuleDuplicates, " "))
	}
	for name, r := range workRules {
		if r.complexity == "" || r.cost == nil {
			t.Errorf("rule %q needs a complexity and a cost", name)
		}
	}
}

// workDo runs one command with Do and returns the elements it was charged.
func workDo(t *testing.T, srv *Server, args ...any) int64 {
	t.Helper()
	srv.ResetWork()
	srv.Do(context.Background(), args...) // error replies are charged too
	w := srv.Work()
	if w.Total.Commands != 1 || w.Direct.Commands != 1 || len(w.Scripts) != 0 {
		t.Fatalf("%v: work %+v, want one direct command", args, w)
	}
	return w.Direct.Elements
}

// The charges follow Redis's documented complexity: per field named, per
// element returned or removed, the whole aggregate for a scan of it, the
// elements of a value a command frees.
func TestWorkCharges(t *testing.T) {
	clock := NewVirtualClock(time.Unix(1_800_000_000, 0))
	srv := New(WithClock(clock))
	ctx := context.Background()
	const n = 1000
	fill := func(key string, kind string) {
		args := []any{}
		for i := 0; i < n; i++ {
			switch kind {
			case "hash":
				args = append(args, fmt.Sprintf("f%d", i), "v")
			case "zset":
				args = append(args, i, fmt.Sprintf("m%d", i))
			default:
				args = append(args, fmt.Sprintf("m%d", i))
			}
		}
		cmd := map[string]string{"hash": "HSET", "zset": "ZADD", "set": "SADD", "list": "RPUSH"}[kind]
		if err := srv.Do(ctx, append([]any{cmd, key}, args...)...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	fill("h", "hash")
	fill("z", "zset")
	fill("s", "set")
	fill("l", "list")
	lgn := lg(n) // 10
	for _, c := range []struct {
		args []any
		want int64
	}{
		{[]any{"HGET", "h", "f1"}, 1},
		{[]any{"HLEN", "h"}, 1},
		{[]any{"HMGET", "h", "f1", "f2", "nope"}, 3},
		{[]any{"HSET", "h", "a", "1", "b", "2"}, 2},
		{[]any{"HDEL", "h", "a", "b"}, 2},
		{[]any{"HGETALL", "h"}, n},
		{[]any{"HKEYS", "h"}, n},
		{[]any{"HVALS", "h"}, n},
		{[]any{"HSCAN", "h", "0", "COUNT", "10"}, 10}, // a hash table: about COUNT visited
		{[]any{"ZSCORE", "z", "m1"}, 1},
		{[]any{"ZADD", "z", "NX", "5000", "new"}, lg(n + 1)},
		{[]any{"ZREM", "z", "new"}, lg(n + 1)},
		{[]any{"ZRANGE", "z", "0", "4"}, lgn + 5},
		{[]any{"ZRANGE", "z", "0", "4", "WITHSCORES"}, lgn + 5},
		{[]any{"ZRANGEBYSCORE", "z", "-inf", "9"}, lgn + 10},
		{[]any{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "0", "1"}, lgn + 1},
		{[]any{"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "500", "1"}, lgn + 1 + 500},
		{[]any{"ZREMRANGEBYSCORE", "z", "-inf", "19"}, lgn + 20},
		{[]any{"ZCARD", "z"}, 1},
		{[]any{"SMEMBERS", "s"}, n},
		{[]any{"SISMEMBER", "s", "m1"}, 1},
		{[]any{"LRANGE", "l", "0", "9"}, 1 + 10},
		{[]any{"LINDEX", "l", "-1"}, 1},
		{[]any{"LINDEX", "l", "500"}, 500}, // from the nearer end, the tail
		{[]any{"KEYS", "*"}, 4},
		{[]any{"EXISTS", "h", "z", "nope"}, 3},
		{[]any{"GET", "nope"}, 1},
		{[]any{"DEL", "s"}, 1 + n},      // the set's members are freed
		{[]any{"UNLINK", "l"}, 1},       // freed on another thread
		{[]any{"SET", "h", "x"}, 1 + n}, // the hash it replaces
		{[]any{"PEXPIRE", "z", "1000"}, 1},
	} {
		if got := workDo(t, srv, c.args...); got != c.want {
			t.Errorf("%v: charged %d, want %d", c.args, got, c.want)
		}
	}
	// A key that expired is freed by the command that finds it so.
	clock.Advance(2 * time.Second)
	if got, want := workDo(t, srv, "EXISTS", "z"), int64(1+n-20); got != want {
		t.Errorf("EXISTS of an expired zset: charged %d, want %d (1 + the members freed)", got, want)
	}
	// An error reply costs 1.
	if got := workDo(t, srv, "HGETALL", "h"); got != 1 {
		t.Errorf("WRONGTYPE HGETALL: charged %d, want 1", got)
	}
}

const workScript = `-- name: work.probe
-- version: 1
-- description: Read a field, or the whole hash.
-- keys: h
-- args: all
if ARGV[1] == '1' then return #redis.call('HGETALL', KEYS[1]) end
return redis.call('HGET', KEYS[1], 'f1')
`

// Work splits by script: runs, elements, the largest run, by command.
func TestWorkByScript(t *testing.T) {
	probe, err := registry.ParseScript("work.probe.v1.lua", []byte(workScript))
	if err != nil {
		t.Fatal(err)
	}
	srv := New()
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		srv.Do(ctx, "HSET", "{h}", fmt.Sprintf("f%d", i), "v")
	}
	srv.ResetWork()
	for _, all := range []string{"0", "1", "0"} {
		if err := srv.Run(ctx, probe, []string{"{h}"}, all).Err(); err != nil {
			t.Fatal(err)
		}
	}
	srv.RunSource(ctx, "return redis.call('HLEN', KEYS[1])", []string{"{h}"})
	srv.Do(ctx, "HGET", "{h}", "f1")
	w := srv.Work()
	sw := w.Scripts["work.probe@1"]
	if sw.Runs != 3 || sw.Commands != 3 || sw.Elements != 52 || sw.MaxRun != 50 {
		t.Errorf("work.probe@1: %+v, want 3 runs, 3 commands, 52 elements, largest run 50", sw)
	}
	if sw.ByCommand["hgetall"] != 50 || sw.ByCommand["hget"] != 2 {
		t.Errorf("work.probe@1 by command: %v", sw.ByCommand)
	}
	src := w.Scripts[sha1Hex("return redis.call('HLEN', KEYS[1])")]
	if src.Runs != 1 || src.Elements != 1 {
		t.Errorf("RunSource's script: %+v, want 1 run of 1 element", src)
	}
	if w.Direct.Commands != 1 || w.Direct.Elements != 1 || w.Total.Commands != 5 || w.Total.Elements != 54 {
		t.Errorf("direct %+v total %+v, want 1/1 and 5/54", w.Direct, w.Total)
	}
	w.Scripts["work.probe@1"].ByCommand["hget"] = 99 // the caller's copy
	if srv.Work().Scripts["work.probe@1"].ByCommand["hget"] != 2 {
		t.Error("Work returned the server's own map")
	}
	srv.ResetWork()
	if w := srv.Work(); w.Total.Commands != 0 || len(w.Scripts) != 0 {
		t.Errorf("after ResetWork: %+v", w)
	}
	var nilServer *Server
	nilServer.ResetWork()
	if w := nilServer.Work(); w.Total.Commands != 0 || (&Server{}).Work().Total.Commands != 0 {
		t.Error("a nil or zero Server reports work")
	}
}
