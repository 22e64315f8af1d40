package simulate

import (
	"encoding/binary"
	"math/rand"
)

// The corpus generator for the string, bitmap, list, hash and keyspace
// commands of cmd_strings.go, cmd_bits.go, cmd_list.go, cmd_hash.go,
// cmd_keys.go, cmd_sort.go and cmd_dump.go. It leaves out what no two
// servers answer alike: RANDOMKEY, and HRANDFIELD with a count that
// draws, and OBJECT ENCODING (a script would pass its key in ARGV). DUMP is left out too: its payload for a stream (which the
// simulator does not write) or a hash-table set (whose order is the
// server's) differs; RESTORE gets payloads the differential DUMP test
// shows to be Redis's own. It never SELECTs: a direct SELECT would outlast the case on the
// test's connection.
func init() { corpusGroups = append(corpusGroups, corpusStrings) }

func corpusStrings(r *rand.Rand, k string) []string {
	other := func() string { return pick(r, corpusKeys) }
	v := func() string { return pick(r, corpusValues) }
	f := func() string { return pick(r, corpusFields) }
	offset := func() string {
		return pick(r, []string{"0", "1", "7", "8", "15", "23", "100", "-1", "x", "4294967296"}) // not 4294967295: a 512 MB string
	}
	index := func() string { return pick(r, []string{"0", "1", "2", "-1", "-2", "-100", "100", "x"}) }
	opt := func(cmd []string, p int, words ...string) []string {
		if r.Intn(p) == 0 {
			return append(cmd, words...)
		}
		return cmd
	}
	switch r.Intn(30) {
	case 0:
		return []string{pick(r, []string{"SETEX", "PSETEX"}), k, pick(r, []string{"100", "5000", "0", "-1", "x", "9223372036854775807"}), v()}
	case 1:
		cmd := []string{"GETEX", k}
		switch r.Intn(5) {
		case 0:
			cmd = append(cmd, pick(r, []string{"EX", "PX"}), pick(r, []string{"100", "5000", "0", "-5", "x"}))
		case 1:
			cmd = append(cmd, pick(r, []string{"EXAT", "PXAT"}), pick(r, []string{"1", "99999999999", "x"}))
		case 2:
			cmd = append(cmd, "PERSIST")
		case 3:
			cmd = append(cmd, pick(r, []string{"FOO", "EX", "PERSIST"}), pick(r, []string{"PX", "10", "PERSIST"}))
		}
		return cmd
	case 2:
		return []string{pick(r, []string{"SUBSTR", "GETRANGE"}), k, index(), index()}
	case 3:
		cmd := []string{"LCS", k, other()}
		for _, o := range r.Perm(5) {
			if r.Intn(3) != 0 {
				continue
			}
			switch o {
			case 0:
				cmd = append(cmd, "IDX")
			case 1:
				cmd = append(cmd, "LEN")
			case 2:
				cmd = append(cmd, "WITHMATCHLEN")
			case 3:
				cmd = append(cmd, "MINMATCHLEN", pick(r, []string{"0", "1", "2", "-1", "x"}))
			case 4:
				cmd = append(cmd, pick(r, []string{"FOO", "MINMATCHLEN"}))
			}
		}
		return cmd
	case 4, 5:
		return []string{"SETBIT", k, offset(), pick(r, []string{"0", "1", "1", "2", "x"})}
	case 6:
		return []string{"GETBIT", k, offset()}
	case 7:
		cmd := []string{"BITCOUNT", k}
		if r.Intn(3) != 0 {
			cmd = append(cmd, index(), index())
			cmd = opt(cmd, 2, pick(r, []string{"BIT", "BYTE", "bit", "FOO"}))
		} else {
			cmd = opt(cmd, 4, index())
		}
		return cmd
	case 8:
		cmd := []string{"BITPOS", k, pick(r, []string{"0", "1", "1", "2", "x"})}
		if r.Intn(2) == 0 {
			cmd = append(cmd, index())
			if r.Intn(2) == 0 {
				cmd = append(cmd, index())
				cmd = opt(cmd, 2, pick(r, []string{"BIT", "BYTE", "FOO"}))
			}
		}
		return cmd
	case 9:
		cmd := []string{"BITOP", pick(r, []string{"AND", "OR", "XOR", "NOT", "not", "FOO"}), other(), k}
		return opt(cmd, 2, other())
	case 10, 11:
		name := pick(r, []string{"BITFIELD", "BITFIELD", "BITFIELD_RO"})
		cmd := []string{name, k}
		for n := r.Intn(4); n >= 0; n-- {
			typ := pick(r, []string{"u1", "u4", "i4", "u8", "i8", "i16", "u63", "i64", "u64", "x8", "i0"})
			off := pick(r, []string{"0", "1", "5", "#1", "#2", "13", "-1", "x"})
			switch r.Intn(5) {
			case 0:
				cmd = append(cmd, "GET", typ, off)
			case 1:
				cmd = append(cmd, "SET", typ, off, pick(r, []string{"0", "1", "-1", "100", "300", "-200", "9223372036854775807", "x"}))
			case 2:
				cmd = append(cmd, "INCRBY", typ, off, pick(r, []string{"1", "-1", "100", "-100", "1000", "x"}))
			case 3:
				cmd = append(cmd, "OVERFLOW", pick(r, []string{"WRAP", "SAT", "FAIL", "fail", "BAD"}))
			default:
				cmd = append(cmd, pick(r, []string{"GET", "FOO", "OVERFLOW"}))
			}
		}
		return cmd
	case 12:
		cmd := []string{pick(r, []string{"LPUSHX", "RPUSHX"}), k, v()}
		return opt(cmd, 2, v())
	case 13:
		return []string{"LINSERT", k, pick(r, []string{"BEFORE", "AFTER", "after", "MIDDLE"}), v(), v()}
	case 14:
		keys := []string{k}
		if r.Intn(2) == 0 {
			keys = append(keys, other())
		}
		// numkeys past the arguments is left out: a script's KEYS would then
		// take LEFT for a key, and the cross-slot check refuse it first.
		n := pick(r, []string{"1", "2", "2", "0", "-1", "x"})
		if n == "1" || n == "2" {
			keys = keys[:min(len(keys), int(n[0]-'0'))]
			for len(keys) < int(n[0]-'0') {
				keys = append(keys, other())
			}
		}
		cmd := append([]string{"LMPOP", n}, keys...)
		if r.Intn(2) == 0 {
			// Never timeout 0: a direct call on empty lists would block the real server.
			cmd = append([]string{"BLMPOP", pick(r, []string{"0.01", "-1", "x"})}, cmd[1:]...)
		}
		cmd = append(cmd, pick(r, []string{"LEFT", "RIGHT", "left", "UP"}))
		return opt(cmd, 2, "COUNT", pick(r, []string{"1", "2", "10", "0", "-1", "x"}))
	case 15:
		return []string{"HSTRLEN", k, f()}
	case 16:
		cmd := []string{"HRANDFIELD", k, pick(r, []string{"3", "5", "100", "0", "x", "-9223372036854775808", "4611686018427387904"})}
		return opt(cmd, 2, pick(r, []string{"WITHVALUES", "withvalues", "FOO"}))
	case 17:
		return []string{"TOUCH", k, other()}
	case 18:
		return []string{"RENAMENX", k, other()}
	case 19:
		cmd := []string{"COPY", k, other()}
		cmd = opt(cmd, 3, "DB", pick(r, []string{"0", "1", "2", "16", "x"}))
		cmd = opt(cmd, 3, "REPLACE")
		return opt(cmd, 8, "FOO")
	case 20:
		return []string{"MOVE", k, pick(r, []string{"0", "1", "1", "2", "16", "-1", "x"})}
	case 21:
		return []string{"SWAPDB", pick(r, []string{"0", "1", "2", "x"}), pick(r, []string{"0", "1", "2", "16"})}
	case 22:
		if r.Intn(4) == 0 {
			return []string{pick(r, []string{"FLUSHDB", "FLUSHALL"}), pick(r, []string{"ASYNC", "SYNC", "x"})}
		}
		return []string{"PING", "a", "b"}
	case 23, 24:
		return corpusSort(r, k)
	case 25:
		cmd := []string{pick(r, []string{"RESTORE", "RESTORE", "RESTORE-ASKING"}), k, pick(r, []string{"0", "0", "100000", "-1", "x"}), pick(r, corpusPayloads())}
		cmd = opt(cmd, 2, "REPLACE")
		cmd = opt(cmd, 4, "ABSTTL")
		cmd = opt(cmd, 5, pick(r, []string{"IDLETIME", "FREQ"}), pick(r, []string{"0", "5", "300", "-1", "x"}))
		return opt(cmd, 10, "FOO")
	default:
		return []string{"HSTRLEN", k, f()}
	}
}

// corpusSort makes a SORT or SORT_RO call whose patterns reach the corpus
// keys: element "1" weighs {c}s1 or {c}h1's field f1. A constant BY comes
// only with STORE, which sorts a set: unsorted, a set of strings lists in
// the server's own hash order.
func corpusSort(r *rand.Rand, k string) []string {
	name := pick(r, []string{"SORT", "SORT", "SORT_RO"})
	cmd := []string{name, k}
	store := name == "SORT" && r.Intn(3) == 0
	for _, o := range r.Perm(6) {
		if r.Intn(3) != 0 {
			continue
		}
		switch o {
		case 0:
			by := pick(r, []string{"{c}s*", "{c}h*->f1", "{c}h*->n", "{c}t*", "nosort", "{c}x*->"})
			if by == "nosort" && !store {
				by = "{c}s*"
			}
			cmd = append(cmd, "BY", by)
		case 1:
			cmd = append(cmd, "LIMIT", pick(r, []string{"0", "1", "-1", "x"}), pick(r, []string{"1", "2", "-1", "0"}))
		case 2:
			cmd = append(cmd, "GET", pick(r, []string{"#", "{c}s*", "{c}h*->f2", "nostar"}))
			if r.Intn(2) == 0 {
				cmd = append(cmd, "GET", "#")
			}
		case 3:
			cmd = append(cmd, pick(r, []string{"ASC", "DESC"}))
		case 4:
			cmd = append(cmd, "ALPHA")
		case 5:
			cmd = append(cmd, pick(r, []string{"FOO", "LIMIT", "BY"}))
		}
	}
	if store {
		cmd = append(cmd, "STORE", pick(r, corpusKeys))
	}
	return cmd
}

// corpusPayloads are DUMP payloads of a few values of each type, and two
// broken ones.
func corpusPayloads() []string {
	vals := []*value{
		{kind: kindString, str: "7"},
		{kind: kindString, str: "hello"},
		{kind: kindList, list: []string{"a", "1"}},
		{kind: kindHash, hash: map[string]string{"f1": "1", "n": "x"}, fields: []string{"f1", "n"}},
		{kind: kindZSet, zset: map[string]float64{"f1": 1.5, "f2": -2}},
		{kind: kindSet, set: map[string]struct{}{"1": {}, "7": {}}},
	}
	out := []string{"x", "0123456789"}
	for _, v := range vals {
		b, _ := dumpObject(v, Redis70)
		b = binary.LittleEndian.AppendUint16(b, rdbVersion)
		out = append(out, string(binary.LittleEndian.AppendUint64(b, redisCRC64(b))))
	}
	return out
}
