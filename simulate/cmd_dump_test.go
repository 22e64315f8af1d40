package simulate

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestLZFRoundTrip: whatever lzfCompress writes, lzfDecompress reads back,
// over inputs from incompressible to highly repetitive.
func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 500; i++ {
		n := 21 + r.Intn(20000)
		alphabet := 1 + r.Intn(255)
		in := make([]byte, n)
		for j := range in {
			if j > 8 && r.Intn(4) == 0 {
				in[j] = in[j-1-r.Intn(8)] // local repeats
			} else {
				in[j] = byte(r.Intn(alphabet))
			}
		}
		c := lzfCompress(in, n-4)
		if c == nil {
			continue // did not save four bytes: stored verbatim
		}
		if len(c) > n-4 {
			t.Fatalf("input %d: compressed to %d bytes, over the %d allowed", i, len(c), n-4)
		}
		out, ok := lzfDecompress(c, uint64(n))
		if !ok || !bytes.Equal(out, in) {
			t.Fatalf("input %d (%d bytes, alphabet %d): round trip failed", i, n, alphabet)
		}
	}
}

// TestRestoreSurvivesCorruptPayloads: RESTORE of payloads with damaged
// bodies (and a correct checksum) answers an error or a value, never a
// panic.
func TestRestoreSurvivesCorruptPayloads(t *testing.T) {
	vals := []*value{
		{kind: kindString, str: "hello hello hello hello hello"},
		{kind: kindList, list: []string{"a", "1", "-5000", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}},
		{kind: kindHash, hash: map[string]string{"f": "123456789012"}, fields: []string{"f"}},
		{kind: kindZSet, zset: map[string]float64{"m": 1.5, "n": 3}},
		{kind: kindZSet, zset: map[string]float64{"m": 1.5}, big: true},
		{kind: kindSet, set: map[string]struct{}{"1": {}, "70000": {}}},
		{kind: kindSet, set: map[string]struct{}{"x": {}}, big: true},
	}
	r := rand.New(rand.NewSource(2))
	ks := NewKeyspace()
	cc := &CallContext{}
	for i := 0; i < 3000; i++ {
		body, _ := dumpObject(vals[r.Intn(len(vals))], Redis70)
		for n := 1 + r.Intn(3); n > 0 && len(body) > 0; n-- {
			switch r.Intn(3) {
			case 0:
				body[r.Intn(len(body))] = byte(r.Intn(256))
			case 1:
				body = body[:r.Intn(len(body))]
			default:
				body = append(body, byte(r.Intn(256)))
			}
		}
		if len(body) == 0 {
			continue
		}
		p := append([]byte(nil), body...)
		p = append(p, rdbVersion, 0)
		crc := redisCRC64(p)
		for k := 0; k < 8; k++ {
			p = append(p, byte(crc>>(8*k)))
		}
		ks.Exec(cc, []string{"RESTORE", "k", "0", string(p), "REPLACE"})
	}
}
