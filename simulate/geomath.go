package simulate

import "math"

// Redis computes distances with glibc's sin, cos and asin, which round
// correctly where Go's math package may be one unit in the last place
// off; STOREDIST stores the whole double, so the simulator evaluates them
// in double-double arithmetic (about 32 significant digits) and rounds
// once. The arguments are at most a few radians, where the Taylor series
// converge without argument reduction.

type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func ddAdd(a, b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func ddMul(a, b dd) dd {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p)
	e += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p, e)
}

// ddDiv divides by a small integer-valued double exactly enough.
func ddDiv(a dd, n float64) dd {
	q1 := a.hi / n
	r := ddAdd(a, dd{-q1 * n, -math.FMA(q1, n, -q1*n)})
	q2 := r.hi / n
	r = ddAdd(r, dd{-q2 * n, -math.FMA(q2, n, -q2*n)})
	q3 := r.hi / n
	return ddAdd(quickTwoSum(q1, q2), dd{q3, 0})
}

// ddSeries sums x^k0/k0! - x^(k0+2)/(k0+2)! + ... for sin (k0 = 1,
// first = x) and cos (k0 = 0, first = 1).
func ddSeries(x float64, first dd, k0 int) dd {
	xx := dd{x, 0}
	x2 := ddMul(xx, xx)
	sum, term := first, first
	for k := k0; k < 200; k += 2 {
		term = ddDiv(ddMul(term, x2), float64((k+1)*(k+2)))
		term = dd{-term.hi, -term.lo}
		sum = ddAdd(sum, term)
		if math.Abs(term.hi) < 1e-36*math.Abs(sum.hi) || term.hi == 0 {
			break
		}
	}
	return sum
}

func ddSin(x float64) dd { return ddSeries(x, dd{x, 0}, 1) }
func ddCos(x float64) dd { return ddSeries(x, dd{1, 0}, 0) }

// crSin and crCos are sin and cos rounded once, for |x| up to about 4.
func crSin(x float64) float64 {
	if math.Abs(x) > 4 || x == 0 {
		return math.Sin(x)
	}
	s := ddSin(x)
	return s.hi + s.lo
}

func crCos(x float64) float64 {
	if math.Abs(x) > 4 {
		return math.Cos(x)
	}
	c := ddCos(x)
	return c.hi + c.lo
}

// crAsin refines Go's asin with one Newton step in double-double.
func crAsin(y float64) float64 {
	x0 := math.Asin(y)
	c := math.Cos(x0)
	if y == 0 || c < 1e-4 || math.IsNaN(x0) {
		return x0
	}
	s := ddSin(x0)
	diff := ddAdd(s, dd{-y, 0})
	delta := (diff.hi + diff.lo) / c
	r := twoSum(x0, -delta)
	return r.hi + r.lo
}
