package simulate

import (
	"math/rand"
	"strconv"
	"strings"
)

// The generated corpus's set, sorted-set algebra, HyperLogLog and geo
// commands. Set members are integers, so every set is an intset, whose
// order Redis defines: a hash table's order differs between servers, and
// the per-command tests (cmd_set_diff_test.go) cover that encoding.
func init() {
	corpusGroups = append(corpusGroups, corpusSetCommand, corpusZSetCommand, corpusHLLCommand, corpusGeoCommand)
}

var corpusSetMembers = []string{"1", "2", "3", "-1", "7", "42", "0", "10"}

// corpusKeyList is numkeys (sometimes wrong) and that many keys, the
// first k.
func corpusKeyList(r *rand.Rand, k string) []string {
	n := 1 + r.Intn(3)
	keys := []string{k}
	for len(keys) < n {
		keys = append(keys, pick(r, corpusKeys))
	}
	num := strconv.Itoa(n)
	if r.Intn(12) == 0 {
		num = pick(r, []string{"0", "-1", "x"}) // not n+1: the option after the keys would become a key, in another slot
	}
	return append([]string{num}, keys...)
}

func corpusSetCommand(r *rand.Rand, k string) []string {
	m := func() string { return pick(r, corpusSetMembers) }
	others := func(cmd []string) []string {
		for i, n := 0, r.Intn(3); i < n; i++ {
			cmd = append(cmd, pick(r, corpusKeys))
		}
		return cmd
	}
	switch r.Intn(8) {
	case 0, 1:
		cmd := []string{"SADD", k, m()}
		for i, n := 0, r.Intn(4); i < n; i++ {
			cmd = append(cmd, m())
		}
		return cmd
	case 2:
		return others([]string{pick(r, []string{"SINTER", "SUNION", "SDIFF"}), k})
	case 3:
		return others([]string{pick(r, []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}), pick(r, corpusKeys), k})
	case 4:
		cmd := append([]string{"SINTERCARD"}, corpusKeyList(r, k)...)
		if r.Intn(2) == 0 {
			cmd = append(cmd, "LIMIT", pick(r, []string{"0", "1", "2", "-1", "x"}))
		}
		if r.Intn(10) == 0 {
			cmd = append(cmd, "LIMIT")
		}
		return cmd
	case 5:
		return []string{"SMOVE", k, pick(r, corpusKeys), pick(r, append(corpusSetMembers, "x"))}
	case 6:
		// Counts whose reply does not depend on the draw: none, the whole
		// set, or invalid.
		cmd := []string{"SRANDMEMBER", k, pick(r, []string{"0", "100", "9223372036854775807", "-0", "x", "-9223372036854775808"})}
		if r.Intn(10) == 0 {
			cmd = append(cmd, "1")
		}
		return cmd
	default:
		return []string{pick(r, []string{"SMEMBERS", "SCARD", "SREM", "SISMEMBER"}), k, m()}[:2+r.Intn(2)]
	}
}

// corpusZSetCommand makes ZUNION/ZINTER/ZDIFF (and STORE forms),
// ZINTERCARD, ZMSCORE, ZMPOP and ZRANDMEMBER calls. BZMPOP is left to the
// per-command tests: called directly on empty keys, redis-server blocks.
func corpusZSetCommand(r *rand.Rand, k string) []string {
	switch r.Intn(6) {
	case 0, 1:
		name := pick(r, []string{"ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZINTERCARD"})
		cmd := []string{name}
		if strings.HasSuffix(name, "STORE") {
			cmd = append(cmd, pick(r, corpusKeys))
		}
		keys := corpusKeyList(r, k)
		cmd = append(cmd, keys...)
		n := len(keys) - 1
		store, card := strings.HasSuffix(name, "STORE"), name == "ZINTERCARD"
		rare := func() bool { return r.Intn(10) == 0 }
		for _, o := range r.Perm(5) {
			if r.Intn(3) != 0 {
				continue
			}
			switch o {
			case 0:
				if name[:5] == "ZDIFF" || card {
					if !rare() {
						continue
					}
				}
				cmd = append(cmd, "WEIGHTS")
				for i := 0; i < n; i++ {
					w := pick(r, []string{"1", "2", "0", "-1", "0.5", "inf", "-inf", "-0", "1e308"})
					if rare() {
						w = "x"
					}
					cmd = append(cmd, w)
				}
			case 1:
				if (name[:5] == "ZDIFF" || card) && !rare() {
					continue
				}
				cmd = append(cmd, "AGGREGATE", pick(r, []string{"SUM", "MIN", "MAX", "max", "sum"}))
				if rare() {
					cmd[len(cmd)-1] = "avg"
				}
			case 2:
				if (store || card) && !rare() {
					continue
				}
				cmd = append(cmd, "WITHSCORES")
			case 3:
				if !card && !rare() {
					continue
				}
				cmd = append(cmd, "LIMIT", pick(r, []string{"0", "1", "2", "-1"}))
			case 4:
				if rare() {
					cmd = append(cmd, pick(r, []string{"WEIGHTS", "AGGREGATE", "FOO"}))
				}
			}
		}
		return cmd
	case 2:
		return []string{"ZMSCORE", k, pick(r, corpusFields), pick(r, corpusFields)}
	case 3:
		cmd := append([]string{"ZMPOP"}, corpusKeyList(r, k)...)
		cmd = append(cmd, pick(r, []string{"MIN", "MAX", "min", "FOO"}))
		if r.Intn(2) == 0 {
			cmd = append(cmd, "COUNT", pick(r, []string{"1", "2", "10", "0", "-1", "x"}))
		}
		return cmd
	case 4:
		cmd := []string{"ZRANDMEMBER", k, pick(r, []string{"0", "100", "-0", "x", "9223372036854775807", "4611686018427387904"})}
		if r.Intn(2) == 0 {
			cmd = append(cmd, pick(r, []string{"WITHSCORES", "withscores", "FOO"}))
		}
		return cmd
	default:
		// zsets of more types of score and member, and sets, to combine
		if r.Intn(2) == 0 {
			return []string{"SADD", k, pick(r, corpusSetMembers), pick(r, corpusSetMembers)}
		}
		return []string{"ZADD", k, pick(r, corpusValues), pick(r, append(corpusSetMembers, corpusFields...))}
	}
}

// corpusHLLCommand makes PFADD, PFCOUNT and PFMERGE calls, and GETs that
// compare a HyperLogLog's bytes.
func corpusHLLCommand(r *rand.Rand, k string) []string {
	switch r.Intn(5) {
	case 0, 1:
		cmd := []string{"PFADD", k}
		for i, n := 0, r.Intn(6); i < n; i++ {
			cmd = append(cmd, "e"+strconv.Itoa(r.Intn(40)))
		}
		return cmd
	case 2:
		cmd := []string{"PFCOUNT", k}
		for i, n := 0, r.Intn(3); i < n; i++ {
			cmd = append(cmd, pick(r, corpusKeys))
		}
		return cmd
	case 3:
		cmd := []string{"PFMERGE", k}
		for i, n := 0, r.Intn(3); i < n; i++ {
			cmd = append(cmd, pick(r, corpusKeys))
		}
		return cmd
	default:
		return []string{"GET", k}
	}
}

var (
	corpusLongs = []string{"13.361389", "15.087269", "-0.1", "180", "-180", "181", "x", "0"}
	corpusLats  = []string{"38.115556", "37.502669", "51.5", "85.05112878", "-85.05112878", "86", "0", "x"}
)

// corpusGeoCommand makes GEOADD, GEOPOS, GEODIST, GEOHASH and the search
// commands, with their options and some invalid arguments. Members are
// the corpus fields, so a sorted set's ZADD scores (1.5, inf, -1, ...)
// are decoded as positions too.
func corpusGeoCommand(r *rand.Rand, k string) []string {
	f := func() string { return pick(r, corpusFields) }
	unit := func() string {
		if r.Intn(10) == 0 {
			return "yd"
		}
		return pick(r, []string{"m", "km", "mi", "ft", "KM"})
	}
	dist := func() string {
		if r.Intn(10) == 0 {
			return pick(r, []string{"-1", "x"})
		}
		return pick(r, []string{"0", "100", "200", "5000", "200000"})
	}
	searchOpts := func(cmd []string, store bool) []string {
		rare := func() bool { return r.Intn(10) == 0 }
		stored := false
		for _, o := range r.Perm(5) {
			if r.Intn(3) != 0 {
				continue
			}
			switch o {
			case 0:
				if store && r.Intn(2) == 0 {
					cmd = append(cmd, pick(r, []string{"STORE", "STOREDIST"}), pick(r, corpusKeys))
					stored = true
				}
			case 1:
				cmd = append(cmd, pick(r, []string{"ASC", "DESC"}))
			case 2:
				cmd = append(cmd, "COUNT", pick(r, []string{"1", "2", "3"}))
				if rare() {
					cmd[len(cmd)-1] = pick(r, []string{"0", "x"})
				}
				if r.Intn(3) == 0 {
					cmd = append(cmd, "ANY")
				}
			case 3:
				if rare() {
					cmd = append(cmd, pick(r, []string{"ANY", "FOO", "STOREDIST"}))
				}
			}
		}
		if (!stored && !strings.HasPrefix(cmd[0], "GEOSEARCHSTORE")) || rare() {
			for _, w := range []string{"WITHDIST", "WITHCOORD", "WITHHASH"} {
				if r.Intn(3) == 0 {
					cmd = append(cmd, w)
				}
			}
		}
		return cmd
	}
	switch r.Intn(7) {
	case 0, 1:
		cmd := []string{"GEOADD", k}
		for _, o := range []string{"NX", "XX", "CH"} {
			if r.Intn(5) == 0 {
				cmd = append(cmd, o)
			}
		}
		for i, n := 0, 1+r.Intn(2); i < n; i++ {
			cmd = append(cmd, pick(r, corpusLongs), pick(r, corpusLats), f())
		}
		return cmd
	case 2:
		return []string{pick(r, []string{"GEOPOS", "GEOHASH"}), k, f(), f()}
	case 3:
		cmd := []string{"GEODIST", k, f(), f()}
		if r.Intn(2) == 0 {
			cmd = append(cmd, unit())
		}
		return cmd
	case 4:
		if r.Intn(2) == 0 {
			return searchOpts([]string{pick(r, []string{"GEORADIUS", "GEORADIUS_RO"}), k, pick(r, corpusLongs), pick(r, corpusLats), dist(), unit()}, true)
		}
		return searchOpts([]string{pick(r, []string{"GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"}), k, f(), dist(), unit()}, true)
	default:
		cmd := []string{"GEOSEARCH", k}
		if r.Intn(3) == 0 {
			cmd = []string{"GEOSEARCHSTORE", pick(r, corpusKeys), k}
		}
		switch r.Intn(10) {
		case 0, 1, 2, 3, 4:
			cmd = append(cmd, "FROMMEMBER", f())
		case 5, 6, 7, 8:
			cmd = append(cmd, "FROMLONLAT", pick(r, corpusLongs), pick(r, corpusLats))
		}
		switch r.Intn(10) {
		case 0, 1, 2, 3, 4:
			cmd = append(cmd, "BYRADIUS", dist(), unit())
		case 5, 6, 7, 8:
			cmd = append(cmd, "BYBOX", dist(), dist(), unit())
		}
		return searchOpts(cmd, false)
	}
}
