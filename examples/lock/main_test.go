package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/redlua/redlua/internal/redistest"
)

// The README shows this program from its package clause on; a change to
// either must reach the other.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	program := string(src[strings.Index(string(src), "package main"):])
	block := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no go code block")
	}
	if string(block[1]) != program {
		t.Fatalf("README.md's first go block differs from examples/lock/main.go (from its package clause); copy one to the other:\n%s", block[1])
	}
	if line := strings.Count(string(readme[:strings.Index(string(readme), string(block[1]))]), "\n") + 1; line+strings.Count(program, "\n") > 40 {
		t.Errorf("the example ends on README line %d; keep it within the first 40", line+strings.Count(program, "\n"))
	}
}

// The program runs against a real server and holds the lock.
func TestProgramRuns(t *testing.T) {
	srv := redistest.Standalone(t)
	cmd := exec.Command("go", "run", ".")
	cmd.Env = append(os.Environ(), "REDIS_ADDR="+srv.Addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`holding invoice:42 with fencing token [1-9][0-9]* work ctx err: <nil>`).Match(out) {
		t.Fatalf("unexpected output:\n%s", out)
	}
}
