package simulate

import (
	"math/rand"
	"strings"
)

// The corpus learns consumer groups and the stream readers. IDs are
// explicit ("*" would read each side's clock), and no reply it asks for
// carries a time: XPENDING's extended form only with an idle filter
// (1000000000 ms) no entry passes, XINFO without CONSUMERS and FULL. Idle
// times are 0 or 100000000 ms (XCLAIM IDLE), thresholds 0 or 100000000:
// the few milliseconds the server's clock runs on cannot cross them.
func init() { corpusGroups = append(corpusGroups, corpusStreamGroup) }

var (
	corpusGroupIDs  = []string{"0", "0-0", "1-1", "2", "3-0", "5-1", "9-9", "$", "-", "+", "x"}
	corpusConsumers = []string{"c1", "c2"}
)

// corpusStreamGroup makes one consumer-group or stream-reading command,
// mostly on {c}x1 so that groups meet the entries and the reads of earlier
// steps. A command alone seldom finds a group to work on, so a quarter of
// them run in a script that first gives the stream entries, group g1 and
// (sometimes) a pending entry: with pcall, so that what is already there
// (or a key of another type) stays as it is.
func corpusStreamGroup(r *rand.Rand, k string) []string {
	if r.Intn(3) != 0 {
		k = "{c}x1"
	}
	if r.Intn(4) != 0 {
		return corpusStreamCommand(r, k, false)
	}
	var b strings.Builder
	b.WriteString("redis.pcall('XADD', KEYS[1], '1-1', 'f1', 'a') redis.pcall('XADD', KEYS[1], '2-1', 'f2', 'b') redis.pcall('XGROUP', 'CREATE', KEYS[1], 'g1', '0', 'MKSTREAM') ")
	if r.Intn(2) == 0 {
		b.WriteString("redis.pcall('XREADGROUP', 'GROUP', 'g1', 'c1', 'COUNT', '1', 'STREAMS', KEYS[1], '>') ")
	}
	b.WriteString("return redis.pcall(")
	for i, a := range corpusStreamCommand(r, k, true) {
		if i > 0 {
			b.WriteString(", ")
		}
		if a == k {
			b.WriteString("KEYS[1]")
		} else {
			b.WriteString("'" + a + "'")
		}
	}
	b.WriteString(")")
	return []string{"EVAL", b.String(), "1", k}
}

// corpusStreamCommand makes the command; oneKey keeps it to key k.
func corpusStreamCommand(r *rand.Rand, k string, oneKey bool) []string {
	id := func() string { return pick(r, corpusGroupIDs) }
	entry := func() string { return pick(r, corpusStreamIDs) }
	g := func() string {
		switch r.Intn(12) {
		case 0:
			return "nogroup"
		case 1, 2:
			return "g2"
		}
		return "g1"
	}
	c := func() string { return pick(r, corpusConsumers) }
	idle := func() string { return pick(r, []string{"0", "0", "0", "100000000", "-5", "x"}) }
	optional := func(cmd []string, p int, opt ...string) []string {
		if r.Intn(p) == 0 {
			return append(cmd, opt...)
		}
		return cmd
	}
	switch r.Intn(18) {
	case 16, 17:
		// Entries for the groups to read, in mostly rising order.
		return []string{"XADD", k, pick(r, []string{"1-1", "2-1", "3-0", "3-1", "5-1", "7-0", "9-9"}), pick(r, corpusFields), "v"}
	case 0, 1:
		cmd := []string{"XGROUP", "CREATE", k, g(), pick(r, []string{"0", "0", "$", "1-1", "-", "x"})}
		if r.Intn(4) != 0 {
			cmd = append(cmd, "MKSTREAM")
		}
		return optional(cmd, 4, "ENTRIESREAD", pick(r, []string{"0", "1", "3", "-1", "-2", "x"}))
	case 2:
		cmd := []string{"XGROUP", "SETID", k, g(), id()}
		return optional(cmd, 3, "ENTRIESREAD", pick(r, []string{"0", "2", "-1", "x"}))
	case 3:
		switch r.Intn(4) {
		case 0:
			return []string{"XGROUP", "DESTROY", k, g()}
		case 1:
			return []string{"XGROUP", "CREATECONSUMER", k, g(), c()}
		case 2:
			return []string{"XGROUP", "DELCONSUMER", k, g(), c()}
		}
		return []string{"XGROUP", pick(r, []string{"HELP", "FOO", "CREATE"}), k}
	case 4, 5, 6:
		cmd := []string{"XREADGROUP", "GROUP", g(), c()}
		cmd = optional(cmd, 3, "COUNT", pick(r, []string{"0", "1", "2", "-1", "x"}))
		cmd = optional(cmd, 4, "NOACK")
		if !oneKey && r.Intn(4) == 0 {
			return append(cmd, "STREAMS", k, pick(r, corpusKeys), pick(r, []string{">", "0"}), pick(r, []string{">", "0", "1-1"}))
		}
		return append(cmd, "STREAMS", k, pick(r, []string{">", ">", ">", "0", "0", "1-1", "$", "x"}))
	case 7:
		cmd := optional([]string{"XREAD"}, 3, "COUNT", pick(r, []string{"0", "1", "2", "-1"}))
		cmd = optional(cmd, 6, pick(r, []string{"NOACK", "FOO"}))
		if !oneKey && r.Intn(4) == 0 {
			return append(cmd, "STREAMS", k, pick(r, corpusKeys), id(), id())
		}
		return append(cmd, "STREAMS", k, pick(r, []string{"0", "1-1", "2", "$", ">", "x"}))
	case 8, 9:
		return optional([]string{"XACK", k, g(), entry()}, 2, entry())
	case 10:
		if r.Intn(2) == 0 {
			return []string{"XPENDING", k, g()}
		}
		cmd := []string{"XPENDING", k, g(), "IDLE", "1000000000", pick(r, []string{"-", "0", "(1-1", "x"}), pick(r, []string{"+", "5", "(9"}), pick(r, []string{"10", "0", "x"})}
		return optional(cmd, 3, c())
	case 11, 12:
		cmd := []string{"XCLAIM", k, g(), c(), idle(), entry()}
		cmd = optional(cmd, 3, entry())
		for _, o := range r.Perm(5) {
			if r.Intn(4) != 0 {
				continue
			}
			switch o {
			case 0:
				cmd = append(cmd, "FORCE")
			case 1:
				cmd = append(cmd, "JUSTID")
			case 2:
				cmd = append(cmd, "RETRYCOUNT", pick(r, []string{"0", "3", "-1", "x"}))
			case 3:
				cmd = append(cmd, "LASTID", pick(r, []string{"5-1", "9-9", "0-1", "x"}))
			case 4:
				cmd = append(cmd, pick(r, []string{"IDLE", "IDLE", "FOO"}), "100000000")
			}
		}
		return cmd
	case 13:
		cmd := []string{"XAUTOCLAIM", k, g(), c(), idle(), pick(r, []string{"0", "-", "(1-1", "2", "+", "x"})}
		cmd = optional(cmd, 3, "COUNT", pick(r, []string{"1", "2", "0", "x"}))
		return optional(cmd, 3, "JUSTID")
	case 14:
		if r.Intn(2) == 0 {
			return []string{"XINFO", "GROUPS", k}
		}
		return []string{"XINFO", "STREAM", k}
	default:
		cmd := []string{"XSETID", k, pick(r, []string{"9-9", "5-1", "1-1", "20", "x"})}
		cmd = optional(cmd, 3, "ENTRIESADDED", pick(r, []string{"0", "5", "100", "-1"}))
		return optional(cmd, 3, "MAXDELETEDID", pick(r, []string{"1-1", "3-0", "30-0"}))
	}
}
