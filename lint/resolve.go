package lint

import "github.com/redlua/redlua/internal/luasyntax"

// Name resolution: which NameExpr refers to which local, which are
// globals, and which declarations shadow others. The unused, redefined and
// globals analyzers read what this records.

// VarKind tells what declared a local variable.
type VarKind int

// Kinds of local variables, as luacheck distinguishes them in its codes.
const (
	LocalVar VarKind = iota
	ArgVar
	LoopVar
	SelfVar   // the implicit self of a method
	VarargVar // the ... of a function
)

// Var is one local variable (a declaration, not a name).
type Var struct {
	Name string
	Kind VarKind
	Decl span
	// Func is the function declaring it.
	Func *FunctionExpr

	scope *scope
	// isFunc: declared by "local function" or with a single function value.
	isFunc bool
	// hasValue: declared with a value (locals with "=", arguments and loop
	// variables always have one).
	hasValue bool
	reads    []*access
	sets     []*setSite
	mutated  bool
	// onlyTables: every value it is given is a table constructor, so a
	// mutation can only matter through a later read (W241).
	onlyTables bool
	// hidden: the local "arg" Lua 5.1 declares in every vararg function
	// (LUA_COMPAT_VARARG, on in Redis); never reported, not in
	// resolution.vars, and reading it reads the function's "...".
	hidden bool
	// dots is the "..." of the function a hidden "arg" belongs to.
	dots *Var
}

// access is one read of a variable.
type access struct {
	node *NameExpr
	fn   *FunctionExpr
	// recursive: a local function reading itself from its own body
	recursive bool
	// circular: a read in "t.k = ... t ..." (see circularTarget), which
	// luacheck does not count as an access of t's value
	circular bool
}

// setSite is one value given to a local: its declaration value or an
// assignment.
type setSite struct {
	v    *Var
	at   span
	fn   *FunctionExpr
	used bool
	// implicit: the value a declaration gives without "=" (nil), an
	// argument's or a loop variable's; it is never reported as unused, but
	// whether any value reaches a read decides "accessed" (a read only in
	// unreachable code is no access, as in luacheck).
	implicit bool
	// after is the offset once the assignment has happened (the end of its
	// statement: closures created on its right-hand side come before it)
	after int
	// overwrittenBy is the assignment that replaces an unused value on
	// every path, when there is one.
	overwrittenBy *setSite
}

type scope struct {
	parent *scope
	fn     *FunctionExpr
	vars   []*Var // in declaration order, the hidden "arg" included
}

// globalUse is one reference to a global variable.
type globalUse struct {
	name string
	node *NameExpr
	kind globalKind
	// field chain for field reads/writes of a global ("call" in redis.call,
	// "call.x" for redis.call.x = 1); fieldKnown is false for a computed key.
	field      []string
	fieldKnown bool
}

type globalKind int

const (
	globalRead globalKind = iota
	globalSet
	globalMutate    // assignment to a field: g.x = 1
	globalFieldRead // g.x read
)

// redefinition is a local declared while another of the same name is
// visible.
type redefinition struct {
	v, prev *Var
	code    string
}

type resolution struct {
	// funcValue maps a closure to the local it is the value of (local
	// function f, local f = function, f = function), for luacheck's graph
	// of which closures use which.
	funcValue map[*FunctionExpr]*Var
	vars      []*Var
	globals   []globalUse
	redefs    []redefinition
	sets      map[*NameExpr]*setSite
	funcs     []*FunctionExpr
	parentOf  map[*FunctionExpr]*FunctionExpr
	// refs maps each name that refers to a local to that local; names
	// not in it are globals.
	refs map[*NameExpr]*Var
	// selfName is the implicit self parameter of each method, given its
	// value (an implicit set) where the function starts.
	selfName map[*FunctionExpr]*NameExpr
	// circular holds the reads that are no access (access.circular).
	circular map[*NameExpr]bool
}

// varOf is the local n refers to, or nil for a global.
func (res *resolution) varOf(n *NameExpr) *Var { return res.refs[n] }

type resolver struct {
	stmtEnd int // end offset of the statement being resolved
	res     *resolution
	sc      *scope
	fn      *FunctionExpr
	selfFns map[*Var]*FunctionExpr // local functions whose body is being walked
	// visible maps a name to the locals of that name in scope, innermost
	// last: lookups take constant time however many locals a chunk has.
	visible map[string][]*Var
	// circ are the variables whose reads in the statement being resolved
	// (and in closures created there) are circular (see circularTarget).
	circ []*Var
}

func resolve(f *File) *resolution {
	r := &resolver{
		res: &resolution{
			sets: map[*NameExpr]*setSite{}, parentOf: map[*FunctionExpr]*FunctionExpr{}, funcValue: map[*FunctionExpr]*Var{},
			refs: map[*NameExpr]*Var{}, selfName: map[*FunctionExpr]*NameExpr{}, circular: map[*NameExpr]bool{},
		},
		visible: map[string][]*Var{},
	}
	r.function(f.Main, nil)
	return r.res
}

// lookup is the local a name refers to, nil for a global.
func (r *resolver) lookup(name string) *Var {
	if vs := r.visible[name]; len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return nil
}

// lookupDeclared is lookup passing over the hidden "arg", which luacheck
// does not know: redefinitions are judged against the declared locals.
func (r *resolver) lookupDeclared(name string) *Var {
	vs := r.visible[name]
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].hidden {
			return vs[i]
		}
	}
	return nil
}

func (r *resolver) push() { r.sc = &scope{parent: r.sc, fn: r.fn} }

// pop leaves the current scope: its locals are no longer visible.
func (r *resolver) pop() {
	for i := len(r.sc.vars) - 1; i >= 0; i-- {
		name := r.sc.vars[i].Name
		vs := r.visible[name]
		if len(vs) == 1 {
			delete(r.visible, name)
		} else {
			r.visible[name] = vs[:len(vs)-1]
		}
	}
	r.sc = r.sc.parent
}

// bind makes v visible in the current scope.
func (r *resolver) bind(v *Var) {
	r.sc.vars = append(r.sc.vars, v)
	r.visible[v.Name] = append(r.visible[v.Name], v)
}

// declare adds a local to the current scope, noting what it redefines.
func (r *resolver) declare(n *NameExpr, kind VarKind) *Var {
	v := &Var{Name: n.Name, Kind: kind, Decl: n.Span, Func: r.fn, scope: r.sc}
	r.res.refs[n] = v
	if prev := r.lookupDeclared(n.Name); prev != nil && kind != VarargVar {
		var code string
		series := map[VarKind]string{LocalVar: "1", ArgVar: "2", SelfVar: "2", LoopVar: "3"}[prev.Kind]
		switch {
		case prev.scope == r.sc:
			code = "41" + series
		case prev.Func == r.fn:
			code = "42" + series
		default:
			code = "43" + series
		}
		r.res.redefs = append(r.res.redefs, redefinition{v: v, prev: prev, code: code})
	}
	r.bind(v)
	r.res.vars = append(r.res.vars, v)
	return v
}

// addImplicit records a declaration's implicit value at n.
func (r *resolver) addImplicit(v *Var, n *NameExpr) {
	s := r.addSet(v, n)
	s.implicit = true
}

func (r *resolver) addSet(v *Var, n *NameExpr) *setSite {
	s := &setSite{v: v, at: n.Span, fn: r.fn, after: max(r.stmtEnd, n.End)}
	v.sets = append(v.sets, s)
	r.res.sets[n] = s
	return s
}

func (r *resolver) function(fn *FunctionExpr, self *span) {
	r.res.parentOf[fn] = r.fn
	r.res.funcs = append(r.res.funcs, fn)
	outerFn := r.fn
	r.fn = fn
	r.push()
	if self != nil {
		n := &NameExpr{Span: *self, Name: "self"}
		v := r.declare(n, SelfVar)
		v.hasValue = true
		r.addImplicit(v, n)
		r.res.selfName[fn] = n
	}
	for _, p := range fn.Params {
		v := r.declare(p, ArgVar)
		v.hasValue = true
		r.addImplicit(v, p)
	}
	if fn.IsVararg && fn.VarargAt.End > 0 {
		v := r.declare(&NameExpr{Span: fn.VarargAt, Name: "..."}, VarargVar)
		v.hasValue = true
		if outerFn != nil {
			// Lua 5.1 compiled with LUA_COMPAT_VARARG, as Redis is, gives
			// every vararg function (not the main chunk) a local "arg"
			// holding its extra arguments, declared after the parameters.
			r.bind(&Var{Name: "arg", Kind: ArgVar, Decl: fn.VarargAt, Func: fn, scope: r.sc, hasValue: true, hidden: true, dots: v})
		}
	}
	r.stmts(fn.Body.Stmts)
	r.pop()
	r.fn = outerFn
}

func (r *resolver) block(b *Block) {
	r.push()
	r.stmts(b.Stmts)
	r.pop()
}

func (r *resolver) stmts(list []Stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r *resolver) stmt(s Stmt) {
	outer := r.stmtEnd
	r.stmtEnd = s.EndOffset()
	defer func() { r.stmtEnd = outer }()
	switch s := s.(type) {
	case *LocalStmt:
		for _, e := range s.Exprs {
			r.expr(e)
		}
		for i, n := range s.Names {
			v := r.declare(n, LocalVar)
			// a name beyond the values (and not filled by a call or ...)
			// is declared without one: "local a, b, c = 1, 2" leaves c nil
			filled := i < len(s.Exprs) || len(s.Exprs) > 0 && isMulti(s.Exprs[len(s.Exprs)-1])
			if !filled {
				r.addImplicit(v, n)
			}
			if filled {
				v.hasValue = true
				r.addSet(v, n)
				if i < len(s.Exprs) {
					_, v.onlyTables = s.Exprs[i].(*TableExpr)
				}
				if len(s.Names) == 1 && len(s.Exprs) == 1 {
					if fn, ok := s.Exprs[0].(*FunctionExpr); ok {
						v.isFunc = true
						r.res.funcValue[fn] = v
					}
				}
			}
		}
	case *LocalFunctionStmt:
		v := r.declare(s.Name, LocalVar)
		v.hasValue, v.isFunc = true, true
		r.addSet(v, s.Name)
		if r.selfFns == nil {
			r.selfFns = map[*Var]*FunctionExpr{}
		}
		r.selfFns[v] = s.Func
		r.res.funcValue[s.Func] = v
		r.function(s.Func, nil)
		delete(r.selfFns, v)
	case *FunctionStmt:
		var self *span
		if s.Func.IsMethod {
			ix := s.Target.(*IndexExpr)
			at := spanAt(ix.Key.Start(), ix.Key.EndOffset())
			// luacheck places self on the ':' before the method name
			at.Pos.Col--
			at.Pos.Offset--
			at.End = at.Pos.Offset
			self = &at
		}
		r.target(s.Target)
		if n, ok := s.Target.(*NameExpr); ok && r.res.varOf(n) != nil {
			// "local f; function f() end": f's value is this closure
			r.res.funcValue[s.Func] = r.res.varOf(n)
		}
		r.function(s.Func, self)
	case *AssignStmt:
		if v := r.circularTarget(s); v != nil {
			r.circ = append(r.circ, v)
			defer func(n int) { r.circ = r.circ[:n] }(len(r.circ) - 1)
		}
		for _, e := range s.Exprs {
			r.expr(e)
		}
		for i, t := range s.Targets {
			r.target(t)
			if n, ok := t.(*NameExpr); ok && r.res.varOf(n) != nil && i < len(s.Exprs) {
				if fn, ok := s.Exprs[i].(*FunctionExpr); ok {
					r.res.funcValue[fn] = r.res.varOf(n)
				}
			}
			if n, ok := t.(*NameExpr); ok && r.res.varOf(n) != nil {
				if i >= len(s.Exprs) {
					r.res.varOf(n).onlyTables = false
				} else if _, ok := s.Exprs[i].(*TableExpr); !ok {
					r.res.varOf(n).onlyTables = false
				}
			}
		}
	case *CallStmt:
		r.expr(s.Call)
	case *DoStmt:
		r.block(s.Body)
	case *WhileStmt:
		r.expr(s.Cond)
		r.block(s.Body)
	case *RepeatStmt:
		// the condition sees the body's locals
		r.push()
		r.stmts(s.Body.Stmts)
		r.expr(s.Cond)
		r.pop()
	case *IfStmt:
		for i, c := range s.Conds {
			r.expr(c)
			r.block(s.Blocks[i])
		}
		if s.Else != nil {
			r.block(s.Else)
		}
	case *NumForStmt:
		r.expr(s.Init)
		r.expr(s.Limit)
		if s.Step != nil {
			r.expr(s.Step)
		}
		// loop variables share the body's scope (luacheck's 413, not 423)
		r.push()
		lv := r.declare(s.Var, LoopVar)
		lv.hasValue = true
		r.addImplicit(lv, s.Var)
		r.stmts(s.Body.Stmts)
		r.pop()
	case *GenForStmt:
		for _, e := range s.Exprs {
			r.expr(e)
		}
		r.push()
		for _, n := range s.Vars {
			lv := r.declare(n, LoopVar)
			lv.hasValue = true
			r.addImplicit(lv, n)
		}
		r.stmts(s.Body.Stmts)
		r.pop()
	case *ReturnStmt:
		for _, e := range s.Exprs {
			r.expr(e)
		}
	}
}

// target resolves an assignment target.
func (r *resolver) target(t Expr) {
	switch t := t.(type) {
	case *NameExpr:
		if v := r.lookup(t.Name); v != nil {
			r.res.refs[t] = v
			r.addSet(v, t)
			return
		}
		r.res.globals = append(r.res.globals, globalUse{name: t.Name, node: t, kind: globalSet})
	case *IndexExpr:
		root, fields, known := indexChain(t)
		if n, ok := root.(*NameExpr); ok {
			if v := r.lookup(n.Name); v != nil {
				r.res.refs[n] = v
				v.mutated = true
			} else {
				r.res.globals = append(r.res.globals, globalUse{name: n.Name, node: n, kind: globalMutate, field: fields, fieldKnown: known})
			}
		} else {
			r.expr(root)
		}
		r.indexKeys(t)
	}
}

// indexChain unwinds a.b.c into its root and constant field names; known
// is false when some key is not a constant string.
func indexChain(e Expr) (root Expr, fields []string, known bool) {
	known = true
	for {
		ix, ok := e.(*IndexExpr)
		if !ok {
			break
		}
		if s, ok := ix.Key.(*StringExpr); ok {
			fields = append([]string{s.Value}, fields...)
		} else {
			fields = append([]string{"?"}, fields...)
			known = false
		}
		e = ix.Obj
	}
	return e, fields, known
}

// indexKeys resolves the key expressions of an index chain.
func (r *resolver) indexKeys(e Expr) {
	for {
		ix, ok := e.(*IndexExpr)
		if !ok {
			return
		}
		if _, isConst := ix.Key.(*StringExpr); !isConst {
			r.expr(ix.Key)
		}
		e = ix.Obj
	}
}

func (r *resolver) read(n *NameExpr) {
	v := r.lookup(n.Name)
	if v == nil {
		r.res.globals = append(r.res.globals, globalUse{name: n.Name, node: n, kind: globalRead})
		return
	}
	r.res.refs[n] = v
	a := &access{node: n, fn: r.fn}
	// a read straight from its own body (not from a closure inside it,
	// which may escape) is a recursive call, as luacheck counts them
	if fn, ok := r.selfFns[v]; ok && r.fn == fn {
		a.recursive = true
	}
	for _, c := range r.circ {
		if c == v {
			a.circular = true
			r.res.circular[n] = true
		}
	}
	v.reads = append(v.reads, a)
	if v.hidden {
		// "arg" holds the extra arguments: reading it uses "..."
		v.dots.reads = append(v.dots.reads, &access{fn: r.fn})
	}
}

// circularTarget is the variable t of an assignment "t.k = v, ..." in
// which neither the first target nor the first value contains a call
// (function bodies aside): luacheck 1.1 does not count the reads of t in
// such a statement, or in closures created there, as accesses of t's
// value (its is_circular_reference), so "local Q = {} Q.__index = Q"
// leaves Q mutated but never accessed (W241).
func (r *resolver) circularTarget(s *AssignStmt) *Var {
	if len(s.Targets) == 0 || len(s.Exprs) == 0 {
		return nil
	}
	ix, ok := s.Targets[0].(*IndexExpr)
	if !ok {
		return nil
	}
	n, ok := ix.Obj.(*NameExpr)
	if !ok || containsCall(ix) || containsCall(s.Exprs[0]) {
		return nil
	}
	return r.lookup(n.Name)
}

// containsCall reports whether e calls a function outside the bodies of
// the functions it creates.
func containsCall(e Expr) bool {
	found := false
	luasyntax.WalkExpr(e, func(e Expr) bool {
		switch e.(type) {
		case *CallExpr, *MethodCallExpr:
			found = true
		case *FunctionExpr:
			return false
		}
		return !found
	})
	return found
}

func (r *resolver) expr(e Expr) {
	switch e := e.(type) {
	case *NameExpr:
		r.read(e)
	case *IndexExpr:
		root, fields, known := indexChain(e)
		if n, ok := root.(*NameExpr); ok && r.lookup(n.Name) == nil {
			r.res.globals = append(r.res.globals, globalUse{name: n.Name, node: n, kind: globalFieldRead, field: fields, fieldKnown: known})
			r.indexKeys(e)
			return
		}
		r.expr(e.Obj)
		r.expr(e.Key)
	case *CallExpr:
		r.expr(e.Fn)
		for _, a := range e.Args {
			r.expr(a)
		}
	case *MethodCallExpr:
		r.expr(e.Obj)
		for _, a := range e.Args {
			r.expr(a)
		}
	case *FunctionExpr:
		r.function(e, nil)
	case *TableExpr:
		for _, it := range e.Items {
			if it.Key != nil {
				r.expr(it.Key)
			}
			r.expr(it.Value)
		}
	case *BinaryExpr:
		r.expr(e.L)
		r.expr(e.R)
	case *UnaryExpr:
		r.expr(e.X)
	case *ParenExpr:
		r.expr(e.X)
	case *VarargExpr:
		if v := r.lookup("..."); v != nil && v.Func == r.fn {
			v.reads = append(v.reads, &access{fn: r.fn})
		}
	}
}
