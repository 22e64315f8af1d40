package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// watched is a server whose traffic a test checks: a client of one
// connection, opened before the stats are reset, so the only connection
// the server counts after the reset is one somebody else made.
type watched struct {
	srv    *redistest.Server
	client *redis.Client
}

func watch(t *testing.T, srv *redistest.Server) *watched {
	t.Helper()
	w := &watched{srv: srv, client: srv.Client(func(o *redis.Options) { o.PoolSize, o.MaxIdleConns, o.MinIdleConns = 1, 1, 0 })}
	w.reset(t)
	return w
}

// reset zeroes the server's command and connection counters.
func (w *watched) reset(t *testing.T) {
	t.Helper()
	if err := w.client.ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// traffic is what reached the server since reset: the connections it
// accepted and the commands other than the watcher's own (CONFIG, INFO).
func (w *watched) traffic(t *testing.T) (conns int, commands []string) {
	t.Helper()
	ctx := context.Background()
	stats, err := w.client.Info(ctx, "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	conns = -1
	for _, line := range strings.Split(stats, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_connections_received:"); ok {
			conns, _ = strconv.Atoi(v)
		}
	}
	if conns < 0 {
		t.Fatalf("INFO stats has no total_connections_received:\n%s", stats)
	}
	cmdstats, err := w.client.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(cmdstats, "\r\n") {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") || name == "info" || name == "config|resetstat" || name == "config" {
			continue
		}
		commands = append(commands, line)
	}
	return conns, commands
}

// ran reports whether any script ran on the server since reset.
func ranScripts(commands []string) bool {
	for _, c := range commands {
		if strings.HasPrefix(c, "cmdstat_eval") || strings.HasPrefix(c, "cmdstat_fcall") || strings.HasPrefix(c, "cmdstat_script") {
			return true
		}
	}
	return false
}

// Flags after NAME are flags: `redlua lock NAME --addr A -- true` takes the
// lock on A, and the default server ($REDIS_URL, here B) gets not even a
// connection. The same for inspect and unlock, and for flags between NAME
// and a CMD given without "--".
func TestFlagsAfterNameUseTheNamedServer(t *testing.T) {
	a, b := redistest.Standalone(t), redistest.Standalone(t)
	wa, wb := watch(t, a), watch(t, b)
	log := filepath.Join(t.TempDir(), "log")
	for _, args := range [][]string{
		{"lock", "free-x", "--addr", a.Addr, "--", "sh", "-c", "echo ran >> " + log},
		{"lock", "free-x", "--addr", a.Addr, "sh", "-c", "echo ran >> " + log},
		{"lock", "--ttl", "5s", "free-x", "--addr=" + a.Addr, "-v", "--", "sh", "-c", "echo ran >> " + log},
		{"inspect", "free-x", "--addr", a.Addr},
		{"inspect", "free-x", "--addr", a.Addr, "other", "--json"},
		{"unlock", "free-x", "--addr", a.Addr, "--force"},
	} {
		wa.reset(t)
		r := redlua(t, serverURL(b), args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if conns, commands := wb.traffic(t); conns != 0 || len(commands) != 0 {
			t.Fatalf("%q: the default server got %d connections and commands %q; want none", args, conns, commands)
		}
		if conns, commands := wa.traffic(t); conns == 0 || !ranScripts(commands) {
			t.Fatalf("%q: the named server got %d connections and commands %q; want the script run there", args, conns, commands)
		}
	}
	if out, err := os.ReadFile(log); err != nil || strings.Count(string(out), "ran") != 3 {
		t.Fatalf("CMD wrote %q (%v), want 3 runs", out, err)
	}
	if n, err := b.Client().DBSize(context.Background()).Result(); err != nil || n != 0 {
		t.Fatalf("the default server holds %d keys (%v), want 0", n, err)
	}
}

// A CMD that cannot run is found out before anything connects: exit 127
// or 126, no connection to the server, no script run, no lock left.
func TestLockCommandCheckedBeforeTheLock(t *testing.T) {
	srv := redistest.Standalone(t)
	w := watch(t, srv)
	dir := t.TempDir()
	notExec := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"lock", "free-x", "--", "no-such-command-redlua-test"}, exitNotFound, "redlua lock: cannot run no-such-command-redlua-test: not found in $PATH"},
		{[]string{"lock", "free-x", "no-such-command-redlua-test", "--flag"}, exitNotFound, "not found in $PATH"},
		{[]string{"lock", "free-x", "--", filepath.Join(dir, "missing")}, exitNotFound, "no such file"},
		{[]string{"lock", "free-x", "--", notExec}, exitCannotRun, "not executable"},
		{[]string{"lock", "free-x", "--", dir}, exitCannotRun, "cannot run"},
		// Usage errors anywhere before "--" also come before any connection.
		{[]string{"lock", "free-x", "--frobnicate", "--", "true"}, exitUsage, "redlua lock: unknown flag --frobnicate"},
		{[]string{"lock", "free-x", "--ttl", "5ms", "--", "true"}, exitUsage, "redlua lock: --ttl 5ms is too short: a lease lasts at least 10ms"},
		{[]string{"lock", "free-{x}", "--", "true"}, exitUsage, "drop the braces"},
		{[]string{"inspect", "free-x", "--frobnicate"}, exitUsage, "redlua inspect: unknown flag --frobnicate"},
		{[]string{"unlock", "--force", "free-x", "{y}"}, exitUsage, "redlua unlock: NAME \"{y}\" contains"},
	} {
		w.reset(t)
		r := redlua(t, serverURL(srv), tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.stderr)
		}
		if strings.Contains(r.stderr, "locks: ") {
			t.Errorf("%q: the library's prefix in %q", tc.args, r.stderr)
		}
		if conns, commands := w.traffic(t); conns != 0 || len(commands) != 0 {
			t.Errorf("%q: the server got %d connections and commands %q; want none", tc.args, conns, commands)
		}
	}
	if n, err := srv.Client().DBSize(context.Background()).Result(); err != nil || n != 0 {
		t.Fatalf("the server holds %d keys (%v), want 0", n, err)
	}
}

// JSON output keeps '<', '>' and '&' as they are.
func TestJSONWithoutHTMLEscaping(t *testing.T) {
	srv := redistest.Standalone(t)
	const label = "a > b & <c>"
	m, err := testLocks(t, srv).Mutex("report", locks.WithTTL(time.Minute), locks.WithLabel(label))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", "--json", "report"}, {"unlock", "--force", "--json", "report"}} {
		r := redlua(t, serverURL(srv), args...)
		if r.code != 0 || !strings.Contains(r.stdout, `"label": "`+label+`"`) || strings.Contains(r.stdout, `\u00`) {
			t.Fatalf("%q: exit %d, want the label %q as it is\n%s%s", args, r.code, label, r.stdout, r.stderr)
		}
		if !json.Valid([]byte(r.stdout)) {
			t.Fatalf("%q: not JSON:\n%s", args, r.stdout)
		}
	}
	r := runHere(t, nil, "scripts", "list", "--json")
	if r.code != 0 || strings.Contains(r.stdout, `\u00`) {
		t.Fatalf("scripts list --json: exit %d, HTML-escaped:\n%s", r.code, r.stdout)
	}
}

// Every command's --help shows two or more examples; lock's documents the
// exit codes, 130 included.
func TestHelpHasExamples(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"lock", "--help"}, {"inspect", "--help"}, {"unlock", "-h"},
		{"scripts", "--help"}, {"scripts", "list", "--help"}, {"scripts", "load", "--help"}, {"scripts", "verify", "--help"}} {
		r := runHere(t, nil, args...)
		_, examples, ok := strings.Cut(r.stdout, "examples:\n")
		n := 0
		for _, line := range strings.Split(examples, "\n") {
			if !strings.HasPrefix(line, "  ") {
				break
			}
			if strings.HasPrefix(line, "  redlua ") {
				n++
			}
		}
		if r.code != 0 || !ok || n < 2 {
			t.Errorf("%q: exit %d, %d examples, want 2 or more:\n%s%s", args, r.code, n, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{{"--help"}, {"lock", "--help"}} {
		if r := runHere(t, nil, args...); !strings.Contains(r.stdout, "130 interrupted") {
			t.Errorf("%q does not document exit 130:\n%s", args, r.stdout)
		}
	}
	guide, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "\n| 130 |") {
		t.Error("docs/cli.md's exit-code table has no row for 130")
	}
}

// SIGINT while waiting for the lock ends redlua with 130, without running
// CMD and without leaving a waiter behind.
func TestLockInterruptedWhileWaiting(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	lc := testLocks(t, srv)
	m, err := lc.Mutex("busy", locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock(ctx)
	ran := filepath.Join(t.TempDir(), "ran")
	p := start(t, serverURL(srv), "lock", "busy", "--", "sh", "-c", "echo ran > "+ran)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := lc.Inspect(ctx, "busy")
		if err != nil {
			t.Fatal(err)
		}
		if info.Waiters == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redlua lock did not queue in 20s: %+v", info)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t)
	if r.code != 130 || !strings.Contains(r.stderr, "redlua lock: busy: interrupted") {
		t.Fatalf("exit %d, stderr %q; want 130, interrupted", r.code, r.stderr)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("CMD ran although the wait was interrupted")
	}
}

// The default label is the command line, cut short without splitting a
// character.
func TestDefaultLabel(t *testing.T) {
	if got := defaultLabel([]string{"./job.sh", "--full"}); got != "redlua lock ./job.sh --full" {
		t.Fatalf("defaultLabel = %q", got)
	}
	for pad := range 4 {
		got := defaultLabel([]string{strings.Repeat("x", pad) + strings.Repeat("é€", 100)})
		if !utf8.ValidString(got) || len(got) > maxLabel+len("…") || !strings.HasSuffix(got, "…") {
			t.Fatalf("defaultLabel of a long command (pad %d) = %q (%d bytes)", pad, got, len(got))
		}
	}
}
