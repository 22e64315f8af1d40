package main

import (
	"context"
	"strings"
	"testing"

	"github.com/redlua/redlua/internal/redistest"
)

func TestDemoOnMiniredis(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), "", &out); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{"embedded miniredis", "alice asks first: acquired=true, fencing token 1", "bob asks next: acquired=false", "bob asks again: acquired=true, fencing token 2", "answers 0",
		"still holds it: true", "worker 2 got it in its turn", "0 leases lost"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDemoOnRealServer(t *testing.T) {
	srv := redistest.Standalone(t)
	var out strings.Builder
	if err := run(context.Background(), srv.Addr, &out); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "woken at once") {
		t.Errorf("the release message did not wake bob:\n%s", out.String())
	}
}

func TestDemoReportsAnUnreachableServer(t *testing.T) {
	err := run(context.Background(), "127.0.0.1:1", &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "cannot reach 127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
}
