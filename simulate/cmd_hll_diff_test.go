package simulate

import (
	"fmt"
	"strings"
	"testing"
)

// elements makes PFADD arguments e<from> ... e<to-1>.
func elements(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, " e%d", i)
	}
	return strings.TrimSpace(b.String())
}

// hllCases compare PFADD, PFCOUNT and PFMERGE, and the bytes GET reads
// back: sparse HyperLogLogs of growing size, the switch to dense at 3000
// bytes (and for a register above 32), merges of each encoding, cached
// cardinalities, and invalid values.
func hllCases() [][]string {
	return [][]string{
		{"PFADD h", "GET h", "PFCOUNT h", "PFADD h", "PFADD h a", "GET h", "PFADD h a", "GET h", "PFCOUNT h", "GET h", "OBJECT ENCODING h", "PFADD h b c d e f g", "GET h", "PFCOUNT h", "GET h", "PFCOUNT h missing"},
		{"PFADD h " + elements(0, 50), "GET h", "PFCOUNT h", "PFADD h " + elements(50, 300), "GET h", "PFCOUNT h", "GET h"},
		{"PFADD h " + elements(0, 1000), "STRLEN h", "GET h", "PFCOUNT h", "PFADD h " + elements(1000, 1800), "STRLEN h", "GET h", "PFCOUNT h", "PFADD h " + elements(1800, 2500), "STRLEN h", "PFCOUNT h", "GET h"},
		{"PFADD h " + elements(0, 20000), "STRLEN h", "PFCOUNT h", "GET h", "PFADD h " + elements(20000, 100000), "PFCOUNT h", "GET h"},
		{"PFADD a " + elements(0, 100), "PFADD b " + elements(50, 200), "PFCOUNT a b", "PFCOUNT a b missing", "PFMERGE d a b", "GET d", "PFCOUNT d", "PFMERGE a b", "GET a", "PFCOUNT a", "PFMERGE e", "GET e", "PFMERGE missing2 missing3", "GET missing2", "EXISTS missing3"},
		{"PFADD a " + elements(0, 5000), "PFADD b x y", "PFMERGE b a", "STRLEN b", "GET b", "PFCOUNT b", "PFMERGE c b", "GET c", "PFADD s " + elements(0, 1200), "PFADD t " + elements(1200, 2400), "PFMERGE s t", "STRLEN s", "GET s", "PFCOUNT s"},
		{"SET k v EX 100", "PFADD k a", "SET h x", "PFADD h a", "PFCOUNT h", "PFMERGE d h", "PFMERGE h", "LPUSH l 1", "PFADD l a", "PFCOUNT l", "PFCOUNT l h", "PFMERGE l", "PFMERGE d l", "SET n 1", "PFADD n a", "SET z HYLLxxxxxxxxxxxxxxxxxxxxx", "PFCOUNT z"},
		{"PFADD h a b", "EXPIRE h 100", "PFADD h c", "TTL h", "PFCOUNT h", "TTL h", "PFMERGE h", "TTL h", "OBJECT ENCODING h"},
		// a valid sparse value written with SET: its cached cardinality is
		// trusted, and PFCOUNT leaves it a raw string
		{"PFADD h a b c", "GET h", "OBJECT ENCODING h", "PFCOUNT h", "PFADD g " + elements(0, 3), "PFCOUNT g h", "PFMERGE g h", "GET g"},
		// a HyperLogLog written with SET is an embstr until a single-key
		// PFCOUNT, PFADD or PFMERGE makes it raw
		{"SET v 'HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff'", "OBJECT ENCODING v", "PFCOUNT v w", "OBJECT ENCODING v", "PFCOUNT v", "OBJECT ENCODING v", "SET w 'HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff'", "PFADD w", "OBJECT ENCODING w", "SET x 'HYLL\x01\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x7f\xff'", "PFCOUNT x", "PFMERGE x", "OBJECT ENCODING x", "PFCOUNT x", "GET x"},
		// corrupt sparse opcodes
		{"SET c 'HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f'", "PFCOUNT c", "PFADD c a", "PFCOUNT c c", "PFMERGE d c", "EXISTS d"},
		{"SET c 'HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe'", "PFCOUNT c", "PFADD c a", "GET c", "PFCOUNT c missing", "PFMERGE d c", "EXISTS d"},
		{"SET c 'HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\xff\x83'", "PFCOUNT c", "PFADD c a", "PFCOUNT c c", "PFMERGE d c", "EXISTS d"},
		{"SET c 'HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff'", "PFCOUNT c", "PFADD c a", "SET c 'HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff'", "PFCOUNT c", "SET c HYLL", "PFADD c a", "SET c 'HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x7f\xff'", "PFCOUNT c", "PFCOUNT c c"},
		{"PFADD h '' ' ' 'a b' 1234567 12345678 123456789 'long element with more than sixteen bytes in it'", "GET h", "PFCOUNT h"},
	}
}

func TestHLLCommandsMatchRedis(t *testing.T) { runCommandCases(t, hllCases()) }
