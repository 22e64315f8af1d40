// Package ctxcheck helps the packages' tests prove that every exported call
// taking a context refuses a nil or ended one without panicking: it lists
// those calls from a package's source, so that a table test fails when a
// new one is not in its table, and turns a panic into an error.
package ctxcheck

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
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

// Check runs every call of table, named as Calls names them, with a nil
// context and with a cancelled one: the first must fail with an error that
// says the context is nil and names context.Background() as the fix, the
// second with one that wraps context.Canceled; neither may panic. It fails
// at once when table does not cover exactly the calls of dir that take a
// context, so a new call needs a row.
func Check(t testing.TB, dir string, table map[string]func(context.Context) error) {
	t.Helper()
	CheckCleanup(t, dir, table)
}

// CheckCleanup is Check for a package with cleanup calls, such as an
// Unlock, that must do their work whatever the caller's context (a
// deferred Unlock runs after the request's context ended more often than
// not): each name in cleanup must refuse a nil context as Check says, and
// with a cancelled one it must succeed (return nil).
func CheckCleanup(t testing.TB, dir string, table map[string]func(context.Context) error, cleanup ...string) {
	t.Helper()
	found, err := Calls(dir)
	if err != nil {
		t.Fatal(err)
	}
	covered := make([]string, 0, len(table))
	for name := range table {
		covered = append(covered, name)
	}
	sort.Strings(covered)
	if strings.Join(found, " ") != strings.Join(covered, " ") {
		t.Fatalf("the calls that take a context are\n\t%v\nbut the table covers\n\t%v\nadd the new ones to the table", found, covered)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	var nilCtx context.Context
	for _, name := range covered {
		call := table[name]
		err := NoPanic(name, func() error { return call(nilCtx) })
		if err == nil || !strings.Contains(err.Error(), "nil context") || !strings.Contains(err.Error(), "context.Background()") {
			t.Errorf("%s with a nil context = %v, want an error saying the context is nil and what to pass", name, err)
		}
		err = NoPanic(name, func() error { return call(cancelled) })
		if slices.Contains(cleanup, name) {
			if err != nil {
				t.Errorf("%s with a cancelled context = %v, want nil: it is cleanup, which must do its work whatever the caller's context", name, err)
			}
			continue
		}
		if !errors.Is(err, context.Canceled) || strings.Contains(fmt.Sprint(err), "nil context") {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", name, err)
		}
	}
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
