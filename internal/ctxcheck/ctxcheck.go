// Package ctxcheck helps the packages' tests prove that every exported call
// taking a context refuses a nil or ended one without panicking: it lists
// those calls from a package's source, so that a table test fails when a
// new one is not in its table, and turns a panic into an error.
package ctxcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Calls lists, from the Go files of dir (tests excluded), every exported
// function and every exported method of an exported type that takes a
// context.Context, as "Func" or "Type.Method", sorted.
func Calls(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || !takesContext(fn.Type) {
				continue
			}
			if fn.Recv == nil {
				out = append(out, fn.Name.Name)
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
				out = append(out, id.Name+"."+fn.Name.Name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// takesContext reports whether a parameter has the type context.Context.
func takesContext(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "context" {
				return true
			}
		}
	}
	return false
}

// NoPanic runs call and turns a panic into an error naming it.
func NoPanic(name string, call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", name, p)
		}
	}()
	return call()
}
