package simulate

import "math/rand"

// The corpus learns OBJECT: ENCODING and REFCOUNT of whatever the other
// generators left under a key (REFCOUNT tells Redis's shared integers from
// values of their own), FREQ under the default policy, HELP, and invalid
// calls. IDLETIME comes only in invalid calls: its value depends on when
// Redis's LRU clock ticked (TestObjectMatchesRedis compares it with a
// tolerance).
func init() { corpusGroups = append(corpusGroups, corpusObject) }

func corpusObject(r *rand.Rand, k string) []string {
	switch r.Intn(8) {
	case 0, 1, 2:
		return []string{"OBJECT", "REFCOUNT", k}
	case 3, 4:
		return []string{"OBJECT", "ENCODING", k}
	case 5:
		return []string{"OBJECT", pick(r, []string{"FREQ", "freq"}), k}
	case 6:
		return []string{"OBJECT", pick(r, []string{"HELP", "help"})}
	default:
		return pick(r, [][]string{
			{"OBJECT", "HELP", k}, {"OBJECT", "IDLETIME", k, k}, {"OBJECT", "REFCOUNT"}, {"OBJECT", "FOO", k},
			{"OBJECT", "ENCODING", k, "x"}, {"OBJECT", "FREQ"}, {"OBJECT"},
		})
	}
}
