package lockbench

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCallgrindSummary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "callgrind.out.1")
	dump := "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd: redis-server\npart: 1\n\npositions: line\nevents: Ir\nsummary: 175126\n\nfl=(1) server.c\nfn=(1) main\n16 4\ntotals: 175126\n"
	if err := os.WriteFile(path, []byte(dump), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := callgrindSummary(path)
	if err != nil || got != 175126 {
		t.Fatalf("callgrindSummary = %v, %v; want 175126", got, err)
	}
	if err := os.WriteFile(path, []byte("events: Ir\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := callgrindSummary(path); err == nil {
		t.Fatal("a dump without a summary line gave no error")
	}
}
