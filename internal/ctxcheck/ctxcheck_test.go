package ctxcheck

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCalls(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import "context"

type T struct{}
type hidden struct{}

func A(ctx context.Context) error          { return nil }
func B(n int) error                         { return nil }
func (T) M(ctx context.Context) error       { return nil }
func (*T) N(x int, c context.Context) error { return nil }
func (hidden) O(ctx context.Context) error  { return nil }
func c(ctx context.Context) error           { return nil }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nimport \"context\"\n\nfunc Z(ctx context.Context) {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Calls(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A", "T.M", "T.N"}; !slices.Equal(got, want) {
		t.Fatalf("Calls = %v, want %v", got, want)
	}
}

func TestNoPanic(t *testing.T) {
	if err := NoPanic("f", func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "f panicked: boom") {
		t.Fatalf("NoPanic of a panic = %v", err)
	}
	want := errors.New("plain")
	if err := NoPanic("g", func() error { return want }); err != want {
		t.Fatalf("NoPanic passed back %v, want %v", err, want)
	}
}
