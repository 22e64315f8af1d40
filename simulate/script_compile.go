package simulate

import (
	"fmt"
	"strings"

	"github.com/redlua/redlua/internal/luasyntax"
	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// concatFn is the global through which rewritten ".." operators run, so
// that numbers are formatted as Lua 5.1 formats them ("%.14g").
const concatFn = "__redlua_concat"

// compileLua parses and compiles src as a Lua 5.1 chunk called name.
// gopher-lua accepts a little Lua 5.2 syntax (goto and labels) that Redis's
// Lua 5.1 rejects; those are reported as Lua 5.1 reports them.
func compileLua(src, name string) (*lua.FunctionProto, error) {
	if line, deep := tooDeep(src); deep {
		return nil, fmt.Errorf("%s:%d: %s", name, line, errSyntaxLevels)
	}
	if msg, nested := nestedLongBracket(src, name); nested {
		return nil, fmt.Errorf("%s", msg)
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, fmt.Errorf("%s", parseErrorText(err, name))
	}
	rw := &rewriter{}
	rw.block(chunk, map[string]bool{})
	if rw.err != "" {
		return nil, fmt.Errorf("%s:%d: %s", name, rw.errLine, rw.err)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return proto, nil
}

// nestedLongBracket reports Lua's error for a "[[" inside a "[[...]]"
// string or comment when it is the first syntax error of src: every
// upstream Redis and Valkey builds Lua 5.1 with LUA_COMPAT_LSTR 1, which
// refuses it ("nesting of [[...]] is deprecated near '['"), while
// gopher-lua reads it as text. Any other first error is gopher-lua's to
// report.
func nestedLongBracket(src, name string) (string, bool) {
	if !strings.Contains(src, "[[") || strings.HasPrefix(src, "#") {
		// luasyntax skips a first "#!" line, which a chunk keeps.
		return "", false
	}
	e := luasyntax.CheckLua51(name, []byte(src))
	if e == nil || !strings.HasPrefix(e.LuaMsg, "nesting of [[...]] is deprecated") {
		return "", false
	}
	return e.LuaText(name), true
}

// parseErrorText turns gopher-lua's parse error into Lua 5.1's shape,
// "name:line: message near 'token'". The wording of the message itself
// can differ from Lua's (a documented difference of the simulator).
func parseErrorText(err error, name string) string {
	pe, ok := err.(*parse.Error)
	if !ok {
		return fmt.Sprintf("%s: %v", name, err)
	}
	msg := pe.Message
	if msg == "syntax error" {
		msg = "unexpected symbol"
	}
	if pe.Pos.Line == parse.EOF {
		return fmt.Sprintf("%s:%d: %s near '<eof>'", name, pe.Pos.Line, msg)
	}
	return fmt.Sprintf("%s:%d: %s near '%s'", name, pe.Pos.Line, msg, pe.Token)
}

// rewriter walks a chunk once: it rejects goto and labels, and turns each
// "a .. b" into __redlua_concat(a, b, what_a, what_b), where what_x names
// the operand ("local 'x'", "global 'x'", "field 'x'") for the error
// message, as Lua 5.1's "attempt to concatenate local 'x' (a nil value)".
type rewriter struct {
	err     string
	errLine int
}

func (rw *rewriter) fail(line int, msg string) {
	if rw.err == "" {
		rw.err, rw.errLine = msg, line
	}
}

func (rw *rewriter) block(stmts []ast.Stmt, locals map[string]bool) {
	for _, st := range stmts {
		rw.stmt(st, locals)
	}
}

func (rw *rewriter) stmt(st ast.Stmt, locals map[string]bool) {
	switch s := st.(type) {
	case *ast.GotoStmt:
		// In Lua 5.1 "goto" is a plain name, so "goto label" is an
		// expression statement missing its "=".
		rw.fail(s.Line(), fmt.Sprintf("'=' expected near '%s'", s.Label))
	case *ast.LabelStmt:
		rw.fail(s.Line(), "unexpected symbol near ':'")
	case *ast.AssignStmt:
		rw.exprs(s.Lhs, locals)
		rw.exprs(s.Rhs, locals)
	case *ast.LocalAssignStmt:
		rw.exprs(s.Exprs, locals)
		for _, n := range s.Names {
			locals[n] = true
		}
	case *ast.FuncCallStmt:
		s.Expr = rw.expr(s.Expr, locals)
	case *ast.DoBlockStmt:
		rw.block(s.Stmts, locals)
	case *ast.WhileStmt:
		s.Condition = rw.expr(s.Condition, locals)
		rw.block(s.Stmts, locals)
	case *ast.RepeatStmt:
		rw.block(s.Stmts, locals)
		s.Condition = rw.expr(s.Condition, locals)
	case *ast.IfStmt:
		s.Condition = rw.expr(s.Condition, locals)
		rw.block(s.Then, locals)
		rw.block(s.Else, locals)
	case *ast.NumberForStmt:
		s.Init = rw.expr(s.Init, locals)
		s.Limit = rw.expr(s.Limit, locals)
		if s.Step != nil {
			s.Step = rw.expr(s.Step, locals)
		}
		locals[s.Name] = true
		rw.block(s.Stmts, locals)
	case *ast.GenericForStmt:
		rw.exprs(s.Exprs, locals)
		for _, n := range s.Names {
			locals[n] = true
		}
		rw.block(s.Stmts, locals)
	case *ast.FuncDefStmt:
		if s.Name.Func != nil {
			s.Name.Func = rw.expr(s.Name.Func, locals)
		}
		if s.Name.Receiver != nil {
			s.Name.Receiver = rw.expr(s.Name.Receiver, locals)
		}
		rw.function(s.Func, locals)
	case *ast.ReturnStmt:
		rw.exprs(s.Exprs, locals)
	}
}

func (rw *rewriter) exprs(es []ast.Expr, locals map[string]bool) {
	for i := range es {
		es[i] = rw.expr(es[i], locals)
	}
}

func (rw *rewriter) function(f *ast.FunctionExpr, outer map[string]bool) {
	// Names are only told apart for error messages, so one flat scope per
	// function (inheriting the enclosing function's names) is enough.
	locals := make(map[string]bool, len(outer)+len(f.ParList.Names))
	for n := range outer {
		locals[n] = true
	}
	for _, n := range f.ParList.Names {
		locals[n] = true
	}
	if f.ParList.HasVargs {
		locals["arg"] = true
	}
	rw.block(f.Stmts, locals)
}

func (rw *rewriter) expr(e ast.Expr, locals map[string]bool) ast.Expr {
	switch x := e.(type) {
	case *ast.StringConcatOpExpr:
		lhs, rhs := rw.expr(x.Lhs, locals), rw.expr(x.Rhs, locals)
		call := &ast.FuncCallExpr{
			Func: &ast.IdentExpr{Value: concatFn},
			Args: []ast.Expr{lhs, rhs, describe(x.Lhs, locals), describe(x.Rhs, locals)},
		}
		call.SetLine(x.Line())
		call.SetLastLine(x.LastLine())
		call.Func.SetLine(x.Line())
		call.Func.SetLastLine(x.Line())
		return call
	case *ast.AttrGetExpr:
		x.Object = rw.expr(x.Object, locals)
		x.Key = rw.expr(x.Key, locals)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			if f.Key != nil {
				f.Key = rw.expr(f.Key, locals)
			}
			f.Value = rw.expr(f.Value, locals)
		}
	case *ast.FuncCallExpr:
		if x.Func != nil {
			x.Func = rw.expr(x.Func, locals)
		}
		if x.Receiver != nil {
			x.Receiver = rw.expr(x.Receiver, locals)
		}
		rw.exprs(x.Args, locals)
	case *ast.LogicalOpExpr:
		x.Lhs, x.Rhs = rw.expr(x.Lhs, locals), rw.expr(x.Rhs, locals)
	case *ast.RelationalOpExpr:
		x.Lhs, x.Rhs = rw.expr(x.Lhs, locals), rw.expr(x.Rhs, locals)
	case *ast.ArithmeticOpExpr:
		x.Lhs, x.Rhs = rw.expr(x.Lhs, locals), rw.expr(x.Rhs, locals)
	case *ast.UnaryMinusOpExpr:
		x.Expr = rw.expr(x.Expr, locals)
	case *ast.UnaryNotOpExpr:
		x.Expr = rw.expr(x.Expr, locals)
	case *ast.UnaryLenOpExpr:
		x.Expr = rw.expr(x.Expr, locals)
	case *ast.FunctionExpr:
		rw.function(x, locals)
	}
	return e
}

// describe names an operand the way Lua 5.1's error messages do, or
// returns an empty string when Lua would not name it.
func describe(e ast.Expr, locals map[string]bool) ast.Expr {
	var s string
	switch x := e.(type) {
	case *ast.IdentExpr:
		if locals[x.Value] {
			s = "local '" + x.Value + "'"
		} else {
			s = "global '" + x.Value + "'"
		}
	case *ast.AttrGetExpr:
		if k, ok := x.Key.(*ast.StringExpr); ok {
			s = "field '" + k.Value + "'"
		}
	}
	out := &ast.StringExpr{Value: s}
	out.SetLine(e.Line())
	out.SetLastLine(e.LastLine())
	return out
}

// luaConcat implements the rewritten "..": strings and numbers join with
// Lua 5.1's number formatting; otherwise the __concat metamethod runs, or
// the error names the offending operand as Lua 5.1 does.
func luaConcat(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	if sa, ok := concatString(a); ok {
		if sb, ok := concatString(b); ok {
			L.CheckStringSize(int64(len(sa)) + int64(len(sb)))
			L.Push(lua.LString(sa + sb))
			return 1
		}
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == lua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if fn, ok := mm.(*lua.LFunction); ok {
		L.Push(fn)
		L.Push(a)
		L.Push(b)
		L.CallAsInstruction(2, 1)
		return 1
	}
	bad, what := a, L.ToString(3)
	if _, ok := concatString(a); ok {
		bad, what = b, L.ToString(4)
	}
	if what != "" {
		L.RaiseError("attempt to concatenate %s (a %s value)", what, bad.Type().String())
	}
	L.RaiseError("attempt to concatenate a %s value", bad.Type().String())
	return 0
}

func concatString(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return formatLuaNumber(float64(x)), true
	}
	return "", false
}
