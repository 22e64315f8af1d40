package lockbench

import (
	"context"
	"testing"
)

// Every pile-up runs with a few callers, and what it reports adds up: the
// script runs cover at least one run per caller, and the server time and
// memory figures are positive.
func TestScaleWorkloadsAndBytes(t *testing.T) {
	needServer(t)
	addr, stop, err := StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	const n = 4
	for _, w := range ScaleWorkloads {
		r, err := RunScale(ctx, addr, w, n)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if r.ScriptRuns < n || r.ServerTime <= 0 || r.PerCall() <= 0 {
			t.Errorf("%s with %d callers: %d script runs, %v server time: want at least one run per caller", w, n, r.ScriptRuns, r.ServerTime)
		}
	}
	if _, err := RunScale(ctx, addr, "no-such-workload", n); err == nil {
		t.Error("an unknown workload ran")
	}
	for _, kind := range HoldKinds {
		b, err := BytesPerHeld(ctx, addr, kind, 1000) // enough that allocator noise cannot make the growth negative
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if b <= 0 {
			t.Errorf("%s: %.0f bytes per held lock", kind, b)
		}
	}
}
