package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// The README's example refuses the paused holder's write.
func TestExample(t *testing.T) {
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	var out bytes.Buffer
	_, _ = io.Copy(&out, r)
	got := out.String()
	if !strings.Contains(got, "B writes: <nil>") || !strings.Contains(got, "A writes: fence: \"job-1\": token") {
		t.Fatalf("the example printed:\n%s", got)
	}
	t.Log(got)
}
