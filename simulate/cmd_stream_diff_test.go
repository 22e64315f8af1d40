package simulate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// streamCases use explicit IDs: "*" IDs come from each side's own clock.
var streamCases = [][]string{
	{"XADD s 1-1 a 1", "XADD s 1-1 a 2", "XADD s 1-0 a 2", "XADD s 1-2 a 2 b 3", "XADD s 5 c 4", "XLEN s", "XRANGE s - +", "XREVRANGE s + -", "XRANGE s 1 1", "XRANGE s (1-1 +", "XRANGE s - (5-0", "XRANGE s - + COUNT 2", "XRANGE s - + COUNT 0", "XRANGE s - + COUNT -1", "XRANGE s - + COUNT x", "XRANGE s - + FOO", "XRANGE s x +", "XREVRANGE s + - COUNT 1"},
	{"XADD s 0-0 a 1", "XADD s 0 a 1", "XADD s 0-* a 1", "XADD s 0-* a 2", "XADD s 7-* a 3", "XADD s abc a 1", "XADD s 1-2-3 a 1", "XADD s 9-9 a", "XADD s 9-9 a 1 b", "XLEN missing", "XRANGE missing - +", "XRANGE missing - + COUNT 0", "SET str x", "XRANGE str - + COUNT 0", "XRANGE str x +", "EXISTS s"},
	{"XADD s NOMKSTREAM 1-1 a 1", "EXISTS s", "XADD s 1-1 a 1", "XADD s NOMKSTREAM 2-1 a 2", "XADD s MAXLEN 2 3-1 a 3", "XRANGE s - +", "XADD s MAXLEN = 1 4-1 a 4", "XRANGE s - +", "XADD s MAXLEN -1 5-1 a 5", "XADD s MAXLEN x 5-1 a 5", "XADD s MAXLEN 1 LIMIT 10 5-1 a 5", "XADD s MINID 4-1 5-1 a 5", "XRANGE s - +"},
	{"XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s 3-1 a 3", "XADD s 4-1 a 4", "XDEL s 2-1 9-9 2-1", "XDEL s bad", "XDEL missing 1-1", "XLEN s", "XTRIM s MAXLEN 2", "XRANGE s - +", "XTRIM s MINID 4", "XRANGE s - +", "XTRIM s MAXLEN 0", "EXISTS s", "XLEN s", "XADD s 4-1 a 4", "XADD s 4-2 a 4", "TYPE s", "XTRIM s FOO 1", "XTRIM s MAXLEN 1 extra", "XTRIM missing MAXLEN 0"},
	{"XADD s 18446744073709551615-18446744073709551614 a 1", "XADD s 18446744073709551615-* a 2", "XADD s 18446744073709551615-* a 3", "XADD s * a 4", "XADD s 1-1 a 5", "XRANGE s (18446744073709551615-18446744073709551614 +", "XRANGE s - (0-1"},
	{"XADD s 5-18446744073709551615 a 1", "XADD s 5-* a 2", "XADD s 6-* a 3", "XLEN s"},
	// A last ID in the far future makes "*" deterministic: it increments, carrying into ms.
	{"XADD s 99999999999999-18446744073709551615 a 1", "XADD s * a 2", "XADD s * a 3", "XADD s MAXLEN 2 * a 4", "XRANGE s - +"},
	{"SET k v", "XADD k 1-1 a 1", "XLEN k", "XRANGE k - +", "XDEL k 1-1", "XTRIM k MAXLEN 1", "XADD s 1-1 a 1", "GET s", "LPUSH s x", "XADD", "XLEN", "XRANGE s -"},
}

func TestStreamsMatchRedis(t *testing.T) { runCommandCases(t, streamCases) }

func TestStreamAutoIDUsesCallTime(t *testing.T) {
	ks := NewKeyspace()
	now := time.UnixMilli(1_700_000_000_123)
	cc := &CallContext{Now: now, RESP: 3}
	first := ks.Exec(cc, []string{"XADD", "s", "*", "f", "v"})
	second := ks.Exec(cc, []string{"XADD", "s", "*", "f", "v"})
	if first.Str != "1700000000123-0" || second.Str != "1700000000123-1" {
		t.Fatalf("auto IDs at a frozen instant = %q, %q; want ms-0 then ms-1", first.Str, second.Str)
	}
	dump := ks.Dump(now)
	if len(dump) != 1 || dump[0].Type != "stream" {
		t.Fatalf("Dump = %+v, want one stream", dump)
	}
	entries := dump[0].Value.([]StreamEntry)
	if diff := cmp.Diff([]StreamEntry{{"1700000000123-0", []string{"f", "v"}}, {"1700000000123-1", []string{"f", "v"}}}, entries); diff != "" {
		t.Fatal(diff)
	}
}
