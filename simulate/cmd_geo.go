package simulate

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// The geo commands (geo.c): positions are sorted-set members whose scores
// are geohashes (geohash.go).

func init() {
	commands["geoadd"] = cmdGeoAdd
	commands["geopos"] = cmdGeoPos
	commands["geodist"] = cmdGeoDist
	commands["geohash"] = cmdGeoHash
	commands["georadius"] = cmdGeoSearch(1, geoByCoords)
	commands["georadius_ro"] = cmdGeoSearch(1, geoByCoords|geoNoStore)
	commands["georadiusbymember"] = cmdGeoSearch(1, geoByMember)
	commands["georadiusbymember_ro"] = cmdGeoSearch(1, geoByMember|geoNoStore)
	commands["geosearch"] = cmdGeoSearch(1, geoSearch)
	commands["geosearchstore"] = cmdGeoSearch(2, geoSearch|geoSearchStore)
}

// parseLongLat reads a longitude and a latitude, within Redis's limits.
func parseLongLat(a []string) (long, lat float64, bad *Reply) {
	var xy [2]float64
	for i := range xy {
		f, ok := parseFloat(a[i])
		if !ok {
			r := errorReply(errNotFloat)
			return 0, 0, &r
		}
		xy[i] = f
	}
	if xy[0] < geoLongMin || xy[0] > geoLongMax || xy[1] < geoLatMin || xy[1] > geoLatMax {
		r := errorReply(fmt.Sprintf(errGeoInvalidPair, cFormatF(xy[0]), cFormatF(xy[1])))
		return 0, 0, &r
	}
	return xy[0], xy[1], nil
}

// cFormatF is C's "%f".
func cFormatF(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// geoUnit is a unit's size in meters.
func geoUnit(u string) (float64, *Reply) {
	switch strings.ToLower(u) {
	case "m":
		return 1, nil
	case "km":
		return 1000, nil
	case "ft":
		return 0.3048, nil
	case "mi":
		return 1609.34, nil
	}
	r := errorReply(errGeoUnit)
	return 0, &r
}

// distanceReply is addReplyDoubleDistance: "%.4f" in a bulk string.
func distanceReply(d float64) Reply { return bulkReply(strconv.FormatFloat(d, 'f', 4, 64)) }

// coordReply is addReplyHumanLongDouble: "%.17Lf" without trailing zeros,
// a bulk string under RESP2 and a double under RESP3. 8.0 replies with
// addReplyDouble instead: the shortest form that reads back.
func coordReply(cc *CallContext, f float64) Reply {
	if cc.profile == Redis80 {
		if cc.RESP == 2 {
			return bulkReply(cc.profile.formatDouble(f))
		}
		return doubleReply(f)
	}
	text := formatLongDouble(new(big.Float).SetPrec(longDoublePrec).SetFloat64(f))
	if cc.RESP == 2 {
		return bulkReply(text)
	}
	v, _ := strconv.ParseFloat(text, 64)
	return doubleReply(v)
}

// cmdGeoAdd implements GEOADD key [NX|XX] [CH] longitude latitude member
// [...] by handing ZADD the members' geohash scores, as Redis does.
func cmdGeoAdd(ks *Keyspace, cc *CallContext, a []string) Reply {
	at := 2
	var nx, xx bool
	for ; at < len(a); at++ {
		switch strings.ToLower(a[at]) {
		case "nx":
			nx = true
			continue
		case "xx":
			xx = true
			continue
		case "ch":
			continue
		}
		break
	}
	if (len(a)-at)%3 != 0 || (nx && xx) {
		return errorReply(errSyntax)
	}
	zadd := append([]string{"zadd"}, a[1:at]...)
	for i := at; i < len(a); i += 3 {
		long, lat, bad := parseLongLat(a[i:])
		if bad != nil {
			return *bad
		}
		zadd = append(zadd, strconv.FormatUint(uint64(geoScore(long, lat)), 10), a[i+2])
	}
	return cmdZAdd(ks, cc, zadd)
}

// cmdGeoPos implements GEOPOS key member [...]: [longitude, latitude] per
// member, a null for a missing one.
func cmdGeoPos(ks *Keyspace, cc *CallContext, a []string) Reply {
	return ks.perGeoMember(cc, a, func(long, lat float64) Reply {
		return arrayReply([]Reply{coordReply(cc, long), coordReply(cc, lat)})
	})
}

// perGeoMember answers a command of the form CMD key member [...]: one
// reply per member from its decoded position, a null for a missing one.
func (ks *Keyspace) perGeoMember(cc *CallContext, a []string, reply func(long, lat float64) Reply) Reply {
	v, wrong := ks.zsetFor(cc, a[1], false)
	if wrong != nil {
		return *wrong
	}
	out := make([]Reply, 0, len(a)-2)
	for _, m := range a[2:] {
		score, ok := 0.0, false
		if v != nil {
			score, ok = v.zset[m]
		}
		if !ok {
			out = append(out, nilReply())
			continue
		}
		out = append(out, reply(decodeGeoScore(score)))
	}
	return arrayReply(out)
}

// cmdGeoDist implements GEODIST key member1 member2 [M|KM|FT|MI].
func cmdGeoDist(ks *Keyspace, cc *CallContext, a []string) Reply {
	toMeter := 1.0
	if len(a) == 5 {
		u, bad := geoUnit(a[4])
		if bad != nil {
			return *bad
		}
		toMeter = u
	} else if len(a) > 5 {
		return errorReply(errSyntax)
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindZSet, nilReply())
	if !ok {
		return done
	}
	s1, ok1 := v.zset[a[2]]
	s2, ok2 := v.zset[a[3]]
	if !ok1 || !ok2 {
		return nilReply()
	}
	lon1, lat1 := decodeGeoScore(s1)
	lon2, lat2 := decodeGeoScore(s2)
	return distanceReply(geoDistance(lon1, lat1, lon2, lat2) / toMeter)
}

const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// cmdGeoHash implements GEOHASH key member [...]: the standard 11-character
// geohash (over latitudes -90..90) of each member's position.
func cmdGeoHash(ks *Keyspace, cc *CallContext, a []string) Reply {
	return ks.perGeoMember(cc, a, func(long, lat float64) Reply {
		h, _ := geohashEncode(geoRange{-180, 180}, geoRange{-90, 90}, long, lat, 26)
		var buf [11]byte
		for i := range buf {
			idx := 0
			if i < 10 {
				idx = int(h.bits>>(52-(uint(i)+1)*5)) & 0x1f
			}
			buf[i] = geoAlphabet[idx]
		}
		return bulkReply(string(buf[:]))
	})
}

// The search commands' flavours (georadiusGeneric's flags).
const (
	geoByCoords = 1 << iota
	geoByMember
	geoNoStore
	geoSearch
	geoSearchStore
)

// geoPoint is one search result.
type geoPoint struct {
	member      string
	long, lat   float64
	dist, score float64
}

// cmdGeoSearch implements GEORADIUS, GEORADIUSBYMEMBER (and their _RO
// forms), GEOSEARCH and GEOSEARCHSTORE, parsing and failing in Redis's
// order: the key's type, the centre and radius of the GEORADIUS forms,
// the options, then the checks between them.
func cmdGeoSearch(srcAt int, flags int) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		v, wrong := ks.zsetFor(cc, a[srcAt], false)
		if wrong != nil {
			return *wrong
		}
		var shape geoShape
		var storeKey string
		store, storeDist := false, false
		base := 0
		switch {
		case flags&geoByCoords != 0:
			base = 6
			long, lat, bad := parseLongLat(a[2:])
			if bad != nil {
				return *bad
			}
			shape.long, shape.lat = long, lat
			if bad := parseGeoRadius(a[4:], &shape); bad != nil {
				return *bad
			}
		case flags&geoByMember != 0 && v == nil:
			base = 5
		case flags&geoByMember != 0:
			base = 5
			s, ok := v.zset[a[2]]
			if !ok {
				return errorReply(errGeoMember)
			}
			shape.long, shape.lat = decodeGeoScore(s)
			if bad := parseGeoRadius(a[3:], &shape); bad != nil {
				return *bad
			}
		default:
			base = 2
			if flags&geoSearchStore != 0 {
				base = 3
				store, storeKey = true, a[1]
			}
		}
		var withDist, withHash, withCoord, fromMember, fromLoc, byRadius, byBox, any bool
		sortDir := 0 // 1 ascending, 2 descending
		var count int64
		rest := a[base:]
		for i := 0; i < len(rest); i++ {
			arg := strings.ToLower(rest[i])
			more := len(rest) - 1 - i
			search := flags&geoSearch != 0
			storable := flags&geoNoStore == 0 && !search
			switch {
			case arg == "withdist":
				withDist = true
			case arg == "withhash":
				withHash = true
			case arg == "withcoord":
				withCoord = true
			case arg == "any":
				any = true
			case arg == "asc":
				sortDir = 1
			case arg == "desc":
				sortDir = 2
			case arg == "count" && more >= 1:
				n, ok := parseInt(rest[i+1])
				if !ok {
					return errorReply(errNotInteger)
				}
				if n <= 0 {
					return errorReply(errGeoCount)
				}
				count = n
				i++
			case (arg == "store" || arg == "storedist") && more >= 1 && storable:
				store, storeKey, storeDist = true, rest[i+1], arg == "storedist"
				i++
			case arg == "storedist" && flags&geoSearchStore != 0:
				storeDist = true
			case arg == "frommember" && more >= 1 && search && !fromLoc:
				fromMember = true
				i++
				if v == nil {
					continue
				}
				s, ok := v.zset[rest[i]]
				if !ok {
					return errorReply(errGeoMember)
				}
				shape.long, shape.lat = decodeGeoScore(s)
			case arg == "fromlonlat" && more >= 2 && search && !fromMember:
				long, lat, bad := parseLongLat(rest[i+1:])
				if bad != nil {
					return *bad
				}
				shape.long, shape.lat = long, lat
				fromLoc = true
				i += 2
			case arg == "byradius" && more >= 2 && search && !byBox:
				if bad := parseGeoRadius(rest[i+1:], &shape); bad != nil {
					return *bad
				}
				shape.box, byRadius = false, true
				i += 2
			case arg == "bybox" && more >= 3 && search && !byRadius:
				if bad := parseGeoBox(rest[i+1:], &shape); bad != nil {
					return *bad
				}
				shape.box, byBox = true, true
				i += 3
			default:
				return errorReply(errSyntax)
			}
		}
		if store && (withDist || withHash || withCoord) {
			what := "STORE option in GEORADIUS"
			if flags&geoSearchStore != 0 {
				what = "GEOSEARCHSTORE"
			}
			return errorReply(fmt.Sprintf(errGeoStoreWith, what))
		}
		if flags&geoSearch != 0 && !fromMember && !fromLoc {
			return errorReply(fmt.Sprintf(errGeoFrom, a[0]))
		}
		if flags&geoSearch != 0 && !byRadius && !byBox {
			return errorReply(fmt.Sprintf(errGeoBy, a[0]))
		}
		if any && count == 0 {
			return errorReply(errGeoAny)
		}
		if v == nil {
			if store {
				delete(ks.keys, storeKey)
				return intReply(0)
			}
			return arrayReply([]Reply{})
		}
		if count != 0 && sortDir == 0 && !any {
			sortDir = 1
		}
		limit := int64(0)
		if any {
			limit = count
		}
		points := geoCollect(v, shape, limit)
		if len(points) == 0 && !store {
			return arrayReply([]Reply{})
		}
		switch sortDir {
		case 1:
			sort.SliceStable(points, func(i, j int) bool { return points[i].dist < points[j].dist })
		case 2:
			sort.SliceStable(points, func(i, j int) bool { return points[i].dist > points[j].dist })
		}
		if count != 0 && int64(len(points)) > count {
			points = points[:count]
		}
		if store {
			ms := make([]ZMember, len(points))
			for i, p := range points {
				ms[i] = ZMember{Member: p.member, Score: p.score}
				if storeDist {
					ms[i].Score = p.dist / shape.conversion
				}
			}
			sort.Slice(ms, func(i, j int) bool {
				if ms[i].Score != ms[j].Score {
					return ms[i].Score < ms[j].Score
				}
				return ms[i].Member < ms[j].Member
			})
			return ks.storeZSet(cc.Now, storeKey, ms)
		}
		out := make([]Reply, len(points))
		for i, p := range points {
			if !withDist && !withHash && !withCoord {
				out[i] = bulkReply(p.member)
				continue
			}
			item := []Reply{bulkReply(p.member)}
			if withDist {
				item = append(item, distanceReply(p.dist/shape.conversion))
			}
			if withHash {
				item = append(item, intReply(cInt64(p.score)))
			}
			if withCoord {
				item = append(item, arrayReply([]Reply{coordReply(cc, p.long), coordReply(cc, p.lat)}))
			}
			out[i] = arrayReply(item)
		}
		return arrayReply(out)
	}
}

// parseGeoRadius reads "radius unit" into shape.
func parseGeoRadius(a []string, shape *geoShape) *Reply {
	r, ok := parseFloat(a[0])
	if !ok {
		e := errorReply(errGeoRadius)
		return &e
	}
	if r < 0 {
		e := errorReply(errGeoRadiusNegative)
		return &e
	}
	shape.radius = r
	u, bad := geoUnit(a[1])
	if bad != nil {
		return bad
	}
	shape.conversion = u
	return nil
}

// parseGeoBox reads "width height unit" into shape.
func parseGeoBox(a []string, shape *geoShape) *Reply {
	w, ok := parseFloat(a[0])
	if !ok {
		e := errorReply(errGeoWidth)
		return &e
	}
	h, ok := parseFloat(a[1])
	if !ok {
		e := errorReply(errGeoHeight)
		return &e
	}
	if h < 0 || w < 0 {
		e := errorReply(errGeoBoxNegative)
		return &e
	}
	shape.width, shape.height = w, h
	u, bad := geoUnit(a[2])
	if bad != nil {
		return bad
	}
	shape.conversion = u
	return nil
}

// geoCollect scans the shape's cells in Redis's order, each in score
// order over [cell start, next cell start), keeping the members inside
// the shape; limit > 0 stops once that many were found (COUNT ... ANY).
func geoCollect(v *value, shape geoShape, limit int64) []geoPoint {
	ms := sortedMembers(v.zset)
	var out []geoPoint
	cells := shape.areas()
	last := -1
	for i, c := range cells {
		if c.zero() {
			continue
		}
		if last >= 0 && c == cells[last] {
			continue
		}
		if limit > 0 && int64(len(out)) >= limit {
			break
		}
		lo := float64(c.align52())
		next := c
		next.bits++
		hi := float64(next.align52())
		start := sort.Search(len(ms), func(j int) bool { return ms[j].Score >= lo })
		for _, m := range ms[start:] {
			if !(m.Score < hi) {
				break
			}
			long, lat := decodeGeoScore(m.Score)
			if d, ok := shape.within(long, lat); ok {
				out = append(out, geoPoint{member: m.Member, long: long, lat: lat, dist: d, score: m.Score})
			}
			if limit > 0 && int64(len(out)) >= limit {
				break
			}
		}
		last = i
	}
	return out
}
