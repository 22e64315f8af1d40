package simulate

import (
	"math"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// lrand48 is Redis's redisLrand48 (src/rand.c): the 48-bit linear
// congruential generator of drand48, which Redis 7.0 installs as
// math.random. Redis 7.0 does not reseed it per script, so the sequence
// continues from one script run to the next on the same server.
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
	// lrandInit is rand.c's initial state (X2, X1, X0 = 0x1234, 0xABCD, 0x330E).
	lrandInit = 0x1234ABCD330E
	// lrandMax is REDIS_LRAND48_MAX (INT32_MAX).
	lrandMax = math.MaxInt32
)

func (r *lrand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

func (r *lrand48) next() int32 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int32(r.x >> 17)
}

// mathRandom is Redis's redis_math_random: Lua's own math.random with
// rand() replaced by redisLrand48().
func (sb *sandbox) mathRandom(L *lua.LState) int {
	r := float64(sb.srv.rand.next()%lrandMax) / float64(lrandMax)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := checkCInt(L, 1)
		if u < 1 {
			L.ArgError(1, errRandomInterval)
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := checkCInt(L, 1), checkCInt(L, 2)
		if l > u {
			L.ArgError(2, errRandomInterval)
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError(errLuaWrongArgs)
	}
	return 1
}

// mathRandomSeed is redis_math_randomseed.
func (sb *sandbox) mathRandomSeed(L *lua.LState) int {
	sb.srv.rand.seed(int32(checkCInt(L, 1)))
	return 0
}

// checkCInt is luaL_checkint: a number truncated to a C int.
func checkCInt(L *lua.LState, n int) int64 {
	return int64(int32(int64(float64(L.CheckNumber(n)))))
}
