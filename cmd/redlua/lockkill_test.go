//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// When redlua is killed with SIGKILL (it cannot stop CMD itself), CMD and
// the processes CMD started die with it, while the lock is still held: no
// second holder can be granted the lock while they run. The lease (a
// minute) outlasts the test's bounded wait, so the order is decided by the
// outcome, not by timing.
func TestLockKilledRedluaTakesCommandAlong(t *testing.T) {
	srv := redistest.Standalone(t)
	dir := t.TempDir()
	shPid, childPid := filepath.Join(dir, "sh.pid"), filepath.Join(dir, "child.pid")
	// sh forks sleep (a shell's child, which a signal on sh alone would
	// not reach) and waits for it.
	p := start(t, serverURL(srv), "lock", "--ttl", "1m", "killed", "--",
		"sh", "-c", `sleep 300 & echo $! > `+childPid+`.tmp; mv `+childPid+`.tmp `+childPid+`; echo $$ > `+shPid+`.tmp; mv `+shPid+`.tmp `+shPid+`; wait`)
	pids := []int{readPid(t, shPid), readPid(t, childPid)}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gone := false
	for try := 0; try < 3000 && !gone; try++ {
		gone = !alive(pids[0]) && !alive(pids[1])
		if !gone {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !gone {
		t.Fatalf("30s after redlua was killed with SIGKILL, CMD (pid %d, alive %v) or its child (pid %d, alive %v) still runs; they must die with redlua",
			pids[0], alive(pids[0]), pids[1], alive(pids[1]))
	}
	info, err := testLocks(t, srv).Inspect(context.Background(), "killed")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Held {
		t.Fatal("the lock was free before CMD was seen gone; the test needs the lease to outlast the wait")
	}
}

// readPid polls path (for at most 20s) until it holds a process id.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for try := 0; try < 2000; try++ {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held a process id", path)
	return 0
}

// alive reports whether pid runs: it exists and is not a zombie waiting
// for a parent (a container's init may not reap at once).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return !os.IsNotExist(err) || !procMounted()
	}
	// pid (comm) STATE ...: comm may contain spaces and parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}
