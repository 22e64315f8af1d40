package simulate

import (
	"fmt"
	"strings"
	"testing"
)

// xadds makes n "XADD key ms-1 fields" lines with ms from first on; in
// fields, %d is replaced by the entry's number.
func xadds(key string, first, n int, fields string) []string {
	out := make([]string, n)
	for i := range out {
		f := strings.ReplaceAll(fields, "%d", fmt.Sprint(first+i))
		out[i] = fmt.Sprintf("XADD %s %d-1 %s", key, first+i, f)
	}
	return out
}

func seq(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

// streamTrimCases check approximate trimming: Redis removes only whole
// radix-tree nodes (100 entries, or fewer when 4096 bytes fill up first),
// so which entries survive depends on where the node boundaries fall.
func streamTrimCases() [][]string {
	big := strings.Repeat("v", 200)
	mid := strings.Repeat("w", 60)
	var dels []string
	for i := 101; i <= 150; i++ {
		dels = append(dels, fmt.Sprintf("%d-1", i))
	}
	return [][]string{
		seq(xadds("s", 1, 250, "a 1"), "XTRIM s MAXLEN ~ 120", "XLEN s", "XTRIM s MAXLEN ~ 120", "XTRIM s MAXLEN ~ 151", "XTRIM s MAXLEN ~ 0", "XLEN s", "XADD s 300-1 a 1", "XLEN s", "EXISTS s"),
		seq(xadds("s", 1, 350, "a %d"), "XTRIM s MAXLEN ~ 0 LIMIT 150", "XLEN s", "XTRIM s MAXLEN ~ 0 LIMIT 99", "XTRIM s MAXLEN ~ 0 LIMIT 100", "XTRIM s MAXLEN ~ 10 LIMIT 0", "XLEN s", "XRANGE s - + COUNT 3"),
		seq(xadds("s", 1, 250, "a %d"), "XTRIM s MINID ~ 150", "XTRIM s MINID ~ 201", "XTRIM s MINID ~ 200-2", "XLEN s", "XTRIM s MINID 230", "XTRIM s MINID ~ 240", "XLEN s", "XRANGE s - + COUNT 2"),
		seq(xadds("s", 1, 60, "a "+big), "XTRIM s MAXLEN ~ 30", "XLEN s", "XTRIM s MAXLEN ~ 1", "XLEN s", "XRANGE s - + COUNT 1"),
		seq(xadds("s", 1, 120, "a "+mid+" b %d"), "XTRIM s MAXLEN ~ 50", "XLEN s", "XTRIM s MAXLEN ~ 5", "XLEN s"),
		// Entries with other field names than their node's first entry take more room.
		seq(xadds("s", 1, 40, "a "+mid), xadds("s", 41, 40, "b "+mid), "XTRIM s MAXLEN ~ 20", "XLEN s", "XTRIM s MAXLEN ~ 0", "XLEN s"),
		// Numbers are stored as integers, in fewer bytes.
		seq(xadds("s", 1, 120, "a 12345678901234 b -5000 c 99999 d 0x10 e 007"), "XTRIM s MAXLEN ~ 10", "XLEN s"),
		seq(xadds("s", 1, 300, "a 1"), "XADD s MAXLEN ~ 150 1000-1 a 1", "XLEN s", "XADD s MAXLEN ~ 150 1001-1 a 1", "XLEN s", "XADD s MINID ~ 250 1002-1 a 1", "XLEN s"),
		seq(xadds("s", 1, 500, "a 1"), "XADD s MAXLEN ~ 0 LIMIT 200 1000-1 a 1", "XLEN s", "XADD s MAXLEN ~ 0 1001-1 a 1", "XLEN s"),
		// Deleting every entry of the tail node removes the node: new entries start a fresh one.
		seq(xadds("s", 1, 150, "a 1"), "XDEL s "+strings.Join(dels, " "), "XLEN s", xadds("s", 151, 10, "a 1"), "XTRIM s MAXLEN ~ 10", "XLEN s", "XTRIM s MAXLEN ~ 9", "XLEN s"),
		// Deleted entries still count toward a node's 100.
		seq(xadds("s", 1, 60, "a 1"), "XDEL s 10-1 20-1 30-1", xadds("s", 61, 60, "a 1"), "XTRIM s MAXLEN ~ 10", "XLEN s", "XRANGE s - + COUNT 1"),
		// Exact trimming marks entries deleted inside a node, which still fills up.
		seq(xadds("s", 1, 50, "a 1"), "XTRIM s MAXLEN 10", xadds("s", 51, 80, "a 1"), "XTRIM s MAXLEN ~ 5", "XLEN s", "XTRIM s MINID 100", "XLEN s", "XTRIM s MAXLEN ~ 0", "XLEN s"),
		// A node whose last entry was deleted keeps its last ID for MINID ~.
		seq(xadds("s", 1, 150, "a 1"), "XDEL s 100-1", "XTRIM s MINID ~ 100", "XLEN s", "XTRIM s MINID ~ 101", "XLEN s"),
		// Big entries fill a node by bytes; after its successor goes, smaller ones may fit again.
		seq(xadds("s", 1, 19, "a "+big), xadds("s", 20, 2, "a "+big), "XDEL s 20-1 21-1", xadds("s", 22, 5, "a 1"), "XTRIM s MAXLEN ~ 4", "XLEN s", "XTRIM s MAXLEN ~ 0", "XLEN s"),
	}
}

// streamArgCases check XADD/XTRIM argument parsing as Redis orders it:
// options in any order, errors before the key is looked up, IDs read by
// string2ull.
var streamArgCases = [][]string{
	{"SET k v", "XADD k MAXLEN x 1-1 a 1", "XADD k MAXLEN 1 MINID 1 1-1 a 1", "XADD k 0-0 a 1", "XADD k 1-1 a", "XADD k 1-1 a 1", "XTRIM k MAXLEN x", "XTRIM k MAXLEN 1", "XTRIM k FOO 1"},
	{"XADD s MAXLEN 5", "XADD s NOMKSTREAM MAXLEN 5 a", "XADD s MAXLEN ~", "XADD s MAXLEN ~ 1", "XADD s MAXLEN ~ 1 1-1", "XADD s LIMIT 5 MAXLEN ~ 1 1-1 a 1", "XADD s MAXLEN ~ 1 LIMIT 5 2-1 a 1", "XADD s LIMIT 5 3-1 a 1", "XADD s LIMIT 0 3-1 a 1", "XADD s LIMIT -1 MAXLEN ~ 1 3-1 a 1", "XADD s LIMIT x MAXLEN ~ 1 3-1 a 1", "XADD s MAXLEN = 1 LIMIT 5 3-1 a 1", "XADD s MINID ~ 5-* 3-1 a 1", "XADD s MINID - 3-1 a 1", "XADD s MINID + 3-1 a 1", "XADD s MINID ~ 2 NOMKSTREAM 3-1 a 1", "XADD s MAXLEN -1 4-1 a 1", "XADD s MAXLEN 1 MAXLEN 1 4-1 a 1", "XRANGE s - +"},
	{"XADD s +5-1 a 1", "XADD s 007-1 a 1", "XADD s 8-+1 a 1", "XADD s ' 9-1' a 1", "XADD s 10-*1 a 1", "XADD s 0x10-1 a 1", "XADD s -1-1 a 1", "XADD s 11-18446744073709551616 a 1", "XADD s 12--18446744073709551615 a 1", "XADD s +13-* a 1", "XADD s 14- a 1", "XADD s 15 a 1", "XRANGE s - +", "XDEL s +5-1 0012", "XRANGE s 08 +", "XRANGE s (008-1 +", "XLEN s"},
	{"XDEL missing x -", "SET k v", "XDEL k x", "XADD s 1-1 a 1", "XDEL s 1-1 x", "XLEN s", "XDEL s - +", "XRANGE s (18446744073709551615-18446744073709551615 +", "XRANGE s - (0-0", "XRANGE s - (0", "XRANGE s (0 +", "XREVRANGE s (0-0 -", "XREVRANGE s + (18446744073709551615-18446744073709551615", "XRANGE s ( +", "XRANGE s (- +", "XRANGE s - (+", "XRANGE s (x (y", "XRANGE s 18446744073709551616 +"},
	{"XTRIM s MAXLEN 1", "XTRIM s LIMIT 1", "XTRIM s LIMIT 0", "XTRIM s LIMIT 1 MAXLEN ~ 1", "XTRIM s MAXLEN ~", "XTRIM s MAXLEN ~ 1 LIMIT 0", "XTRIM s MAXLEN = 1 LIMIT 0", "XTRIM s MINID ~ x", "XTRIM s MINID = 1 MAXLEN 1", "XTRIM s NOMKSTREAM MAXLEN 1", "XTRIM s MAXLEN 1 *", "XTRIM missing MAXLEN x", "XTRIM missing MAXLEN ~ 1"},
}

func TestStreamTrimMatchesRedis(t *testing.T) {
	runCommandCases(t, append(streamTrimCases(), streamArgCases...))
}
