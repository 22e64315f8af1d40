package lualib

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

	"github.com/redlua/redlua/internal/redistest"
)

// diffWrapper runs a chunk body under pcall and serialises every result in
// a form that is the same on both sides: strings byte for byte with their
// length, numbers through fmtnum (%.17g), tables with keys sorted bytewise.
const diffWrapper = `
local function less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local ser
ser = function(v)
  local t = type(v)
  if t == 'string' then return 's' .. #v .. ':' .. v
  elseif t == 'number' then return 'n' .. fmtnum(v)
  elseif t == 'boolean' then return tostring(v)
  elseif t == 'nil' then return 'nil'
  elseif t == 'userdata' then
    if v == cjson.null then return 'null' end
    return 'userdata'
  elseif t == 'table' then
    local keys, m = {}, {}
    for k, x in pairs(v) do
      local sk = ser(k)
      keys[#keys + 1] = sk
      m[sk] = ser(x)
    end
    table.sort(keys, less)
    local parts = {}
    for _, sk in ipairs(keys) do parts[#parts + 1] = sk .. '=' .. m[sk] end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  return t
end
local function pack(...) return select('#', ...), {...} end
local n, res = pack(pcall(function() %s end))
if not res[1] then return 'ERR ' .. tostring(res[2]) end
local out = {}
for i = 2, n do out[#out + 1] = ser(res[i]) end
return 'OK ' .. table.concat(out, ' | ')
`

const redisFmtnum = "local fmtnum = function(v) return string.format('%.17g', v) end\n"

// positionPrefix matches the "chunk:line: " that Lua puts before errors
// raised from Lua code. Chunk names and line numbers differ between the two
// sides (Redis's chunk has the extra fmtnum line), so each becomes "POS: ",
// which still checks that a position is there exactly when Redis has one.
var positionPrefix = regexp.MustCompile(`(?:user_script|<string>):\d+: `)

func normalise(s string) string {
	return positionPrefix.ReplaceAllString(s, "POS: ")
}

func newLibState(t testing.TB) *lua.LState {
	L := lua.NewState()
	t.Cleanup(L.Close)
	OpenCJSON(L)
	OpenBit(L)
	OpenStruct(L)
	OpenCMsgpack(L)
	// Redis's math.huge is infinity; bare gopher-lua has MaxFloat64 (the
	// simulator's sandbox fixes this too).
	L.GetGlobal("math").(*lua.LTable).RawSetString("huge", lua.LNumber(math.Inf(1)))
	L.SetGlobal("fmtnum", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(formatG(float64(L.CheckNumber(1)), 17)))
		return 1
	}))
	return L
}

func runLocal(L *lua.LState, body string) string {
	src := strings.Replace(diffWrapper, "%s", body, 1)
	if err := L.DoString(src); err != nil {
		return "LOAD " + err.Error()
	}
	v := L.Get(-1)
	L.Pop(1)
	return normalise(v.String())
}

// diffCase is one Lua chunk body evaluated on both sides.
type diffCase struct {
	name string
	body string
}

func runDiff(t *testing.T, cases []diffCase) {
	srv := redistest.Standalone(t)
	client := srv.Client()
	ctx := context.Background()
	L := newLibState(t)
	for _, tc := range cases {
		src := redisFmtnum + strings.Replace(diffWrapper, "%s", tc.body, 1)
		v, err := client.Eval(ctx, src, nil).Text()
		if err != nil {
			t.Errorf("%s: redis: %v", tc.name, err)
			continue
		}
		want := normalise(v)
		got := runLocal(L, tc.body)
		if got != want {
			t.Errorf("%s: %s\n got: %q\nwant: %q", tc.name, tc.body, got, want)
		}
	}
}
