package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redlua/redlua/internal/luasyntax"
)

// GlobalsAnalyzer reports globals: setting (111), mutating (112) or reading
// (113) one that is not defined, assigning a read-only standard global
// (121) or a field of one (122), and unknown fields of the standard
// libraries (142, 143) — the typo checks: redis.cal, string.fromat.
// Redis's sandbox rejects every global write at run time ("Attempt to
// modify a readonly table"), so 111 is the check that catches a missing
// "local".
var GlobalsAnalyzer = &Analyzer{
	Name:  "globals",
	Doc:   "undefined, non-standard and read-only global variables, against Redis's sandbox globals",
	Codes: []string{"111", "112", "113", "121", "122", "142", "143"},
	Run:   runGlobals,
}

func runGlobals(p *Pass) {
	for _, g := range p.res.globals {
		def := p.globals[g.name]
		n := g.node
		switch g.kind {
		case globalRead:
			if def == nil {
				p.Reportf(n, "113", Warning, g.name, "accessing undefined variable '%s'", g.name)
			}
		case globalSet:
			switch {
			case def == nil:
				p.Reportf(n, "111", Warning, g.name, "setting non-standard global variable '%s'", g.name)
			case !def.writable:
				p.Reportf(n, "121", Warning, g.name, "setting read-only global variable '%s'", g.name)
			}
		case globalMutate:
			switch {
			case def == nil:
				p.Reportf(n, "112", Warning, g.name, "mutating non-standard global variable '%s'", g.name)
			case def.anyFields:
			case def.fields != nil && g.fieldKnown && (!def.fields[g.field[0]] || len(g.field) > 1):
				p.Reportf(n, "142", Warning, g.name, "setting undefined field '%s' of global '%s'", strings.Join(g.field, "."), g.name)
			case !def.writable:
				p.Reportf(n, "122", Warning, g.name, "setting read-only field '%s' of global '%s'", strings.Join(g.field, "."), g.name)
			}
		case globalFieldRead:
			switch {
			case def == nil:
				p.Reportf(n, "113", Warning, g.name, "accessing undefined variable '%s'", g.name)
			case def.anyFields || def.fields == nil || !g.fieldKnown:
			case !def.fields[g.field[0]]:
				p.Reportf(n, "143", Warning, g.name, "accessing undefined field '%s' of global '%s'", g.field[0], g.name)
			}
		}
	}
}

// UnusedAnalyzer reports unused locals (211), arguments (212) and loop
// variables (213); variables never set (221), set but never read (231, 232,
// 233) or only mutated (241); and values assigned but never read (311).
// Variables named "_", and arguments named "_x", are exempt, as in luacheck.
var UnusedAnalyzer = &Analyzer{
	Name:  "unused",
	Doc:   "unused variables, arguments, loop variables and values",
	Codes: []string{"211", "212", "213", "221", "231", "232", "233", "241", "311"},
	Run:   runUnused,
}

func runUnused(p *Pass) {
	reach := p.reach()
	markUsedValues(p.res, reach.isDead)
	// A read counts when some value of the variable can reach it: a read
	// only in unreachable code is no access, as in luacheck. A function
	// value read from another closure is judged by the closure graph.
	for _, v := range p.res.vars {
		reached := v.Kind == VarargVar // "..." is read wherever it is used
		for _, s := range v.sets {
			reached = reached || s.used
		}
		if !reached && v.isFunc {
			for _, r := range v.reads {
				if !r.circular && r.fn != v.Func && (!createdDead(p.res, r.fn, v.Func, reach.isDead) || reach.isDead(v.Decl.Pos.Offset)) {
					reached = true
				}
			}
		}
		if !reached {
			v.reads = nil
		}
	}
	used := closuresInUse(p.res)
	funcOf := map[*Var]*FunctionExpr{}
	for fn, v := range p.res.funcValue {
		funcOf[v] = fn
	}
	for _, v := range p.res.vars {
		// "_" is exempt, except a "local _" that is never given a value
		// at all (luacheck's "useless" 211)
		if v.Name == "_" && (v.hasValue || len(v.reads) > 0 || len(v.sets) > 1 || v.Kind != LocalVar) {
			continue
		}
		if v.Kind == ArgVar && len(v.Name) > 1 && v.Name[0] == '_' && luasyntax.IsNameStart(v.Name[1]) {
			continue
		}
		series := map[VarKind]string{LocalVar: "1", ArgVar: "2", SelfVar: "2", VarargVar: "2", LoopVar: "3"}[v.Kind]
		laterSets := 0
		for _, s := range v.sets {
			if !s.implicit {
				laterSets++
			}
		}
		if v.Kind == LocalVar && v.hasValue {
			laterSets-- // the declaration's own value
		}
		reads := len(v.reads)
		if len(v.sets) == 1 {
			// luacheck judges a variable with one value by that value,
			// which circular reads ("Q.__index = Q") do not access; with
			// several it asks whether the variable is read at all.
			reads = 0
			for _, r := range v.reads {
				if !r.circular {
					reads++
				}
			}
		}
		if fn := funcOf[v]; fn != nil && reads > 0 && used.reported[fn] {
			if at, ok := functionVar(v, laterSets); ok {
				// read only by closures nothing running reaches
				msg := "unused mutually recursive function '" + v.Name + "'"
				if used.self[fn] {
					msg = "unused recursive function '" + v.Name + "'"
				}
				p.reportSpan(at, "211", Warning, v.Name, msg)
				continue
			}
		}
		switch {
		case reads == 0 && v.mutated && v.Kind == LocalVar && v.onlyTables:
			p.reportSpan(v.Decl, "241", Warning, v.Name, "variable '"+v.Name+"' is mutated but never accessed")
		case reads == 0 && v.mutated:
			continue // mutating a table that others may hold (an argument, a call result)
		case reads == 0 && laterSets > 0:
			p.reportSpan(v.Decl, "23"+series, Warning, v.Name, map[string]string{"1": "variable", "2": "argument", "3": "loop variable"}[series]+" '"+v.Name+"' is never accessed")
		case reads == 0:
			p.reportSpan(v.Decl, "21"+series, Warning, v.Name, unusedMessage(v))
		case !v.hasValue && laterSets == 0:
			p.reportSpan(v.Decl, "221", Warning, v.Name, "variable '"+v.Name+"' is never set")
		default:
			// Arguments' and loop variables' own initial values are not
			// sets (luacheck's 312/313 are not reported); later
			// assignments to them are, with 311.
			for _, s := range v.sets {
				if !s.used && !s.implicit {
					msg := "value assigned to variable '" + v.Name + "' is unused"
					if s.overwrittenBy != nil {
						msg = "value assigned to variable '" + v.Name + "' is overwritten on line " + strconv.Itoa(s.overwrittenBy.at.Pos.Line) + " before use"
					}
					p.reportSpan(s.at, "311", Warning, v.Name, msg)
				}
			}
		}
	}
}

func unusedMessage(v *Var) string {
	switch v.Kind {
	case ArgVar, SelfVar:
		return "unused argument '" + v.Name + "'"
	case VarargVar:
		return "unused variable length argument"
	case LoopVar:
		return "unused loop variable '" + v.Name + "'"
	}
	if v.isFunc {
		return "unused function '" + v.Name + "'"
	}
	return "unused variable '" + v.Name + "'"
}

// functionVar reports whether v holds one function and nothing else, as
// luacheck's is_function_var: declared with it ("local function f",
// "local f = function"), or declared empty and given it once ("local f;
// function f() end", "local a, b; a = function"). at is where the function
// is given, where luacheck reports an unused one.
func functionVar(v *Var, laterSets int) (span, bool) {
	switch {
	case v.isFunc && laterSets == 0:
		return v.Decl, true
	case !v.hasValue && laterSets == 1:
		for _, s := range v.sets {
			if !s.implicit {
				return s.at, true
			}
		}
	}
	return span{}, false
}

// closureUse is luacheck's graph of closures: a closure is used by its
// parent when it is anonymous, and by each closure reading the local it is
// the value of. Closures reachable from the main chunk, or from a function
// value nobody reads (whose own warning covers them), are in use; of the
// others, reported holds those on a cycle (luacheck's groups of mutually
// recursive functions, found as strongly connected components): a
// function only called from an unused recursive one is not reported, as
// fixing the recursive one fixes it.
type closureUse struct {
	reported map[*FunctionExpr]bool
	self     map[*FunctionExpr]bool // reads its own variable from its body
}

func closuresInUse(res *resolution) closureUse {
	edges := map[*FunctionExpr][]*FunctionExpr{}
	u := closureUse{reported: map[*FunctionExpr]bool{}, self: map[*FunctionExpr]bool{}}
	for _, fn := range res.funcs {
		if res.parentOf[fn] == nil {
			continue // the main chunk
		}
		v := res.funcValue[fn]
		if v == nil {
			edges[res.parentOf[fn]] = append(edges[res.parentOf[fn]], fn)
			continue
		}
		// A read from a closure nested in other closures of v's function
		// is, as luacheck resolves upvalues, a use by each of them.
		users := map[*FunctionExpr]bool{}
		for _, r := range v.reads {
			if r.circular {
				continue
			}
			for user := r.fn; user != nil && !users[user]; user = res.parentOf[user] {
				users[user] = true
				edges[user] = append(edges[user], fn)
				if user == fn {
					u.self[fn] = true
				}
				if user == v.Func || res.parentOf[user] == v.Func {
					break
				}
			}
		}
	}
	marked := map[*FunctionExpr]bool{}
	// mark walks iteratively: a chain of closures may be long
	mark := func(fn *FunctionExpr) {
		stack := []*FunctionExpr{fn}
		for len(stack) > 0 {
			fn := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if marked[fn] {
				continue
			}
			marked[fn] = true
			stack = append(stack, edges[fn]...)
		}
	}
	for _, fn := range res.funcs {
		if res.parentOf[fn] == nil {
			mark(fn)
		}
	}
	for fn, v := range res.funcValue {
		if len(v.reads) == 0 {
			mark(fn)
		}
	}
	for _, comp := range components(res.funcs, edges, marked) {
		if len(comp) > 1 || u.self[comp[0]] {
			for _, fn := range comp {
				u.reported[fn] = true
			}
		}
	}
	return u
}

// components returns the strongly connected components of the graph of
// the closures not in skip (Tarjan's algorithm, iterative, linear time).
func components(nodes []*FunctionExpr, edges map[*FunctionExpr][]*FunctionExpr, skip map[*FunctionExpr]bool) [][]*FunctionExpr {
	index := map[*FunctionExpr]int{}
	low := map[*FunctionExpr]int{}
	onStack := map[*FunctionExpr]bool{}
	var stack []*FunctionExpr
	var comps [][]*FunctionExpr
	type frame struct {
		fn   *FunctionExpr
		next int // the next edge of fn to follow
	}
	for _, root := range nodes {
		if skip[root] {
			continue
		}
		if _, seen := index[root]; seen {
			continue
		}
		calls := []frame{{fn: root}}
		index[root], low[root] = len(index), len(index)
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if out := edges[f.fn]; f.next < len(out) {
				w := out[f.next]
				f.next++
				if skip[w] {
					continue
				}
				if _, seen := index[w]; !seen {
					index[w], low[w] = len(index), len(index)
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{fn: w})
				} else if onStack[w] {
					low[f.fn] = min(low[f.fn], index[w])
				}
				continue
			}
			fn := f.fn
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				parent := calls[len(calls)-1].fn
				low[parent] = min(low[parent], low[fn])
			}
			if low[fn] == index[fn] {
				var comp []*FunctionExpr
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == fn {
						break
					}
				}
				comps = append(comps, comp)
			}
		}
	}
	return comps
}

// redefinedFormats are luacheck's messages for the 4xx codes.
var redefinedFormats = map[string]string{
	"411": "variable '%s' was previously defined on line %d",
	"412": "variable '%s' was previously defined as an argument on line %d",
	"413": "variable '%s' was previously defined as a loop variable on line %d",
	"421": "shadowing definition of variable '%s' on line %d",
	"422": "shadowing definition of argument '%s' on line %d",
	"423": "shadowing definition of loop variable '%s' on line %d",
	"431": "shadowing upvalue '%s' on line %d",
	"432": "shadowing upvalue argument '%s' on line %d",
	"433": "shadowing upvalue loop variable '%s' on line %d",
}

// RedefinedAnalyzer reports a local declared while another of the same name
// is visible: in the same scope (411–413), in an enclosing scope of the
// same function (421–423), or as an upvalue (431–433).
var RedefinedAnalyzer = &Analyzer{
	Name:  "redefined",
	Doc:   "locals that redefine or shadow another variable of the same name",
	Codes: []string{"411", "412", "413", "421", "422", "423", "431", "432", "433"},
	Run:   runRedefined,
}

func runRedefined(p *Pass) {
	for _, r := range p.res.redefs {
		if r.v.Name == "_" {
			continue
		}
		msg := fmt.Sprintf(redefinedFormats[r.code], r.v.Name, r.prev.Decl.Pos.Line)
		p.reportSpan(r.v.Decl, r.code, Warning, r.v.Name, msg)
	}
}
