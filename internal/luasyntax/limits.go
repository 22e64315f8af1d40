package luasyntax

import "fmt"

// Lua 5.1's per-function limits, which Redis's compiler enforces: active
// local variables (LUAI_MAXVARS) and upvalues (LUAI_MAXUPVALUES). The
// strict parse tracks scopes to report them as Lua does; the lenient one
// (luacheck's view) has no such limits.
const (
	maxLocals   = 200
	maxUpvalues = 60
)

// funcState is what the parser tracks per function being parsed.
type funcState struct {
	parent *funcState
	vararg bool
	loops  int // enclosing loops, for break
	// line is the line Lua names the function by (0 for the main chunk).
	line int
	// actives are the active local variables, innermost last, and upvals
	// the names the function takes from enclosing ones (strict parse only).
	actives []string
	upvals  map[string]bool
}

// limitFail raises Lua's error for a function over one of its limits.
func (p *parser) limitFail(fs *funcState, limit int, what string) {
	msg := fmt.Sprintf("main function has more than %d %s", limit, what)
	if fs.line != 0 {
		msg = fmt.Sprintf("function at line %d has more than %d %s", fs.line, limit, what)
	}
	p.failPlain(msg)
}

// declare registers the n-th (0-based) local variable of a declaration
// that is not active yet, checking the limit as Lua does at that point.
func (p *parser) declare(n int) {
	if p.strict && len(p.fs.actives)+n+1 > maxLocals {
		p.limitFail(p.fs, maxLocals, "local variables")
	}
}

// activate makes declared local variables visible.
func (p *parser) activate(names ...string) {
	if p.strict {
		p.fs.actives = append(p.fs.actives, names...)
	}
}

// scope and unscope bracket a block's local variables.
func (p *parser) scope() int { return len(p.fs.actives) }

func (p *parser) unscope(mark int) {
	if p.strict {
		p.fs.actives = p.fs.actives[:mark]
	}
}

// reference resolves a variable name as Lua does, making it an upvalue of
// every function between its use and the enclosing function declaring it.
func (p *parser) reference(name string) {
	if p.strict {
		p.resolve(p.fs, name)
	}
}

func (p *parser) resolve(fs *funcState, name string) bool {
	if fs == nil {
		return false
	}
	for i := len(fs.actives) - 1; i >= 0; i-- {
		if fs.actives[i] == name {
			return true
		}
	}
	if !p.resolve(fs.parent, name) {
		return false // a global
	}
	if !fs.upvals[name] {
		if len(fs.upvals)+1 > maxUpvalues {
			p.limitFail(fs, maxUpvalues, "upvalues")
		}
		if fs.upvals == nil {
			fs.upvals = map[string]bool{}
		}
		fs.upvals[name] = true
	}
	return true
}
