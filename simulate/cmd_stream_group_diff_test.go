package simulate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// streamGroupCases are consumer-group sequences with explicit IDs. Idle
// times and delivery times are compared with a tolerance (see
// alignStreamTimes); filters on idle time use margins of tens of seconds
// so that neither side's clock decides them.
var streamGroupCases = [][]string{
	// XGROUP CREATE and its options, errors in Redis's order.
	{"XGROUP CREATE s g 0", "XGROUP CREATE s g 0 MKSTREAM", "EXISTS s", "XGROUP CREATE s g $ MKSTREAM", "XINFO GROUPS s", "XGROUP CREATE s g 0", "XGROUP CREATE s g2 1-1 ENTRIESREAD 3", "XGROUP CREATE s g3 - MKSTREAM", "XGROUP CREATE s g3 + MKSTREAM",
		"XGROUP CREATE s g4 0 ENTRIESREAD -2", "XGROUP CREATE s g4 0 ENTRIESREAD x", "XGROUP CREATE s g4 0 ENTRIESREAD -1 MKSTREAM", "XGROUP CREATE s g5 0 FOO", "XGROUP CREATE s g5 0 ENTRIESREAD", "XGROUP CREATE s g5 abc", "XINFO GROUPS s", "XINFO STREAM s"},
	{"SET str x", "XGROUP CREATE str g 0", "XGROUP CREATE str g 0 MKSTREAM", "XGROUP SETID str g 0", "XGROUP DESTROY missing g", "XGROUP CREATECONSUMER missing g c", "XGROUP FOO s g", "XGROUP create s", "XGROUP HELP", "XGROUP help x", "XGROUP DESTROY s g x", "XGROUP SETID s g 0 MKSTREAM"},
	{"XADD s 1-1 a 1", "XADD s 2-1 b 2", "XADD s 3-1 c 3", "XGROUP CREATE s g 0", "XGROUP SETID s nog 0", "XGROUP SETID s g 2-1", "XINFO GROUPS s", "XGROUP SETID s g $ ENTRIESREAD 3", "XINFO GROUPS s", "XGROUP SETID s g - ENTRIESREAD 0", "XINFO GROUPS s", "XGROUP SETID s g 1 ENTRIESREAD 1", "XINFO GROUPS s", "XGROUP SETID s g x", "XGROUP SETID s g 0 ENTRIESREAD", "XGROUP SETID s g 0 ENTRIESREAD 1 x 2"},
	{"XADD s 1-1 a 1", "XGROUP CREATE s g 0", "XGROUP CREATECONSUMER s g alice", "XGROUP CREATECONSUMER s g alice", "XGROUP CREATECONSUMER s nog bob", "XGROUP CREATECONSUMER s g bob", "XINFO CONSUMERS s g", "XREADGROUP GROUP g alice STREAMS s >", "XGROUP DELCONSUMER s g alice", "XGROUP DELCONSUMER s g alice", "XPENDING s g", "XINFO CONSUMERS s g", "XGROUP DESTROY s g", "XGROUP DESTROY s g", "XINFO GROUPS s"},
	// XREADGROUP: new entries, history, NOACK, COUNT, several streams.
	{"XADD s 1-1 a 1", "XADD s 2-1 b 2", "XADD s 3-1 c 3", "XGROUP CREATE s g 0", "XREADGROUP GROUP g c1 COUNT 2 STREAMS s >", "XREADGROUP GROUP g c2 STREAMS s >", "XREADGROUP GROUP g c2 STREAMS s >", "XPENDING s g", "XREADGROUP GROUP g c1 STREAMS s 0", "XREADGROUP GROUP g c1 COUNT 1 STREAMS s 1-1", "XREADGROUP GROUP g c3 STREAMS s 0", "XINFO GROUPS s", "XADD s 4-1 d 4", "XREADGROUP GROUP g c3 NOACK STREAMS s >", "XPENDING s g", "XINFO GROUPS s", "XINFO STREAM s"},
	{"XADD a 1-1 f 1", "XADD b 1-1 f 2", "XADD b 2-1 f 3", "XGROUP CREATE a g 0", "XGROUP CREATE b g 1-1", "XREADGROUP GROUP g c STREAMS a b > >", "XREADGROUP GROUP g c STREAMS a b > 0", "XREADGROUP GROUP g c COUNT 0 STREAMS a b 0 0", "XREADGROUP GROUP g c COUNT -5 STREAMS a b 0 0", "XREADGROUP GROUP g c STREAMS a missing > >", "XREADGROUP GROUP nog c STREAMS a >", "XREADGROUP GROUP g c STREAMS a $", "XREADGROUP GROUP g c STREAMS a x", "XREADGROUP GROUP g c STREAMS a", "XREADGROUP STREAMS a >", "XREADGROUP GROUP g c BLOCK 100 STREAMS a >", "XREADGROUP GROUP g c BLOCK -1 STREAMS a >", "XREADGROUP GROUP g c BLOCK x STREAMS a >", "XREADGROUP GROUP g c COUNT x STREAMS a >", "XREADGROUP GROUP g c FOO STREAMS a >"},
	// Deleted entries in the PEL: history shows a null, XCLAIM and XAUTOCLAIM drop them.
	{"XADD s 1-1 a 1", "XADD s 2-1 b 2", "XADD s 3-1 c 3", "XGROUP CREATE s g 0", "XREADGROUP GROUP g c STREAMS s >", "XDEL s 2-1", "XREADGROUP GROUP g c STREAMS s 0", "XINFO STREAM s", "XINFO GROUPS s", "XAUTOCLAIM s g d 0 0 COUNT 1", "XAUTOCLAIM s g d 0 0 JUSTID", "XPENDING s g", "XDEL s 3-1", "XCLAIM s g d 0 3-1 1-1 JUSTID", "XPENDING s g"},
	// Lag and entries-read through deletions and trimming.
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s 3-1 a 3", "XADD s 4-1 a 4", "XGROUP CREATE s g 0", "XGROUP CREATE s h $", "XINFO GROUPS s", "XREADGROUP GROUP g c COUNT 1 STREAMS s >", "XINFO GROUPS s", "XDEL s 3-1", "XINFO GROUPS s", "XREADGROUP GROUP g c COUNT 1 STREAMS s >", "XINFO GROUPS s", "XREADGROUP GROUP g c STREAMS s >", "XINFO GROUPS s", "XTRIM s MAXLEN 1", "XINFO GROUPS s", "XGROUP SETID s g 0", "XINFO GROUPS s", "XINFO STREAM s"},
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XDEL s 1-1", "XGROUP CREATE s g 0", "XINFO GROUPS s", "XREADGROUP GROUP g c STREAMS s >", "XINFO GROUPS s", "XGROUP CREATE s h 1-1", "XINFO GROUPS s", "XGROUP CREATE s i 5-0", "XINFO GROUPS s", "XADD s 6-1 a 3", "XINFO GROUPS s"},
	// XACK.
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XGROUP CREATE s g 0", "XREADGROUP GROUP g c STREAMS s >", "XACK s g 1-1 1-1 9-9", "XACK s g 2-1 x", "XACK s g +", "XACK s nog 2-1", "XACK missing g 2-1", "XPENDING s g", "XACK s g 2", "XPENDING s g", "SET str v", "XACK str g 1-1"},
	// XPENDING forms.
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s 3-1 a 3", "XGROUP CREATE s g 0", "XREADGROUP GROUP g alice COUNT 2 STREAMS s >", "XREADGROUP GROUP g bob STREAMS s >", "XPENDING s g", "XPENDING s g - + 10", "XPENDING s g - + 1", "XPENDING s g (1-1 + 10", "XPENDING s g - (3-1 10", "XPENDING s g 2 2 10", "XPENDING s g - + 10 bob", "XPENDING s g - + 10 nobody", "XPENDING s g - + 0", "XPENDING s g - + -3",
		"XPENDING s g IDLE 0 - + 10", "XPENDING s g IDLE 3600000 - + 10", "XPENDING s g IDLE -5 - + 10 alice", "XPENDING s g IDLE x - + 10", "XPENDING s g IDLE 10 - +", "XPENDING s g - +", "XPENDING s g - + x", "XPENDING s g x + 10", "XPENDING s g - x 10", "XPENDING s g (- + 10", "XPENDING s g - (0-0 10", "XPENDING s g - + 10 alice extra", "XPENDING s nog", "XPENDING missing g - + 10", "XPENDING s g a b c d e f g"},
	// XCLAIM options.
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s 3-1 a 3", "XGROUP CREATE s g 0", "XREADGROUP GROUP g alice STREAMS s >", "XCLAIM s g bob 3600000 1-1", "XCLAIM s g bob 0 1-1", "XPENDING s g - + 10", "XCLAIM s g bob 0 2-1 JUSTID", "XPENDING s g - + 10", "XCLAIM s g carol 0 2-1 3-1 IDLE 100000 RETRYCOUNT 7", "XPENDING s g - + 10", "XPENDING s g IDLE 50000 - + 10", "XCLAIM s g dave 50000 2-1 3-1 1-1 JUSTID", "XPENDING s g - + 10 dave", "XCLAIM s g erin 0 1-1 TIME 1", "XPENDING s g IDLE 50000 - + 10",
		"XCLAIM s g erin 0 1-1 TIME 99999999999999", "XCLAIM s g erin 0 1-1 IDLE -1000", "XPENDING s g IDLE 50000 - + 10", "XCLAIM s g erin 0 1-1 RETRYCOUNT -2", "XPENDING s g - + 10", "XINFO CONSUMERS s g"},
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XGROUP CREATE s g 0", "XCLAIM s g bob 0 1-1", "XCLAIM s g bob 0 1-1 FORCE", "XPENDING s g - + 10", "XCLAIM s g bob 0 9-9 FORCE", "XCLAIM s g bob 0 2-1 FORCE JUSTID", "XPENDING s g - + 10", "XCLAIM s g bob 0 1-1 LASTID 5-0", "XINFO GROUPS s", "XCLAIM s g bob 0 1-1 LASTID 0-1", "XINFO GROUPS s",
		"XCLAIM s g bob x 1-1", "XCLAIM s g bob 0 1-1 IDLE x", "XCLAIM s g bob 0 1-1 TIME x", "XCLAIM s g bob 0 1-1 RETRYCOUNT x", "XCLAIM s g bob 0 1-1 LASTID x", "XCLAIM s g bob 0 1-1 FOO", "XCLAIM s g bob 0 1-1 IDLE", "XCLAIM s g bob 0 FOO", "XCLAIM s g bob -5 1-1 1-1", "XCLAIM s nog bob 0 1-1", "XCLAIM missing g bob 0 1-1", "XCLAIM s g bob 0 + 1-1", "XPENDING s g - + 10"},
	// XAUTOCLAIM: cursor, COUNT, JUSTID, idle filter.
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s 3-1 a 3", "XADD s 4-1 a 4", "XGROUP CREATE s g 0", "XREADGROUP GROUP g alice STREAMS s >", "XAUTOCLAIM s g bob 3600000 0", "XAUTOCLAIM s g bob 0 0 COUNT 2", "XAUTOCLAIM s g bob 0 3-1 COUNT 2 JUSTID", "XAUTOCLAIM s g carol 0 (1-1 COUNT 1", "XPENDING s g - + 10", "XAUTOCLAIM s g carol 0 - JUSTID", "XAUTOCLAIM s g carol 0 +", "XPENDING s g",
		"XAUTOCLAIM s g c 0 0 COUNT 0", "XAUTOCLAIM s g c 0 0 COUNT -1", "XAUTOCLAIM s g c 0 0 COUNT x", "XAUTOCLAIM s g c 0 0 COUNT 576460752303423488", "XAUTOCLAIM s g c 0 0 FOO", "XAUTOCLAIM s g c 0 0 COUNT", "XAUTOCLAIM s g c x 0", "XAUTOCLAIM s g c 0 x", "XAUTOCLAIM s g c 0 (18446744073709551615-18446744073709551615", "XAUTOCLAIM s nog c 0 0", "XAUTOCLAIM missing g c 0 0", "XAUTOCLAIM missing g c x 0"},
	// XAUTOCLAIM gives up after COUNT*10 PEL entries; its cursor is the next one.
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s 3-1 a 3", "XADD s 4-1 a 4", "XADD s 5-1 a 5", "XADD s 6-1 a 6", "XADD s 7-1 a 7", "XADD s 8-1 a 8", "XADD s 9-1 a 9", "XADD s 10-1 a 10", "XADD s 11-1 a 11", "XADD s 12-1 a 12", "XADD s 13-1 a 13", "XADD s 14-1 a 14", "XADD s 15-1 a 15", "XGROUP CREATE s g 0", "XREADGROUP GROUP g c STREAMS s >", "XAUTOCLAIM s g d 3600000 0 COUNT 1", "XAUTOCLAIM s g d 3600000 11-1 COUNT 1", "XAUTOCLAIM s g d 3600000 0 COUNT 2", "XDEL s 2-1 3-1 4-1", "XAUTOCLAIM s g d 3600000 0 COUNT 2", "XAUTOCLAIM s g d 0 0 COUNT 3 JUSTID", "XPENDING s g", "XREADGROUP GROUP g c COUNT 3 STREAMS s 0", "XCLAIM s g e 0 5-1 2-1 FORCE JUSTID", "XPENDING s g - + 3", "XINFO STREAM s", "XINFO STREAM s FULL COUNT 2"},
	// XREAD, non-blocking.
	{"XADD a 1-1 f 1", "XADD a 2-1 f 2", "XADD b 5-1 f 3", "XREAD STREAMS a 0", "XREAD COUNT 1 STREAMS a b 0 0", "XREAD STREAMS a b 1-1 $", "XREAD STREAMS a b $ $", "XREAD BLOCK 10 STREAMS a $", "XREAD BLOCK 0 STREAMS a 0", "XREAD STREAMS missing 0", "XREAD STREAMS a >", "XREAD GROUP g c STREAMS a 0", "XREAD NOACK STREAMS a 0", "XREAD STREAMS a", "XREAD COUNT 1", "XREAD STREAMS a x", "XREAD STREAMS a -", "XREAD STREAMS a 2", "XREAD BLOCK -1 STREAMS a 0", "SET str v", "XREAD STREAMS a str 0 0"},
	// XSETID.
	{"XADD s 5-1 a 1", "XSETID s 4-0", "XSETID s 5-1", "XSETID s 10-0 ENTRIESADDED 0", "XSETID s 10-0 ENTRIESADDED 7 MAXDELETEDID 3-0", "XINFO STREAM s", "XSETID s 10-0 MAXDELETEDID 11-0", "XSETID s 10-0 ENTRIESADDED -1", "XSETID s 10-0 ENTRIESADDED x", "XSETID s 10-0 MAXDELETEDID x", "XSETID s x", "XSETID s - ", "XSETID s 10-0 FOO", "XSETID s 10-0 ENTRIESADDED", "XSETID missing 1-1", "SET str v", "XSETID str 1-1", "XADD s 9-0 a 1", "XADD s 10-1 a 2", "XDEL s 5-1 10-1", "XSETID s 10-1", "XINFO STREAM s", "XGROUP CREATE s g 0", "XINFO GROUPS s"},
	// XINFO.
	{"XINFO HELP", "XINFO help x", "XINFO FOO s", "XINFO STREAM missing", "SET str v", "XINFO STREAM str", "XINFO GROUPS str", "XADD s 1-1 a 1", "XINFO CONSUMERS s nog", "XINFO STREAM s FULL", "XINFO STREAM s FULL COUNT 0", "XINFO STREAM s FULL COUNT -1", "XINFO STREAM s FULL COUNT x", "XINFO STREAM s FOO", "XINFO STREAM s FULL FOO 1", "XINFO STREAM s FULL COUNT", "XINFO STREAM s FULL COUNT 1 x"},
	{"XADD s 1-1 a 1", "XADD s 2-1 b 2", "XADD s 3-1 c 3", "XGROUP CREATE s g1 0", "XGROUP CREATE s g0 $", "XREADGROUP GROUP g1 bob STREAMS s >", "XREADGROUP GROUP g1 alice STREAMS s 0", "XCLAIM s g1 alice 0 2-1", "XINFO STREAM s FULL", "XINFO STREAM s FULL COUNT 1", "XINFO CONSUMERS s g1", "XINFO GROUPS s", "XGROUP CREATE e g 0 MKSTREAM", "XINFO STREAM e", "XINFO STREAM e FULL"},
	// From scripts: RESP2 shapes, BLOCK refused, subcommand checks.
	{"XADD s 1-1 a 1", "XGROUP CREATE s g 0", "EVAL \"return redis.call('xreadgroup', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')\" 1 s", "EVAL \"return redis.call('XREAD', 'STREAMS', KEYS[1], '0')\" 1 s", "EVAL \"return redis.pcall('xread', 'BLOCK', '0', 'STREAMS', KEYS[1], '0')\" 1 s",
		"EVAL \"return redis.pcall('XREADGROUP', 'BLOCK', '10', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')\" 1 s", "EVAL \"return redis.call('xinfo', 'groups', KEYS[1])\" 1 s", "EVAL \"return redis.call('xpending', KEYS[1], 'g')\" 1 s", "EVAL \"return redis.pcall('xgroup', 'create', KEYS[1])\" 1 s", "EVAL \"return redis.pcall('xgroup', 'nosuch', KEYS[1])\" 1 s", "EVAL \"return redis.call('xgroup', 'help')\" 0",
		"EVAL \"redis.setresp(3); return redis.call('xread', 'STREAMS', KEYS[1], '0')\" 1 s", "EVAL \"redis.setresp(3); return redis.call('xinfo', 'stream', KEYS[1])\" 1 s", "EVAL \"return redis.call('xautoclaim', KEYS[1], 'g', 'd', '0', '0')\" 1 s"},
}

func TestStreamGroupsMatchRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	for i, seq := range streamGroupCases {
		t.Run(fmt.Sprint(i, " ", seq[0]), func(t *testing.T) {
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sim := diffNew(t, WithClock(NewVirtualClock(time.Now())))
			for _, line := range seq {
				args := splitCommand(strings.TrimSpace(line))
				if args[0] == "EVAL" {
					args = splitScriptCommand(line)
				}
				want := outcomeOf(client.Do(ctx, args...))
				got := outcomeOf(sim.Do(ctx, args...))
				alignStreamTimes(t, args, &want, &got)
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

// splitScriptCommand splits `EVAL "source" numkeys args...`.
func splitScriptCommand(line string) []any {
	open := strings.Index(line, `"`)
	end := strings.LastIndex(line, `"`)
	out := []any{"EVAL", line[open+1 : end]}
	return append(out, splitCommand(strings.TrimSpace(line[end+1:]))...)
}

// timeTolerance bounds how far apart the two sides' clocks may read: the
// simulator's virtual clock stands still while the server's runs on.
const timeTolerance = 2000

// alignStreamTimes copies the server's idle and delivery times into the
// simulator's reply where the two are within timeTolerance, so that the
// rest of the reply is compared exactly; a time further off stays and
// fails the comparison.
func alignStreamTimes(t *testing.T, args []any, want, got *outcome) {
	t.Helper()
	name := strings.ToUpper(fmt.Sprint(args[0]))
	sub := ""
	if len(args) > 1 {
		sub = strings.ToUpper(fmt.Sprint(args[1]))
	}
	align := func(w, g any) any {
		wi, ok1 := w.(int64)
		gi, ok2 := g.(int64)
		if ok1 && ok2 && wi-gi <= timeTolerance && gi-wi <= timeTolerance {
			return wi
		}
		return g
	}
	switch {
	case name == "XPENDING" && len(args) > 3:
		wa, _ := want.Val.([]any)
		ga, _ := got.Val.([]any)
		for i := range min(len(wa), len(ga)) {
			we, _ := wa[i].([]any)
			ge, _ := ga[i].([]any)
			if len(we) == 4 && len(ge) == 4 {
				ge[2] = align(we[2], ge[2])
			}
		}
	case name == "XINFO" && sub == "CONSUMERS":
		wa, _ := want.Val.([]any)
		ga, _ := got.Val.([]any)
		for i := range min(len(wa), len(ga)) {
			wm, _ := wa[i].(map[any]any)
			gm, _ := ga[i].(map[any]any)
			if wm != nil && gm != nil {
				gm["idle"] = align(wm["idle"], gm["idle"])
				if _, ok := gm["inactive"]; ok { // 7.2's
					gm["inactive"] = align(wm["inactive"], gm["inactive"])
				}
			}
		}
	case name == "XINFO" && sub == "STREAM":
		wm, _ := want.Val.(map[any]any)
		gm, _ := got.Val.(map[any]any)
		if wm == nil || gm == nil {
			return
		}
		wg, _ := wm["groups"].([]any)
		gg, _ := gm["groups"].([]any)
		for i := range min(len(wg), len(gg)) {
			wgm, _ := wg[i].(map[any]any)
			ggm, _ := gg[i].(map[any]any)
			if wgm == nil || ggm == nil {
				continue
			}
			alignColumn(wgm["pending"], ggm["pending"], 2, align)
			wc, _ := wgm["consumers"].([]any)
			gc, _ := ggm["consumers"].([]any)
			for j := range min(len(wc), len(gc)) {
				wcm, _ := wc[j].(map[any]any)
				gcm, _ := gc[j].(map[any]any)
				if wcm != nil && gcm != nil {
					gcm["seen-time"] = align(wcm["seen-time"], gcm["seen-time"])
					if _, ok := gcm["active-time"]; ok { // 7.2's
						gcm["active-time"] = align(wcm["active-time"], gcm["active-time"])
					}
					alignColumn(wcm["pending"], gcm["pending"], 1, align)
				}
			}
		}
	}
}

// alignColumn aligns element col of each row of two arrays of arrays.
func alignColumn(want, got any, col int, align func(w, g any) any) {
	wa, _ := want.([]any)
	ga, _ := got.([]any)
	for i := range min(len(wa), len(ga)) {
		we, _ := wa[i].([]any)
		ge, _ := ga[i].([]any)
		if len(we) > col && len(ge) > col {
			ge[col] = align(we[col], ge[col])
		}
	}
}
