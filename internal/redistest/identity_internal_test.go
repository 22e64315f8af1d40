package redistest

import (
	"strings"
	"testing"
)

// A server that answers on the port but is not the process this helper
// started (another test run's, which took the port first) is not taken
// for it: waitReady compares process ids.
func TestWaitReadyRefusesAnotherProcess(t *testing.T) {
	srv := Standalone(t)
	srv.mu.Lock()
	pid := srv.cmd.Process.Pid
	srv.mu.Unlock()
	if err := srv.waitReady(make(chan struct{}), pid); err != nil {
		t.Fatalf("the server's own process: %v", err)
	}
	err := srv.waitReady(make(chan struct{}), pid+100000)
	if err == nil || !strings.Contains(err.Error(), "not the redis-server started as") {
		t.Fatalf("another process on the port: %v, want the mismatch named", err)
	}
}
