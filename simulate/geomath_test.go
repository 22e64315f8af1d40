package simulate

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// bigSeries evaluates sin (k0 = 1) or cos (k0 = 0) at x to 300 bits.
func bigSeries(x float64, k0 int) *big.Float {
	const prec = 300
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	x2 := new(big.Float).SetPrec(prec).Mul(bx, bx)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	if k0 == 1 {
		term.Set(bx)
	}
	sum := new(big.Float).SetPrec(prec).Set(term)
	for k := k0; k < 400; k += 2 {
		term.Mul(term, x2)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64((k+1)*(k+2))))
		term.Neg(term)
		sum.Add(sum, term)
	}
	return sum
}

// TestCorrectlyRoundedTrig checks crSin, crCos and crAsin against a
// 300-bit evaluation rounded once, over the arguments geo distances use.
func TestCorrectlyRoundedTrig(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		x := (r.Float64()*2 - 1) * math.Pi / 2
		if i%3 == 0 {
			x *= 1e-4
		}
		want, _ := bigSeries(x, 1).Float64()
		if got := crSin(x); got != want {
			t.Fatalf("crSin(%v) = %v, want %v", x, got, want)
		}
		want, _ = bigSeries(x, 0).Float64()
		if got := crCos(x); got != want {
			t.Fatalf("crCos(%v) = %v, want %v", x, got, want)
		}
		y := math.Abs(crSin(x))
		a := crAsin(y)
		// a is the double nearest asin(y) when sin of the neighbours
		// brackets y no better.
		s := bigSeries(a, 1)
		for _, n := range []float64{math.Nextafter(a, 0), math.Nextafter(a, 2)} {
			sn := bigSeries(n, 1)
			by := new(big.Float).SetPrec(300).SetFloat64(y)
			da := new(big.Float).Sub(s, by)
			dn := new(big.Float).Sub(sn, by)
			if dn.Abs(dn).Cmp(da.Abs(da)) < 0 {
				t.Fatalf("crAsin(%v) = %v, but %v is nearer", y, a, n)
			}
		}
	}
}
