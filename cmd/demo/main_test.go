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
	checkOutput(t, out.String())
}

// checkOutput checks what the demo says and its order: the locks API first
// (watchdog and fencing, a contended pair, fair mode), scripts and the
// simulator after.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	last := -1
	for _, want := range []string{
		"A mutex with a watchdog and a fencing token", "still held=true",
		"Two workers", "ErrNotAcquired: true", "woken by the release message", "larger than alice's; bob writes: accepted", "would be refused",
		"Fair mode", "worker 2 got it in its turn", "worker 3 got it in its turn", "3 acquisitions",
		"versioned Lua scripts", "mutex.acquire@", "lock.inspect@", "3 times",
		"simulator", "TryLock succeeds",
		"Fencing at the resource", "B locks it (token", "A wakes up and writes: fence:", "a newer holder took the lock",
		"Cleaned up",
	} {
		i := strings.Index(out, want)
		if i < 0 {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
		if i < last {
			t.Fatalf("%q comes out of order:\n%s", want, out)
		}
		last = i
	}
	// The claim about EVALSHA must match the count that follows it.
	if strings.Contains(out, "already a cheap EVALSHA") || (strings.Contains(out, "came back NOSCRIPT") == strings.Contains(out, "no NOSCRIPT fallback")) {
		t.Fatalf("the demo's EVALSHA claim does not match its NOSCRIPT count:\n%s", out)
	}
}

// On a user's server the demo leaves nothing behind and touches nothing
// it did not create.
func TestDemoOnRealServerCleansUp(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	if err := srv.Do(ctx, "SET", "users:data", "keep me").Err(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(ctx, srv.Addr, &out); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	checkOutput(t, out.String())
	if !strings.Contains(out.String(), "no NOSCRIPT fallback") {
		t.Errorf("after SCRIPT LOAD, a Redis 7 server needs no fallback:\n%s", out.String())
	}
	keys, err := srv.Do(ctx, "KEYS", "*").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "users:data" {
		t.Fatalf("after the demo the server has keys %q, want only the user's users:data", keys)
	}
}

func TestDemoReportsAnUnreachableServer(t *testing.T) {
	err := run(context.Background(), "127.0.0.1:1", &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "cannot reach 127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
}
