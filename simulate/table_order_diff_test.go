package simulate

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The table-order differential test: generated scripts build tables through
// constructors, assignments, deletions, table.insert/remove and nesting,
// with integer, float, string and boolean keys, then report what depends on
// Lua 5.1's table layout (pairs order, next, #, unpack, table.foreach,
// cjson.encode, cmsgpack.pack), with full collections (collectgarbage()) in
// between. A real redis-server and the simulator must
// give the same bytes. REDLUA_TABLE_SEED picks another seed,
// REDLUA_TABLE_CASES another number of cases.
const tableOrderCases = 2000

const tableOrderDefaultSeed = 20261123

// tableOrderPrelude defines the helpers every generated script reports with.
// dump writes a table in pairs order, keys tagged with their type, nested
// tables inline; the other lines add what # and the encoders make of it.
const tableOrderPrelude = `local out = {}
local function dump(t, depth)
  if type(t) ~= 'table' then return type(t):sub(1,1) .. tostring(t) end
  if depth > 4 then return '...' end
  local parts = {}
  for k, v in pairs(t) do
    parts[#parts+1] = dump(k, depth+1) .. '=' .. dump(v, depth+1)
  end
  return '{' .. table.concat(parts, ',') .. '}#' .. #t
end
local function report(t)
  out[#out+1] = dump(t, 0)
  local ok, s = pcall(cjson.encode, t)
  out[#out+1] = (ok and 'json ' or 'jsonerr ') .. tostring(s)
  ok, s = pcall(cmsgpack.pack, t)
  out[#out+1] = (ok and 'mp ' or 'mperr ') .. tostring(s)
  local n = select('#', unpack(t))
  local ks = {}
  table.foreach(t, function(k) ks[#ks+1] = tostring(k) end)
  ok, s = pcall(function() return dump(cjson.decode(cjson.encode(t)), 0) end)
  out[#out+1] = 'jsonback ' .. tostring(s)
  ok, s = pcall(function() return dump(cmsgpack.unpack(cmsgpack.pack(t)), 0) end)
  out[#out+1] = 'mpback ' .. tostring(s)
  out[#out+1] = 'unpack ' .. n .. ' foreach ' .. table.concat(ks, ' ') .. ' next ' .. tostring(next(t)) .. ' maxn ' .. table.maxn(t)
end
local function multi(...) return ... end
`

// tableGen writes one random script.
type tableGen struct {
	r      *rand.Rand
	b      strings.Builder
	tables int
}

var tableOrderNames = []string{"a", "b", "c", "id", "type", "delay", "attempts", "backoff", "parent", "queueKey",
	"name", "data", "opts", "jobId", "k1", "k2", "k10", "x", "y", "z", "priority", "timestamp", "1", "2", "", "ok", "err"}

var tableOrderNumbers = []string{"0", "-1", "-5", "1.5", "0.5", "-2.25", "2^31", "2^31-1", "2^53", "1e15", "3.0", "1e300", "-0", "100", "1000"}

// key is a key expression: mostly small integers and short strings, as real
// scripts use, sometimes floats, odd numbers, booleans and long strings.
func (g *tableGen) key() string {
	switch n := g.r.Intn(20); {
	case n < 7:
		return strconv.Itoa(1 + g.r.Intn(g.pickSpan()))
	case n < 15:
		return strconv.Quote(g.name())
	case n < 17:
		return pick(g.r, tableOrderNumbers)
	case n < 18:
		return pick(g.r, []string{"true", "false"})
	default:
		return strconv.Quote(g.longString())
	}
}

func (g *tableGen) pickSpan() int { return pick(g.r, []int{4, 8, 16, 40, 70}) }

func (g *tableGen) name() string {
	if g.r.Intn(3) == 0 {
		return fmt.Sprintf("%s%d", pick(g.r, []string{"k", "f", "field:", "job"}), g.r.Intn(60))
	}
	return pick(g.r, tableOrderNames)
}

func (g *tableGen) longString() string {
	n := 1 + g.r.Intn(70)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(byte('!' + g.r.Intn(90)))
	}
	return strings.ReplaceAll(b.String(), `\`, "/")
}

// value is a value expression; depth bounds nesting.
func (g *tableGen) value(depth int) string {
	switch n := g.r.Intn(12); {
	case n < 4:
		return strconv.Itoa(g.r.Intn(200) - 20)
	case n < 7:
		return strconv.Quote(g.name())
	case n < 8:
		return pick(g.r, []string{"true", "false", "1.25", "-0.5", "1e20"})
	case n < 10 && depth < 2:
		return g.constructor(depth + 1)
	default:
		return strconv.Quote(g.name())
	}
}

// constructor is a table constructor: list items (sometimes nil, sometimes
// a trailing multi-value call), keyed fields, or both.
func (g *tableGen) constructor(depth int) string {
	var items []string
	n := g.r.Intn(8)
	if depth > 0 {
		n = g.r.Intn(5)
	} else if g.r.Intn(12) == 0 {
		n = 45 + g.r.Intn(70) // around and over LFIELDS_PER_FLUSH (50)
	}
	style := g.r.Intn(3)
	for i := 0; i < n; i++ {
		positional := style == 0 || (style == 2 && g.r.Intn(2) == 0)
		switch {
		case positional && g.r.Intn(10) == 0:
			items = append(items, "nil")
		case positional:
			items = append(items, g.value(depth))
		case g.r.Intn(3) == 0:
			items = append(items, g.ident()+"="+g.value(depth))
		default:
			items = append(items, "["+g.key()+"]="+g.value(depth))
		}
	}
	if g.r.Intn(6) == 0 {
		items = append(items, fmt.Sprintf("multi(%s)", strings.Join(g.values(g.r.Intn(6), depth), ", ")))
	}
	return "{" + strings.Join(items, ", ") + "}"
}

func (g *tableGen) values(n, depth int) []string {
	var vs []string
	for i := 0; i < n; i++ {
		vs = append(vs, g.value(depth))
	}
	return vs
}

func (g *tableGen) ident() string {
	return pick(g.r, []string{"a", "b", "c", "id", "type", "delay", "attempts", "name", "data", "x", "y", "z", "k1", "k2"})
}

func (g *tableGen) line(format string, args ...any) {
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

// step is one operation on table t.
func (g *tableGen) step(t string) {
	switch n := g.r.Intn(24); {
	case n < 8:
		g.line("%s[%s] = %s", t, g.key(), g.value(1))
	case n < 12:
		g.line("%s[%s] = nil", t, g.key())
	case n < 13:
		g.line("rawset(%s, %s, %s)", t, g.key(), pick(g.r, []string{"nil", g.value(1)}))
	case n < 15:
		g.line("table.insert(%s, %s)", t, g.value(1))
	case n < 16:
		g.line("table.insert(%s, %d, %s)", t, 1+g.r.Intn(6), g.value(1))
	case n < 17:
		g.line("table.remove(%s%s)", t, pick(g.r, []string{"", ", 1", ", 2", ", #" + t}))
	case n < 18:
		g.line("for i = 1, %d do %s[i] = i end", 1+g.r.Intn(g.pickSpan()), t)
	case n < 19:
		g.line("for i = %d, 1, -1 do %s[i] = %q end", 1+g.r.Intn(20), t, g.name())
	case n < 20:
		g.line("for i = 1, %d do %s[%q .. i] = i end", 1+g.r.Intn(40), t, g.name())
	case n < 21:
		g.line("for i = 1, %d, 2 do %s[i] = nil end", 1+g.r.Intn(20), t)
	case n < 22:
		// Clearing fields during traversal is allowed in Lua 5.1.
		g.line("for k, v in pairs(%s) do if type(v) == 'number' and v %% 2 == 0 then %s[k] = nil end end", t, t)
	case n < 23:
		if g.r.Intn(2) == 0 {
			g.sortStep()
			return
		}
		g.line("%s[%s] = %s", t, g.key(), g.constructor(1))
	default:
		if g.r.Intn(2) == 0 {
			// A full collection gives removed string keys dead keys.
			g.line("collectgarbage()")
			return
		}
		g.line("report(%s)", t)
	}
}

// sortStep sorts a list with many ties (or an inconsistent order function)
// and reports the result: Lua 5.1's quicksort decides where ties end up.
func (g *tableGen) sortStep() {
	less := pick(g.r, []string{"", ", function(a, b) return a % 5 < b % 5 end", ", function(a, b) return a > b end",
		", function(a, b) return math.floor(a / 10) < math.floor(b / 10) end", ", function(a, b) return true end"})
	g.line("do local s = {} for i = 1, %d do s[i] = (i * %d) %% %d end local ok, e = pcall(table.sort, s%s) out[#out+1] = table.concat(s, ',') .. ' ' .. tostring(e) end",
		g.r.Intn(60), 1+g.r.Intn(40), 7+g.r.Intn(90), less)
}

func (g *tableGen) script() string {
	g.b.Reset()
	g.b.WriteString(tableOrderPrelude)
	g.tables = 1 + g.r.Intn(3)
	for i := 0; i < g.tables; i++ {
		if g.r.Intn(3) == 0 {
			g.line("local t%d = {}", i)
		} else {
			g.line("local t%d = %s", i, g.constructor(0))
		}
	}
	for i, n := 0, g.r.Intn(14); i < n; i++ {
		g.step(fmt.Sprintf("t%d", g.r.Intn(g.tables)))
	}
	for i := 0; i < g.tables; i++ {
		g.line("report(t%d)", i)
	}
	g.b.WriteString("return out\n")
	return g.b.String()
}

func tableOrderSettings(t *testing.T) (seed int64, cases int) {
	seed, cases = tableOrderDefaultSeed, tableOrderCases
	if s := strings.TrimSpace(getenv("REDLUA_TABLE_SEED")); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("REDLUA_TABLE_SEED=%q: want an integer seed, e.g. REDLUA_TABLE_SEED=7", s)
		}
		seed = v
	}
	if s := strings.TrimSpace(getenv("REDLUA_TABLE_CASES")); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("REDLUA_TABLE_CASES=%q: want a positive number of cases, e.g. REDLUA_TABLE_CASES=500", s)
		}
		cases = v
	}
	return seed, cases
}

func TestTableOrderMatchesRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	seed, cases := tableOrderSettings(t)
	g := &tableGen{r: rand.New(rand.NewSource(seed))}
	sim := diffNew(t)
	mismatches := 0
	for c := 0; c < cases; c++ {
		src := g.script()
		want := outcomeOf(client.Eval(ctx, src, nil))
		got := outcomeOf(sim.RunSource(ctx, src, nil))
		if diff := cmp.Diff(want, got); diff != "" {
			mismatches++
			t.Errorf("case %d (seed %d): script\n%s\n(-redis +simulator):\n%s", c, seed, src, diff)
			if dir := getenv("REDLUA_TABLE_DUMP"); dir != "" {
				// Keep the script for bisecting by hand.
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("case%d.lua", c)), []byte(src), 0o644); err != nil {
					t.Fatalf("REDLUA_TABLE_DUMP=%q: %v", dir, err)
				}
			}
			if mismatches >= 5 {
				t.Fatal("stopping after 5 mismatches")
			}
		}
	}
	t.Logf("seed %d: %d cases, %d mismatches", seed, cases, mismatches)
}

// Tables Redis itself builds (replies, error tables, KEYS and ARGV, decoded
// JSON and msgpack) iterate as on the server.
func TestServerBuiltTablesMatchRedis(t *testing.T) {
	srv := diffStandalone(t)
	client := srv.Client()
	ctx := context.Background()
	const prelude = `local function d(t) local p = {} for k,v in pairs(t) do p[#p+1]=tostring(k)..'='..(type(v)=="table" and "T" or tostring(v)) end return table.concat(p,',') .. '#' .. #t end
`
	for _, c := range []struct {
		name, src string
		keys      []string
		args      []any
	}{
		{"error tables", `redis.call('SET', KEYS[1], 'abc')
return {d(redis.pcall('INCR', KEYS[1])), d(redis.pcall('NOSUCHCMD')), d(redis.pcall('GET')), d(redis.pcall()), d(redis.pcall('GET', {})), d(redis.error_reply('boom')), d(redis.status_reply('fine'))}`, []string{"{t}s"}, nil},
		{"replies", `redis.call('HSET', KEYS[1], 'f1', 'a', 'f2', 'b', 'f3', 'c', 'g', 'x', 'zz', 'y')
redis.call('RPUSH', KEYS[2], 'a', 'b', 'c', 'd', 'e')
local r = {d(redis.call('SET', KEYS[3], 'v')), d(redis.call('LRANGE', KEYS[2], 0, -1)), d(redis.call('HGETALL', KEYS[1]))}
redis.setresp(3)
local m = redis.call('HGETALL', KEYS[1])
r[#r+1] = d(m) r[#r+1] = d(m.map)
r[#r+1] = d(redis.call('ZINCRBY', KEYS[4], 1.5, 'a'))
return r`, []string{"{t}h", "{t}l", "{t}k", "{t}z"}, nil},
		{"KEYS and ARGV", `KEYS[6] = 'x' ARGV[4] = 'y' KEYS.n = 1 return {d(KEYS), d(ARGV)}`,
			[]string{"{t}1", "{t}2", "{t}3", "{t}4", "{t}5"}, []any{"a", "b", "c"}},
		{"library tables", `local out = {}
for _, name in ipairs({'string', 'table', 'math', 'redis', 'cjson', 'cmsgpack', 'bit', 'struct', 'coroutine'}) do
  local ks = {}
  for k in pairs(_G[name]) do ks[#ks+1] = k end
  out[#out+1] = name .. ': ' .. table.concat(ks, ' ')
end
local ks = {}
for k in pairs(cjson.new()) do ks[#ks+1] = k end
out[#out+1] = 'cjson.new(): ' .. table.concat(ks, ' ')
return out`, nil, nil},
		{"table errors", `local t = {}
local r = {}
for _, f in ipairs({
  function() t[0/0] = 1 end, function() t[nil] = 1 end, function() rawset(t, nil, 1) end,
  function() rawset(t, 0/0, 1) end, function() return {[0/0] = 1} end, function() return next(t, 'nokey') end,
  function() table.insert(t, 1, 2, 3) end, function() table.insert(t) end,
  function() table.sort({3, 2, 1, 5, 4, 6, 7}, function(a, b) return true end) end,
}) do local ok, e = pcall(f) r[#r+1] = tostring(e) end
local ok, e = pcall(table.sort, {3, 2, 1, 5, 4, 6, 7}, function(a, b) return true end)
r[#r+1] = tostring(e)
ok, e = pcall(table.insert, {}, 1, 2, 3)
r[#r+1] = tostring(e)
r[#r+1] = select('#', table.remove({})) .. ' ' .. select('#', table.remove({1}, 5)) .. ' ' .. table.maxn({1, 2, [7.5] = 1, [-3] = 2})
return r`, nil, nil},
		{"length ignores __len", `local t = setmetatable({1, 2, nil, 4}, {__len = function() return 10 end})
return {#t, #setmetatable({}, {__len = 1}), select('#', unpack(t)), table.getn(t)}`, nil, nil},
		{"decoders", `return {d(cjson.decode('{"b":1,"a":2,"c":{"x":1},"d":[1,2,null,4],"e":null}')), d(cjson.decode('[1,2,null,4]')),
d(cmsgpack.unpack(cmsgpack.pack({z=1, y=2, x={1,2,3}, [10]=true}))), d(cmsgpack.unpack(cmsgpack.pack({1, 2, 3})))}`, nil, nil},
	} {
		src := prelude + c.src
		if err := client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		want := outcomeOf(client.Eval(ctx, src, c.keys, c.args...))
		got := outcomeOf(diffNew(t).RunSource(ctx, src, c.keys, c.args...))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-redis +simulator):\n%s", c.name, diff)
		}
	}
}
