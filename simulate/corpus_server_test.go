package simulate

import "math/rand"

// The corpus learns the server and cluster commands whose replies do not
// describe the server (those that do, INFO and MEMORY, have their own
// tests): they must agree exactly, from a client and from a script.
func init() { corpusGroups = append(corpusGroups, corpusServer) }

func corpusServer(r *rand.Rand, k string) []string {
	v := func() string { return pick(r, corpusValues) }
	switch r.Intn(12) {
	case 0:
		return append([]string{"PING"}, pick(r, [][]string{{}, {v()}, {v(), v()}})...)
	case 1:
		if r.Intn(4) == 0 {
			return []string{"FLUSHALL", pick(r, []string{"ASYNC", "sync", "x"})}
		}
		return []string{"ECHO", v()}
	case 2:
		return []string{pick(r, []string{"ASKING", "READONLY", "READWRITE"})}
	case 3:
		return []string{"CLUSTER", pick(r, []string{"INFO", "KEYSLOT", "MYID", "FOO", "HELP"}), k}
	case 4:
		return []string{"COMMAND", pick(r, []string{"COUNT", "FOO", "HELP"})}
	case 5, 6:
		return append([]string{"COMMAND", pick(r, []string{"GETKEYS", "GETKEYSANDFLAGS"})}, pick(r, [][]string{
			{"GET", k}, {"SET", k, v(), "GET"}, {"MSET", k, v(), "{c}h1", v()}, {"XREAD", "COUNT", "1", "STREAMS", k, "0"},
			{"ZUNIONSTORE", k, "2", "{c}z1", "{c}s1"}, {"EVAL", "return 1", "1", k}, {"PING"}, {"NOSUCH", k}, {"GET"},
			{"XGROUP", "CREATE", k, "g", "0"}, {"BITFIELD", k, "GET", "u8", "0"}, {"SORT", k, "STORE", "{c}l1"},
		})...)
	case 7:
		// Commands without tips or key-spec notes, which COMMAND INFO leaves out.
		return []string{"COMMAND", "INFO", pick(r, []string{"get", "nosuch", "zrangestore"})}
	case 8:
		return append([]string{"LOLWUT"}, pick(r, [][]string{{}, {"VERSION", "x"}, {"VERSION", "7"}})...)
	case 9:
		return []string{"SLOWLOG", pick(r, []string{"LEN", "RESET", "HELP", "FOO"})}
	case 10:
		return []string{pick(r, []string{"XINFO", "XGROUP", "MEMORY", "COMMAND", "CLUSTER"}), "HELP"}
	default:
		return []string{"MEMORY", "USAGE", pick(r, []string{"nokey", "{c}none"}), pick(r, []string{"SAMPLES", "FOO"}), pick(r, []string{"0", "-1", "x"})}
	}
}
