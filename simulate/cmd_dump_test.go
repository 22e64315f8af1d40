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
