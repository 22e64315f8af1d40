package main

// The scale corpus: large Lua scripts of the shapes that make a linter
// slow when its analyses are not linear: many blocks with locals in one
// chunk, many locals visible at once, many functions, deep nesting and
// long if-chains. Bundled scripts (includes pasted into one file) and code
// generators produce such files. BenchmarkCheckScale measures lint.Check on
// them in process; bench_scale.sh times both linters on the same files.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redlua/redlua/lint"
)

// scaleShapes lists the shapes Generate knows, in a stable order.
var scaleShapes = []string{"blocks", "locals", "functions", "nesting", "ifchain"}

// scaleSizes are the sizes the benchmarks measure, 64 KB to 8 MB.
var scaleSizes = []int{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20}

// generateScale returns a script of the given shape at least size bytes long
// (it stops after the unit that crosses size). It is valid Lua 5.1 that
// luacheck parses; the "locals" shape declares more locals than the 200
// Lua allows in one function, as a stress case for the analyses only.
// An unknown shape is an error naming the known ones.
func generateScale(shape string, size int) ([]byte, error) {
	unit, ok := scaleUnits[shape]
	if !ok {
		return nil, fmt.Errorf("unknown shape %q: use one of %s", shape, strings.Join(scaleShapes, ", "))
	}
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString("local key, arg1 = KEYS[1], ARGV[1]\nlocal M = {}\n")
	for i := 0; b.Len() < size; i++ {
		unit(&b, i)
	}
	b.WriteString("return M\n")
	return []byte(b.String()), nil
}

var scaleUnits = map[string]func(b *strings.Builder, i int){
	// a do block with its own locals, as a bundler writes one per include
	"blocks": func(b *strings.Builder, i int) {
		fmt.Fprintf(b, "do\n  local v = redis.call('GET', key .. ':%d')\n  local n = tonumber(v) or %d\n", i, i%7)
		b.WriteString("  if n > 3 then n = n - 1 end\n  M[#M + 1] = n\nend\n")
	},
	// locals that stay visible to the end of the chunk, each read once
	"locals": func(b *strings.Builder, i int) {
		fmt.Fprintf(b, "local v%d = redis.call('HGET', key, 'f%d')\n", i, i)
		fmt.Fprintf(b, "if v%d then M.f%d = v%d .. arg1 end\n", i, i, i)
	},
	// one function per unit, with arguments, a loop and a closure
	"functions": func(b *strings.Builder, i int) {
		fmt.Fprintf(b, "function M.f%d(k, count)\n  local acc = {}\n  for j = 1, count do\n", i)
		fmt.Fprintf(b, "    acc[#acc + 1] = redis.call('LINDEX', k, j)\n  end\n")
		fmt.Fprintf(b, "  local function add(x) acc[#acc + 1] = x end\n  add(%d)\n  return acc\nend\n", i)
	},
	// 40 levels of if/while/closure nesting with a local at each level
	"nesting": func(b *strings.Builder, i int) {
		const depth = 40
		fmt.Fprintf(b, "M[%d] = function(x0)\n", i)
		for d := 0; d < depth; d++ {
			ind := strings.Repeat(" ", d+1)
			switch d % 4 {
			case 0:
				fmt.Fprintf(b, "%sif x%d then\n", ind, d)
			case 1:
				fmt.Fprintf(b, "%swhile x%d do\n", ind, d)
			case 2:
				fmt.Fprintf(b, "%sfor _ = 1, x%d do\n", ind, d)
			case 3:
				fmt.Fprintf(b, "%slocal g = function()\n", ind)
			}
			fmt.Fprintf(b, "%s local x%d = x%d + 1\n", ind, d+1, d)
		}
		for d := depth - 1; d >= 0; d-- {
			ind := strings.Repeat(" ", d+1)
			switch d % 4 {
			case 1:
				fmt.Fprintf(b, "%s break\n%send\n", ind, ind)
			case 3:
				fmt.Fprintf(b, "%s return x%d\n%send\n%sg()\n", ind, d+1, ind, ind)
			default:
				fmt.Fprintf(b, "%send\n", ind)
			}
		}
		b.WriteString("end\n")
	},
	// one function with a 1,000-branch if-elseif chain dispatching on a
	// command name
	"ifchain": func(b *strings.Builder, i int) {
		fmt.Fprintf(b, "M.dispatch%d = function(cmd, a)\n  local r, n = nil, 0\n  if cmd == 'c0' then\n    r = a\n", i)
		for j := 1; j < 1000; j++ {
			fmt.Fprintf(b, "  elseif cmd == 'c%d' then\n    n = n + %d\n    r = redis.call('INCRBY', a, n)\n", j, j%9)
		}
		b.WriteString("  else\n    r = redis.error_reply('unknown')\n  end\n  return r\nend\n")
	},
}

// TestWriteScaleCorpus lets bench_scale.sh generate the large inputs of
// every shape for both linters: REDLUA_SCALE_CORPUS=dir go test -run
// WriteScaleCorpus (REDLUA_SCALE_MAX caps the size in bytes).
func TestWriteScaleCorpus(t *testing.T) {
	dir := os.Getenv("REDLUA_SCALE_CORPUS")
	if dir == "" {
		t.Skip("set REDLUA_SCALE_CORPUS=dir to write the scale corpus")
	}
	limit := 8 << 20
	if s := os.Getenv("REDLUA_SCALE_MAX"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("REDLUA_SCALE_MAX=%q: want a number of bytes", s)
		}
		limit = n
	}
	for _, shape := range scaleShapes {
		for _, size := range scaleSizes {
			if size > limit {
				continue
			}
			src, err := generateScale(shape, size)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s-%05dk.lua", shape, size>>10)
			if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// BenchmarkCheckScale runs lint.Check on every shape at every size up to
// REDLUA_SCALE_MAX bytes (default 1 MB, to keep a plain -bench=. short):
// go test ./cmd/luacheck -run '^$' -bench CheckScale -benchmem. ns/op over
// the size gives the time per MB, which stays flat when the analyses are
// linear.
func BenchmarkCheckScale(b *testing.B) {
	limit := 1 << 20
	if s := os.Getenv("REDLUA_SCALE_MAX"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("REDLUA_SCALE_MAX=%q: want a number of bytes", s)
		}
		limit = n
	}
	for _, shape := range scaleShapes {
		for _, size := range scaleSizes {
			if size > limit {
				continue
			}
			src, err := generateScale(shape, size)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%dKB", shape, size>>10), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					lint.Check("scale.lua", src, nil)
				}
			})
		}
	}
}
