package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// luaGen writes random Lua 5.1 programs dense in what the overlapping
// checks judge: locals and their shadows, loops, closures, constant
// conditions, early returns and breaks. They are not meant to run.
type luaGen struct {
	r *rand.Rand
	b strings.Builder
}

var genNames = []string{"a", "b", "c", "x", "y", "_", "i", "k", "v", "t"}

func (g *luaGen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

func (g *luaGen) expr(depth int, scope []string) string {
	if depth > 2 || g.r.Float64() < 0.3 {
		switch c := g.r.Float64(); {
		case c < 0.5 && len(scope) > 0:
			return g.pick(scope)
		case c < 0.7:
			return fmt.Sprint(g.r.Intn(10))
		case c < 0.8:
			return "KEYS[1]"
		case c < 0.9:
			return "nil"
		default:
			return g.pick([]string{"g1", "true", `"s"`})
		}
	}
	switch c := g.r.Float64(); {
	case c < 0.3:
		return g.expr(depth+1, scope) + " + " + g.expr(depth+1, scope)
	case c < 0.5:
		return "f(" + g.expr(depth+1, scope) + ")"
	case c < 0.6:
		return "{" + g.expr(depth+1, scope) + "}"
	case c < 0.7:
		return "function(p) return " + g.expr(depth+1, append(scope[:len(scope):len(scope)], "p")) + " end"
	}
	return g.expr(depth+1, scope)
}

func (g *luaGen) line(indent, s string) { g.b.WriteString(indent + s + "\n") }

func (g *luaGen) block(depth int, scope []string, indent string, inLoop bool) {
	sc := append([]string(nil), scope...)
	for n := g.r.Intn(5); n > 0; n-- {
		r := g.r.Float64()
		deeper := depth < 3
		switch {
		case r < 0.25:
			name := g.pick(genNames)
			g.line(indent, "local "+name+" = "+g.expr(0, sc))
			sc = append(sc, name)
		case r < 0.3:
			name := g.pick(genNames)
			g.line(indent, "local "+name)
			sc = append(sc, name)
		case r < 0.45 && len(sc) > 0:
			g.line(indent, g.pick(sc)+" = "+g.expr(0, sc))
		case r < 0.55:
			g.line(indent, "f("+g.expr(0, sc)+")")
		case r < 0.62 && deeper:
			g.line(indent, "if "+g.expr(0, sc)+" then")
			g.block(depth+1, sc, indent+"  ", inLoop)
			if g.r.Intn(2) == 0 {
				g.line(indent, "else")
				g.block(depth+1, sc, indent+"  ", inLoop)
			}
			g.line(indent, "end")
		case r < 0.69 && deeper:
			g.line(indent, "while "+g.expr(0, sc)+" do")
			g.block(depth+1, sc, indent+"  ", true)
			g.line(indent, "end")
		case r < 0.75 && deeper:
			v := g.pick(genNames)
			g.line(indent, "for "+v+" = 1, "+g.expr(0, sc)+" do")
			g.block(depth+1, append(sc, v), indent+"  ", true)
			g.line(indent, "end")
		case r < 0.8 && deeper:
			k, v := g.pick(genNames), g.pick(genNames)
			g.line(indent, "for "+k+", "+v+" in pairs("+g.expr(0, sc)+") do")
			g.block(depth+1, append(sc, k, v), indent+"  ", true)
			g.line(indent, "end")
		case r < 0.86 && deeper:
			name := g.pick(genNames)
			args := g.r.Perm(len(genNames))[:g.r.Intn(3)]
			var params []string
			for _, i := range args {
				params = append(params, genNames[i])
			}
			g.line(indent, "local function "+name+"("+strings.Join(params, ", ")+")")
			g.block(depth+1, append(append(sc, name), params...), indent+"  ", false)
			g.line(indent, "end")
			sc = append(sc, name)
		case r < 0.9 && deeper:
			g.line(indent, "do")
			g.block(depth+1, sc, indent+"  ", inLoop)
			g.line(indent, "end")
		case r < 0.93 && deeper:
			g.line(indent, "repeat")
			g.block(depth+1, sc, indent+"  ", true)
			g.line(indent, "until "+g.expr(0, sc))
		case r < 0.96 && inLoop:
			g.line(indent, "if "+g.expr(0, sc)+" then break end")
		default:
			g.line(indent, "do return "+g.expr(0, sc)+" end")
		}
	}
	if g.r.Float64() < 0.15 {
		ret := "1"
		if len(sc) > 0 {
			ret = g.expr(0, sc)
		}
		g.line(indent, "return "+ret)
	}
}

// genJustified lists where the two disagree on the generated corpus, with
// why; keys are "file:line:col: CODE" as in compatJustified.
var genJustified = map[string]string{}

// TestCompatGenerated lints 200 generated programs with both linters and
// compares the overlapping codes finding by finding: hand-written cases
// cover what we thought of, these cover the combinations we did not.
func TestCompatGenerated(t *testing.T) {
	bin := realLuacheck(t)
	dir := t.TempDir()
	seed := int64(20261122)
	if s := os.Getenv("REDLUA_COMPAT_SEED"); s != "" { // to explore other corpora
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("REDLUA_COMPAT_SEED=%q is not a number", s)
		}
		seed = n
	}
	gen := &luaGen{r: rand.New(rand.NewSource(seed))}
	var files []string
	for i := 0; i < 200; i++ {
		gen.b.Reset()
		gen.block(0, nil, "", false)
		name := filepath.Join(dir, fmt.Sprintf("g%03d.lua", i))
		if err := os.WriteFile(name, []byte(gen.b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	rc := filepath.Join(dir, "redis.luacheckrc")
	if err := os.WriteFile(rc, []byte(redisLuacheckrc()+"\nglobals = {\"f\", \"g1\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, append([]string{"--config", rc, "--no-cache", "--codes", "--formatter", "plain", "--"}, files...)...).Output()
	if len(out) == 0 && err != nil {
		t.Fatalf("luacheck: %v", err)
	}
	ours, _, _ := runCLI(t, "", append([]string{"--no-config", "--no-default-config", "--globals", "f", "g1", "--formatter", "plain", "--codes", "--"}, files...)...)
	// keys relative to the corpus directory, so genJustified can name them
	relative := func(m map[string]bool) map[string]bool {
		r := map[string]bool{}
		for k := range m {
			r[strings.TrimPrefix(k, dir+string(filepath.Separator))] = true
		}
		return r
	}
	want, got := relative(findings(string(out), overlapCodes)), relative(findings(ours, overlapCodes))
	compareFindings(t, want, got, genJustified, "genJustified")
	t.Logf("seed %d: %d findings of luacheck compared over %d generated files, %d justified disagreements", seed, len(want), len(files), len(genJustified))
}
