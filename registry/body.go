package registry

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

var parseErrPos = regexp.MustCompile(`line:(\d+)\(column:(\d+)\)`)

// body checks the Lua syntax (with the shebang turned into a comment, as
// Redis strips it before compiling) and every literal KEYS[i] and ARGV[i]
// index against the counts the header declares.
func (p *parser) body(s *Script) {
	chunk, err := parse.Parse(strings.NewReader(s.LegacySource()), s.File)
	if err != nil {
		line, col := 0, 0
		if m := parseErrPos.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			col, _ = strconv.Atoi(m[2])
		} else {
			line = strings.Count(s.Source, "\n") + 1 // gopher-lua says "at EOF"
		}
		msg := err.Error()
		if i := strings.LastIndex(msg, ":"); i >= 0 {
			msg = strings.TrimSpace(msg[i+1:])
		}
		near := ""
		if i := strings.Index(err.Error(), "near "); i >= 0 {
			near = " " + strings.TrimSpace(strings.SplitN(err.Error()[i:], ":", 2)[0])
		}
		e := p.errorf(line, "Lua %s%s; fix the syntax (scripts are Lua 5.1)", msg, near)
		e.Column = col
		return
	}
	w := indexWalker{p: p, s: s}
	w.stmts(chunk)
}

type indexWalker struct {
	p *parser
	s *Script
}

// check reports a literal KEYS[i] or ARGV[i] outside what the header declares.
func (w *indexWalker) check(e *ast.AttrGetExpr) {
	obj, ok := e.Object.(*ast.IdentExpr)
	if !ok || (obj.Value != "KEYS" && obj.Value != "ARGV") {
		return
	}
	num, ok := e.Key.(*ast.NumberExpr)
	if !ok {
		return
	}
	idx, err := strconv.ParseFloat(num.Value, 64)
	if err != nil {
		return
	}
	names, field, variadic := w.s.Keys, fieldKeys, w.s.Variadic&VariadicKeys != 0
	if obj.Value == "ARGV" {
		names, field, variadic = w.s.Args, fieldArgs, w.s.Variadic&VariadicArgs != 0
	}
	switch {
	case idx < 1 || idx != float64(int(idx)):
		w.p.errorf(e.Line(), "%s[%s] is never set: Lua tables passed by Redis start at index 1", obj.Value, num.Value)
	case int(idx) > len(names) && !variadic:
		declared := "none"
		if len(names) > 0 {
			declared = fmt.Sprintf("%d (%s)", len(names), strings.Join(names, ", "))
		}
		w.p.errorf(e.Line(), "%s[%d] is beyond the %s the header declares: %s; add a name to \"-- %s:\" or fix the index", obj.Value, int(idx), field, declared, field)
	}
}

func (w *indexWalker) stmts(list []ast.Stmt) {
	for _, st := range list {
		w.stmt(st)
	}
}

func (w *indexWalker) stmt(st ast.Stmt) {
	switch st := st.(type) {
	case *ast.AssignStmt:
		w.exprs(st.Lhs)
		w.exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		w.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		w.expr(st.Expr)
	case *ast.DoBlockStmt:
		w.stmts(st.Stmts)
	case *ast.WhileStmt:
		w.expr(st.Condition)
		w.stmts(st.Stmts)
	case *ast.RepeatStmt:
		w.expr(st.Condition)
		w.stmts(st.Stmts)
	case *ast.IfStmt:
		w.expr(st.Condition)
		w.stmts(st.Then)
		w.stmts(st.Else)
	case *ast.NumberForStmt:
		w.expr(st.Init)
		w.expr(st.Limit)
		w.expr(st.Step)
		w.stmts(st.Stmts)
	case *ast.GenericForStmt:
		w.exprs(st.Exprs)
		w.stmts(st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			w.expr(st.Name.Func)
			w.expr(st.Name.Receiver)
		}
		w.expr(st.Func)
	case *ast.ReturnStmt:
		w.exprs(st.Exprs)
	}
}

func (w *indexWalker) exprs(list []ast.Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w *indexWalker) expr(e ast.Expr) {
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		w.check(e)
		w.expr(e.Object)
		w.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			w.expr(f.Key)
			w.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		w.expr(e.Func)
		w.expr(e.Receiver)
		w.exprs(e.Args)
	case *ast.LogicalOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.StringConcatOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		w.expr(e.Lhs)
		w.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		w.expr(e.Expr)
	case *ast.FunctionExpr:
		w.stmts(e.Stmts)
	}
}
