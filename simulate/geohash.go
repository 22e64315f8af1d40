package simulate

import "math"

// Redis's geohash (geohash.c, geohash_helper.c): a position is a 52-bit
// interleave of 26 latitude bits (even positions) and 26 longitude bits
// (odd) over longitudes -180..180 and latitudes -85.05112878..85.05112878,
// stored as a sorted-set score. Searches cover the shape with the nine
// cells of a step Redis estimates from the radius, and test each member
// found there with the haversine formula on a sphere of radius
// 6372797.560856 m.

const (
	geoLatMin      = -85.05112878
	geoLatMax      = 85.05112878
	geoLongMin     = -180.0
	geoLongMax     = 180.0
	geoStepMax     = 26
	earthRadius    = 6372797.560856
	mercatorMax    = 20037726.37
	degToRadFactor = math.Pi / 180.0
)

type geoRange struct{ min, max float64 }

var (
	geoLongRange = geoRange{geoLongMin, geoLongMax}
	geoLatRange  = geoRange{geoLatMin, geoLatMax}
)

// geoHash is a cell: its interleaved bits and how many bits per axis.
type geoHash struct {
	bits uint64
	step uint
}

func (h geoHash) zero() bool { return h.bits == 0 && h.step == 0 }

type geoArea struct {
	lat, long geoRange
}

func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | x<<s[i]) & b[i]
		y = (y | y<<s[i]) & b[i]
	}
	return x | y<<1
}

func deinterleave64(v uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x, y := v, v>>1
	for i := 0; i < 6; i++ {
		x = (x | x>>s[i]) & b[i]
		y = (y | y>>s[i]) & b[i]
	}
	return x | y<<32
}

// geohashEncode is geohashEncode: false outside Redis's limits or the ranges.
func geohashEncode(longR, latR geoRange, long, lat float64, step uint) (geoHash, bool) {
	if step > 32 || step == 0 {
		return geoHash{}, false
	}
	if long > geoLongMax || long < geoLongMin || lat > geoLatMax || lat < geoLatMin {
		return geoHash{}, false
	}
	if lat < latR.min || lat > latR.max || long < longR.min || long > longR.max {
		return geoHash{step: step}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	longOff := (long - longR.min) / (longR.max - longR.min)
	latOff *= float64(uint64(1) << step)
	longOff *= float64(uint64(1) << step)
	return geoHash{bits: interleave64(cUint32(latOff), cUint32(longOff)), step: step}, true
}

// cUint32 converts as C converts a double in [0, 2^32) to uint32_t.
func cUint32(f float64) uint32 { return uint32(int64(f)) }

// cUint64 converts as x86-64 code for C's (uint64_t) of a double does,
// including the values C leaves undefined (negative, infinite).
func cUint64(f float64) uint64 {
	const two63 = 9223372036854775808.0
	if f < two63 {
		return uint64(cInt64(f))
	}
	return uint64(cInt64(f-two63)) ^ 1<<63
}

// cInt64 is cvttsd2si: truncation, 1<<63 for NaN and out of range.
func cInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

func geohashDecode(longR, latR geoRange, h geoHash) (geoArea, bool) {
	if h.zero() {
		return geoArea{}, false
	}
	sep := deinterleave64(h.bits)
	latScale, longScale := latR.max-latR.min, longR.max-longR.min
	ilato, ilono := uint32(sep), uint32(sep>>32)
	div := float64(uint64(1) << h.step)
	var a geoArea
	a.lat.min = latR.min + (float64(ilato)*1.0/div)*latScale
	a.lat.max = latR.min + (float64(ilato+1)*1.0/div)*latScale
	a.long.min = longR.min + (float64(ilono)*1.0/div)*longScale
	a.long.max = longR.min + (float64(ilono+1)*1.0/div)*longScale
	return a, true
}

// decodeGeoScore is decodeGeohash: a score's cell centre, clamped to the limits.
func decodeGeoScore(score float64) (long, lat float64) {
	a, _ := geohashDecode(geoLongRange, geoLatRange, geoHash{bits: cUint64(score), step: geoStepMax})
	long = (a.long.min + a.long.max) / 2
	long = math.Max(math.Min(long, geoLongMax), geoLongMin)
	lat = (a.lat.min + a.lat.max) / 2
	lat = math.Max(math.Min(lat, geoLatMax), geoLatMin)
	return long, lat
}

// geoScore is the score GEOADD stores for a position within the limits.
func geoScore(long, lat float64) float64 {
	h, _ := geohashEncode(geoLongRange, geoLatRange, long, lat, geoStepMax)
	return float64(h.bits << (52 - h.step*2))
}

func (h geoHash) align52() uint64 { return h.bits << (52 - h.step*2) }

func moveX(h *geoHash, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - h.step*2)
	if d > 0 {
		x += zz + 1
	} else {
		x |= zz
		x -= zz + 1
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - h.step*2)
	h.bits = x | y
}

func moveY(h *geoHash, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - h.step*2)
	if d > 0 {
		y += zz + 1
	} else {
		y |= zz
		y -= zz + 1
	}
	y &= 0x5555555555555555 >> (64 - h.step*2)
	h.bits = x | y
}

// geoNeighbors lists the cell and its eight neighbours in the order Redis
// visits them: self, N, S, E, W, NE, NW, SE, SW.
func geoNeighbors(h geoHash) [9]geoHash {
	moves := [...][2]int{{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}}
	var out [9]geoHash
	for i, m := range moves {
		n := h
		moveX(&n, m[0])
		moveY(&n, m[1])
		out[i] = n
	}
	return out
}

func degRad(a float64) float64 { return a * degToRadFactor }
func radDeg(a float64) float64 { return a / degToRadFactor }

func geoLatDistance(lat1, lat2 float64) float64 {
	return earthRadius * math.Abs(degRad(lat2)-degRad(lat1))
}

// geoDistance is geohashGetDistance, in meters.
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := degRad(lon1), degRad(lon2)
	v := crSin((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := crSin((lat2r - lat1r) / 2)
	a := u*u + crCos(lat1r)*crCos(lat2r)*v*v
	return 2.0 * earthRadius * crAsin(math.Sqrt(a))
}

// geoShape is a search: around (long, lat), a radius or a width×height
// box, in a unit of conversion meters.
type geoShape struct {
	long, lat     float64
	box           bool
	radius        float64
	width, height float64
	conversion    float64
}

// within reports whether a point is inside the shape, and its distance
// from the centre in meters.
func (s geoShape) within(long, lat float64) (float64, bool) {
	if !s.box {
		d := geoDistance(s.long, s.lat, long, lat)
		return d, d <= s.radius*s.conversion
	}
	w, h := s.width*s.conversion, s.height*s.conversion
	if geoLatDistance(lat, s.lat) > h/2 {
		return 0, false
	}
	if geoDistance(long, lat, s.long, lat) > w/2 {
		return 0, false
	}
	return geoDistance(s.long, s.lat, long, lat), true
}

func geoEstimateSteps(meters, lat float64) uint {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint(min(max(step, 1), 26))
}

// areas is geohashCalculateAreasByShapeWGS84: the cells to scan, in order,
// a zero cell for one excluded.
func (s geoShape) areas() [9]geoHash {
	height := s.conversion * s.radius
	width := height
	if s.box {
		height, width = s.conversion*s.height/2, s.conversion*s.width/2
	}
	latDelta := radDeg(height / earthRadius)
	longDeltaTop := radDeg(width / earthRadius / math.Cos(degRad(s.lat+latDelta)))
	longDeltaBottom := radDeg(width / earthRadius / math.Cos(degRad(s.lat-latDelta)))
	minLon, maxLon := s.long-longDeltaTop, s.long+longDeltaTop
	if s.lat < 0 {
		minLon, maxLon = s.long-longDeltaBottom, s.long+longDeltaBottom
	}
	minLat, maxLat := s.lat-latDelta, s.lat+latDelta

	radius := s.radius
	if s.box {
		radius = math.Sqrt((s.width/2)*(s.width/2) + (s.height/2)*(s.height/2))
	}
	radius *= s.conversion
	steps := geoEstimateSteps(radius, s.lat)
	hash, _ := geohashEncode(geoLongRange, geoLatRange, s.long, s.lat, steps)
	ns := geoNeighbors(hash)
	area, _ := geohashDecode(geoLongRange, geoLatRange, hash)

	north, _ := geohashDecode(geoLongRange, geoLatRange, ns[1])
	south, _ := geohashDecode(geoLongRange, geoLatRange, ns[2])
	east, _ := geohashDecode(geoLongRange, geoLatRange, ns[3])
	west, _ := geohashDecode(geoLongRange, geoLatRange, ns[4])
	decrease := north.lat.max < maxLat || south.lat.min > minLat || east.long.max < maxLon || west.long.min > minLon
	if steps > 1 && decrease {
		steps--
		hash, _ = geohashEncode(geoLongRange, geoLatRange, s.long, s.lat, steps)
		ns = geoNeighbors(hash)
		area, _ = geohashDecode(geoLongRange, geoLatRange, hash)
	}
	if steps >= 2 {
		const n, so, e, w, ne, nw, se, sw = 1, 2, 3, 4, 5, 6, 7, 8
		if area.lat.min < minLat {
			ns[so], ns[sw], ns[se] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lat.max > maxLat {
			ns[n], ns[ne], ns[nw] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.long.min < minLon {
			ns[w], ns[sw], ns[nw] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.long.max > maxLon {
			ns[e], ns[se], ns[ne] = geoHash{}, geoHash{}, geoHash{}
		}
	}
	return ns
}
