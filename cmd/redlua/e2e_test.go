package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// redluaBin is the command under test, built once per test run.
var redluaBin string

func TestMain(m *testing.M) {
	if code, ok := guardMain(); ok {
		os.Exit(code) // the in-process tests of redlua lock run CMD under this binary as guard
	}
	dir, err := os.MkdirTemp("", "redlua-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	redluaBin = filepath.Join(dir, "redlua")
	if out, err := exec.Command("go", "build", "-o", redluaBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building redlua: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one finished redlua process.
type result struct {
	code           int
	stdout, stderr string
}

// started is a redlua process still running.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
}

// start runs redlua against url with a hard time limit: every test process
// is bounded, whatever the command does.
func start(t *testing.T, url string, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p := &started{cmd: exec.CommandContext(ctx, redluaBin, args...), done: make(chan struct{})}
	// The caller's REDIS_URL or REDISCLI_AUTH must not leak into the test.
	p.cmd.Env = append(os.Environ(), "REDIS_URL="+url, "REDISCLI_AUTH=")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	// A CMD left running in its own process group (a test that failed
	// before its lock was lost) keeps the output pipes open: Wait gives
	// up on them this long after redlua exited or was killed.
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

func (p *started) wait(t *testing.T) result {
	t.Helper()
	<-p.done
	code := p.cmd.ProcessState.ExitCode()
	if code < 0 {
		t.Fatalf("redlua %q did not exit by itself: %v\nstderr: %s", p.cmd.Args[1:], p.cmd.ProcessState, p.stderr.String())
	}
	return result{code: code, stdout: p.stdout.String(), stderr: p.stderr.String()}
}

func redlua(t *testing.T, url string, args ...string) result {
	t.Helper()
	return start(t, url, args...).wait(t)
}

func serverURL(srv *redistest.Server) string { return "redis://" + srv.Addr }

func testLocks(t *testing.T, srv *redistest.Server) *locks.Client {
	t.Helper()
	c, err := locks.New(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitForFile polls until path contains want, for at most 20s.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), want) {
			return
		}
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s never contained %q; it has:\n%s", path, want, b)
}

// checkSections checks a log of "start TOKEN"/"end TOKEN" lines: every
// section ends before the next starts, with the same token, and tokens grow.
func checkSections(log string) (sections int, err error) {
	lines := strings.Fields(strings.ReplaceAll(log, "\n", " ; "))
	var entries [][2]string
	for i := 0; i+1 < len(lines); i++ {
		if lines[i] == "start" || lines[i] == "end" {
			entries = append(entries, [2]string{lines[i], lines[i+1]})
		}
	}
	last := int64(-1)
	for i := 0; i < len(entries); i += 2 {
		if entries[i][0] != "start" || i+1 >= len(entries) || entries[i+1][0] != "end" || entries[i+1][1] != entries[i][1] {
			return sections, fmt.Errorf("sections overlap or are cut at entry %d:\n%s", i, log)
		}
		tok, err := strconv.ParseInt(entries[i][1], 10, 64)
		if err != nil || tok <= last {
			return sections, fmt.Errorf("fencing token %q does not grow (previous %d):\n%s", entries[i][1], last, log)
		}
		last = tok
		sections++
	}
	return sections, nil
}

func TestCheckSectionsSeesOverlap(t *testing.T) {
	for _, bad := range []string{
		"start 1\nstart 2\nend 1\nend 2\n",
		"start 1\nend 2\n",
		"start 2\nend 2\nstart 1\nend 1\n",
		"start 1\n",
	} {
		if _, err := checkSections(bad); err == nil {
			t.Errorf("checkSections accepted %q", bad)
		}
	}
	if n, err := checkSections("start 1\nend 1\nstart 5\nend 5\n"); n != 2 || err != nil {
		t.Errorf("checkSections of a good log = %d, %v", n, err)
	}
}

// runConcurrently runs `redlua lock NAME -- sh -c script` rounds times from
// each of two goroutines, and returns the log the children wrote.
func runConcurrently(t *testing.T, url string, names [2]string, script string, rounds int) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "log")
	script = strings.ReplaceAll(script, "LOG", log)
	var wg sync.WaitGroup
	results := make(chan result, 2*rounds)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				results <- redlua(t, url, "lock", "--ttl", "10s", name, "--", "sh", "-c", script)
			}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.code != 0 {
			t.Fatalf("redlua lock exited %d: %s", r.code, r.stderr)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two concurrent `redlua lock job -- sh -c ...` runs never overlap, and
// each sees a larger fencing token than the run before it.
func TestLockCommandsNeverOverlap(t *testing.T) {
	srv := redistest.Standalone(t)
	const section = `echo "start $REDLUA_FENCING_TOKEN" >> LOG; sleep 0.2; echo "end $REDLUA_FENCING_TOKEN" >> LOG`
	log := runConcurrently(t, serverURL(srv), [2]string{"job", "job"}, section, 3)
	n, err := checkSections(log)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("%d sections in the log, want 6:\n%s", n, log)
	}
}

// The same check catches overlap when the lock does not hold: two names
// are two locks, and each child waits (bounded) until both have started.
func TestLockOverlapCheckFailsWithoutTheLock(t *testing.T) {
	srv := redistest.Standalone(t)
	const rendezvous = `echo "start $REDLUA_FENCING_TOKEN" >> LOG; i=0; ` +
		`while [ "$(grep -c start LOG)" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; ` +
		`echo "end $REDLUA_FENCING_TOKEN" >> LOG`
	log := runConcurrently(t, serverURL(srv), [2]string{"job-a", "job-b"}, rendezvous, 1)
	if _, err := checkSections(log); err == nil {
		t.Fatalf("two locks overlapped, but the check saw no overlap:\n%s", log)
	}
}

// A lost lease stops the command: SIGTERM to its process group, and redlua
// exits 124 even though the command exited 0.
func TestLockLostLeaseStopsCommand(t *testing.T) {
	srv := redistest.Standalone(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	p := start(t, serverURL(srv), "lock", "--ttl", "1s", "--grace", "20s", "stuck", "--",
		"sh", "-c", `trap 'echo terminated >> `+log+`; exit 0' TERM; echo started >> `+log+`; while :; do sleep 0.05; done`)
	waitForFile(t, log, "started")
	removed, err := testLocks(t, srv).ForceUnlock(context.Background(), "stuck")
	if err != nil || !removed {
		t.Fatalf("ForceUnlock = %v, %v", removed, err)
	}
	r := p.wait(t)
	if r.code != exitLost {
		t.Fatalf("redlua exited %d, want %d (lease lost); stderr: %s", r.code, exitLost, r.stderr)
	}
	waitForFile(t, log, "terminated")
	if !strings.Contains(r.stderr, "lost") {
		t.Fatalf("stderr does not say the lease was lost: %s", r.stderr)
	}
}

// A command that ignores SIGTERM is killed after --grace, with its children.
func TestLockLostLeaseKillsAfterGrace(t *testing.T) {
	srv := redistest.Standalone(t)
	dir := t.TempDir()
	log, pidFile := filepath.Join(dir, "log"), filepath.Join(dir, "pid")
	p := start(t, serverURL(srv), "lock", "--ttl", "1s", "--grace", "200ms", "stubborn", "--",
		"sh", "-c", `trap '' TERM; sleep 600 & echo $! > `+pidFile+`; echo started >> `+log+`; while :; do sleep 0.05; done`)
	waitForFile(t, log, "started")
	if _, err := testLocks(t, srv).ForceUnlock(context.Background(), "stubborn"); err != nil {
		t.Fatal(err)
	}
	if r := p.wait(t); r.code != exitLost {
		t.Fatalf("redlua exited %d, want %d; stderr: %s", r.code, exitLost, r.stderr)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The background sleep was in the group: SIGKILL reached it. It is
	// reaped by init, so poll (bounded) for it to vanish.
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d survived the lost lease", pid)
		}
	}
}

// redlua paused (SIGSTOP) past its TTL: another process takes the lock, and
// once redlua runs again its lease is found lost and the command stopped.
func TestLockPausedPastTTLStopsCommand(t *testing.T) {
	srv := redistest.Standalone(t)
	log := filepath.Join(t.TempDir(), "log")
	p := start(t, serverURL(srv), "lock", "--ttl", "500ms", "--grace", "20s", "paused", "--",
		"sh", "-c", `trap 'echo terminated >> `+log+`; exit 0' TERM; echo started >> `+log+`; while :; do sleep 0.05; done`)
	waitForFile(t, log, "started")
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) until the server has let the lease run out and another
	// owner took the lock: only then resume redlua.
	ctx := context.Background()
	m, err := testLocks(t, srv).Mutex("paused", locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var other *locks.Lease
	for deadline := time.Now().Add(20 * time.Second); other == nil; time.Sleep(20 * time.Millisecond) {
		if other, _ = m.TryLock(ctx); other == nil && time.Now().After(deadline) {
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			t.Fatal("the paused holder's lease never ran out")
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r := p.wait(t); r.code != exitLost {
		t.Fatalf("redlua exited %d, want %d; stderr: %s", r.code, exitLost, r.stderr)
	}
	waitForFile(t, log, "terminated")
	if err := other.Unlock(ctx); err != nil {
		t.Fatalf("the new owner lost the lock to the resumed one: %v", err)
	}
}

func TestLockExitCodes(t *testing.T) {
	srv := redistest.Standalone(t)
	url := serverURL(srv)
	ctx := context.Background()
	held, err := testLocks(t, srv).Mutex("busy", locks.WithTTL(time.Minute), locks.WithLabel("nightly import"))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := held.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock(ctx)
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"held, no wait", []string{"lock", "--wait=false", "busy", "--", "true"}, exitNotAcquired, `label "nightly import"`},
		{"held, -n", []string{"lock", "-n", "busy", "--", "true"}, exitNotAcquired, "not acquired"},
		{"held, timeout", []string{"lock", "--timeout", "300ms", "busy", "--", "true"}, exitNotAcquired, "within --timeout"},
		{"CMD's status", []string{"lock", "free", "--", "sh", "-c", "exit 7"}, 7, ""},
		{"CMD killed by a signal", []string{"lock", "free", "--", "sh", "-c", "kill -9 $$"}, 128 + 9, ""},
		{"env passed", []string{"lock", "free", "--", "sh", "-c", `test "$REDLUA_LOCK_NAME" = free && test "$REDLUA_FENCING_TOKEN" -gt 0`}, 0, ""},
		{"fair", []string{"lock", "--fair", "fair-one", "--", "true"}, 0, ""},
		{"without --", []string{"lock", "free", "true"}, 0, ""},
		{"CMD not found", []string{"lock", "free", "--", "/nonexistent/redlua-test-cmd"}, exitNotFound, "cannot run"},
		{"CMD not executable", []string{"lock", "free", "--", notExec}, exitCannotRun, "cannot run"},
		{"no CMD", []string{"lock", "free"}, exitUsage, "missing CMD"},
		{"no NAME", []string{"lock"}, exitUsage, "missing NAME"},
		{"bad TTL", []string{"lock", "--ttl", "-1s", "free", "--", "true"}, exitUsage, "--ttl -1s is too short"},
		{"bad waiter TTL, plain", []string{"lock", "--waiter-ttl", "1ms", "free", "--", "true"}, exitUsage, "--waiter-ttl 1ms is too short"},
		{"bad waiter TTL, fair", []string{"lock", "--fair", "--waiter-ttl", "1ms", "free", "--", "true"}, exitUsage, "--waiter-ttl 1ms is too short"},
		{"bad name", []string{"lock", "{x}", "--", "true"}, exitUsage, "braces"},
		{"bad flag", []string{"lock", "--frobnicate", "free", "--", "true"}, exitUsage, "frobnicate"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"no server", []string{"lock", "--url", "redis://127.0.0.1:1", "--dial-timeout", "200ms", "free", "--", "true"}, exitUnavailable, "cannot reach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := redlua(t, url, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and stderr containing %q", r.code, r.stderr, tc.code, tc.stderr)
			}
		})
	}
	// Every run released what it took.
	for _, name := range []string{"free", "fair-one"} {
		if info, err := testLocks(t, srv).Inspect(ctx, name); err != nil || info.Held {
			t.Fatalf("%s after the runs: %+v, %v", name, info, err)
		}
	}
}

func TestInspectAndForceUnlock(t *testing.T) {
	srv := redistest.Standalone(t)
	url := serverURL(srv)
	m, err := testLocks(t, srv).Mutex("report", locks.WithTTL(time.Minute), locks.WithLabel("nightly \x00\xff\""))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := m.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := redlua(t, url, "inspect", "--json", "report", "other")
	if r.code != 0 {
		t.Fatalf("inspect exited %d: %s", r.code, r.stderr)
	}
	var views []lockView
	if err := json.Unmarshal([]byte(r.stdout), &views); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
	}
	if len(views) != 2 || !views[0].Held || views[0].Token != lease.Token() || views[0].Owner != lease.Owner() ||
		views[0].Holder == nil || views[0].Holder.PID != os.Getpid() || !strings.HasPrefix(views[0].Holder.Label, "nightly") ||
		views[0].TTLms <= 0 || views[1].Held || views[1].Name != "other" {
		t.Fatalf("inspect --json =\n%s", r.stdout)
	}
	if r := redlua(t, url, "inspect", "report"); r.code != 0 || !strings.Contains(r.stdout, "report: held") || !strings.Contains(r.stdout, "token    "+strconv.FormatInt(lease.Token(), 10)) {
		t.Fatalf("inspect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := redlua(t, url, "unlock", "report"); r.code != exitUsage || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("unlock without --force: exit %d, %s", r.code, r.stderr)
	}
	if r := redlua(t, url, "unlock", "--force", "--grace", "0", "report"); r.code != 0 || !strings.Contains(r.stdout, "report: removed the holder") {
		t.Fatalf("unlock --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The holder's Client is told at once (no watchdog runs here).
	select {
	case <-lease.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the removed holder was not told within 10s")
	}
	if err := lease.Err(); !errors.Is(err, locks.ErrForced) {
		t.Fatalf("the removed holder's Err = %v, want ErrForced", err)
	}
	if err := lease.Extend(context.Background(), 0); err == nil {
		t.Fatal("the removed holder could still extend")
	}
	if r := redlua(t, url, "unlock", "--force", "--json", "report"); r.code != 0 || !strings.Contains(r.stdout, `"removed": false`) {
		t.Fatalf("unlock --force of a free lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := redlua(t, url, "inspect", "report"); r.code != 0 || !strings.Contains(r.stdout, "report: free") {
		t.Fatalf("inspect after unlock: exit %d\n%s", r.code, r.stdout)
	}
	if r := redlua(t, url, "inspect"); r.code != exitUsage {
		t.Fatalf("inspect without a name: exit %d", r.code)
	}
}

// REDIS_URL carries the ACL user and password.
func TestRedisURLWithACLUser(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	if err := srv.Do(ctx, "ACL", "SETUSER", "ops", "on", ">s3cret", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Do(ctx, "ACL", "SETUSER", "default", "off").Err(); err != nil {
		t.Fatal(err)
	}
	if r := redlua(t, "redis://ops:s3cret@"+srv.Addr, "lock", "acl", "--", "true"); r.code != 0 {
		t.Fatalf("with the ACL user: exit %d: %s", r.code, r.stderr)
	}
	r := redlua(t, "redis://ops:wrong@"+srv.Addr, "inspect", "acl")
	if r.code != exitUnavailable || strings.Contains(r.stderr, "wrong") {
		t.Fatalf("with a wrong password: exit %d, stderr %q (want %d, without the password)", r.code, r.stderr, exitUnavailable)
	}
	if r := redlua(t, serverURL(srv), "inspect", "--user", "ops", "--password", "s3cret", "acl"); r.code != 0 {
		t.Fatalf("--user/--password over the URL: exit %d: %s", r.code, r.stderr)
	}
}

// --key-prefix puts the lock's keys where an ACL user limited to ~app:*
// may write them; without it the same user is refused.
func TestLockKeyPrefixUnderACLUser(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	if err := srv.Do(ctx, "ACL", "SETUSER", "app", "on", ">s3cret", "resetkeys", "~app:*", "resetchannels", "&app:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	url := "redis://app:s3cret@" + srv.Addr
	dir := t.TempDir()
	started, proceed := filepath.Join(dir, "started"), filepath.Join(dir, "proceed")
	p := start(t, url, "lock", "--key-prefix", "app:", "nightly", "--",
		"sh", "-c", "echo started > "+started+"; i=0; while [ ! -e "+proceed+" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done")
	waitForFile(t, started, "started")
	if n, err := srv.Do(ctx, "EXISTS", "app:{nightly}").Int(); err != nil || n != 1 {
		t.Errorf("while the command ran, EXISTS app:{nightly} = %d, %v; want 1", n, err)
	}
	if err := os.WriteFile(proceed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := p.wait(t); r.code != 0 {
		t.Fatalf("lock --key-prefix app: under the ACL user: exit %d: %s", r.code, r.stderr)
	}
	if r := redlua(t, url, "inspect", "--key-prefix", "app:", "nightly"); r.code != 0 {
		t.Fatalf("inspect --key-prefix app: exit %d: %s", r.code, r.stderr)
	}
	if r := redlua(t, url, "lock", "nightly", "--", "true"); r.code == 0 || !strings.Contains(r.stderr, "NOPERM") {
		t.Fatalf("lock without --key-prefix under the ACL user: exit %d, stderr %q; want it refused (NOPERM)", r.code, r.stderr)
	}
	if r := redlua(t, url, "lock", "--key-prefix", "{app}", "nightly", "--", "true"); r.code != exitUsage {
		t.Fatalf("--key-prefix {app}: exit %d, want %d (usage): %s", r.code, exitUsage, r.stderr)
	}
}
