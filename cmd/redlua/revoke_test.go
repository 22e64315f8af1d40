package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// stamps reads "<what> <unix ns>" lines of a log into a map.
func stamps(t *testing.T, path string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = ns
		}
	}
	return out
}

// Issue 39's end-to-end case: `redlua unlock --force` while `redlua lock
// NAME -- sh -c 'trap ... TERM; sleep 60'` runs and a second `redlua lock
// NAME` waits. The first command is stopped within 1 s of the forced
// unlock (its holder is told at once, not at its next renewal: the lease is
// a minute long and renewed every 20 s), the first redlua exits 124, and
// the second command starts only after the first command's process exited
// (its redlua releases the lock only then), long before the forced
// unlock's grace of a minute would have freed the lock.
func TestForcedUnlockStopsTheHolderBeforeTheNextStarts(t *testing.T) {
	srv := redistest.Standalone(t)
	url := serverURL(srv)
	log := filepath.Join(t.TempDir(), "log")
	now := `$(date +%s%N)`
	first := start(t, url, "lock", "--ttl", "1m", "--grace", "20s", "job", "--", "sh", "-c",
		`trap 'echo stopped `+now+` >> `+log+`; exit 0' TERM; echo start1 `+now+` >> `+log+`; sleep 60 & wait`)
	waitForFile(t, log, "start1")
	second := start(t, url, "lock", "--ttl", "1m", "job", "--", "sh", "-c", `echo start2 `+now+` >> `+log)

	// The second waits once Inspect counts it (bounded poll).
	lc := testLocks(t, srv)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := lc.Inspect(context.Background(), "job")
		if err == nil && info.Waiters >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second redlua lock never waited: %+v, %v", info, err)
		}
	}

	forced := time.Now().UnixNano()
	if r := redlua(t, url, "unlock", "--force", "--grace", "1m", "job"); r.code != 0 || !strings.Contains(r.stdout, "revoked the holder") {
		t.Fatalf("redlua unlock --force exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r1 := first.wait(t)
	if r1.code != exitLost || !strings.Contains(r1.stderr, "forced unlock") {
		t.Fatalf("the first redlua exited %d, want %d with the forced unlock named; stderr:\n%s", r1.code, exitLost, r1.stderr)
	}
	if r2 := second.wait(t); r2.code != 0 {
		t.Fatalf("the second redlua exited %d; stderr:\n%s", r2.code, r2.stderr)
	}
	at := stamps(t, log)
	stopped, started2 := at["stopped"], at["start2"]
	if stopped == 0 || started2 == 0 {
		t.Fatalf("the log lacks a stamp: %v", at)
	}
	if d := time.Duration(stopped - forced); d > time.Second {
		t.Fatalf("the first command was stopped %v after the forced unlock, want within 1s", d)
	}
	if started2 <= stopped {
		t.Fatalf("the second command started %v before the first one stopped", time.Duration(stopped-started2))
	}
	if d := time.Duration(started2 - forced); d > 30*time.Second {
		t.Fatalf("the second command started %v after the forced unlock: it waited for the grace, not for the first redlua's release", d)
	}
}

// --grace is checked before anything connects.
func TestUnlockGraceFlag(t *testing.T) {
	for _, bad := range []string{"-1s", "200h"} {
		r := redlua(t, "redis://127.0.0.1:1", "unlock", "--force", "--grace", bad, "job")
		if r.code != exitUsage || !strings.Contains(r.stderr, "--grace") {
			t.Fatalf("unlock --grace %s exited %d, want %d naming --grace; stderr: %s", bad, r.code, exitUsage, r.stderr)
		}
	}
}
