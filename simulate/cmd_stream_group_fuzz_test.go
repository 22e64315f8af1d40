package simulate

import (
	"math/rand"
	"strings"
	"testing"
)

// groupFuzzSeeds give the stream commands a stream with entries, a group,
// pending entries of two consumers and a deleted one to meet.
var groupFuzzSeeds = [][]string{
	{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "2-1", "f", "v"}, {"XADD", "s", "3-1", "f", "v"},
	{"XGROUP", "CREATE", "s", "g", "0"}, {"XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"},
	{"XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", ">"}, {"XDEL", "s", "2-1"}, {"SET", "k", "v"},
}

// FuzzStreamGroupCommands: whatever arguments the consumer-group, stream
// reading and server commands get, they answer with a reply or an error.
func FuzzStreamGroupCommands(f *testing.F) {
	for _, seed := range []string{
		"XGROUP CREATE s g2 $ MKSTREAM ENTRIESREAD 5", "XREADGROUP GROUP g c COUNT 1 NOACK STREAMS s k > 0", "XREAD COUNT -1 STREAMS s s 0 $",
		"XPENDING s g IDLE 1 - + 10 c", "XCLAIM s g e 0 1-1 2-1 FORCE IDLE 5 LASTID 9-9", "XAUTOCLAIM s g e 0 (1-1 COUNT 1 JUSTID",
		"XINFO STREAM s FULL COUNT 1", "XSETID s 9-9 ENTRIESADDED 3 MAXDELETEDID 2-1", "COMMAND GETKEYS xread STREAMS", "MEMORY USAGE s SAMPLES 0",
		"COMMAND GETKEYS georadius k 0 0 1 km STORE", "COMMAND GETKEYS migrate a b c d e KEYS", "COMMAND LIST FILTERBY PATTERN [",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) { execFuzzed(t, line, 3, groupFuzzSeeds...) })
}

// TestStreamGroupCommandsNeverPanic calls each command with random
// arguments drawn from the tokens its options use: a deterministic sweep
// of what FuzzStreamGroupCommands explores without end.
func TestStreamGroupCommandsNeverPanic(t *testing.T) {
	names := []string{"XGROUP", "XREADGROUP", "XREAD", "XACK", "XPENDING", "XCLAIM", "XAUTOCLAIM", "XINFO", "XSETID",
		"COMMAND", "MEMORY", "INFO", "CLUSTER", "SLOWLOG", "LOLWUT", "ACL", "FUNCTION", "SCRIPT", "PUBSUB"}
	tokens := strings.Fields(`s k g c d missing 0 1 -1 1-1 2-1 3-1 9-9 18446744073709551615-18446744073709551615 ( (1-1 - + > $ x
		CREATE SETID DESTROY CREATECONSUMER DELCONSUMER HELP MKSTREAM ENTRIESREAD GROUP STREAMS COUNT BLOCK NOACK IDLE TIME
		RETRYCOUNT FORCE JUSTID LASTID STREAM GROUPS CONSUMERS FULL ENTRIESADDED MAXDELETEDID GETKEYS GETKEYSANDFLAGS INFO
		DOCS LIST FILTERBY PATTERN ACLCAT USAGE SAMPLES STATS DOCTOR KEYSLOT VERSION GET LEN RESET xread georadius migrate
		sort set zunionstore STORE KEYS`)
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 5000; i++ {
		argv := []string{names[r.Intn(len(names))]}
		for n := r.Intn(9); n > 0; n-- {
			argv = append(argv, tokens[r.Intn(len(tokens))])
		}
		execFuzzed(t, strings.Join(argv, " "), 2+r.Intn(2), groupFuzzSeeds...)
	}
}
