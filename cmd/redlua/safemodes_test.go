package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// holding starts `redlua ARGS... NAME -- sh` whose CMD logs its fencing
// token to dir/log and then runs until dir/stop exists (bounded: 20 s).
// stop ends it and returns its result.
func holding(t *testing.T, url, dir string, args ...string) (stop func() result) {
	t.Helper()
	log, stopFile := filepath.Join(dir, "log"), filepath.Join(dir, "stop")
	script := `echo "token $REDLUA_FENCING_TOKEN" >> ` + log + `; i=0; while [ ! -f ` + stopFile + ` ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`
	p := start(t, url, append(args, "--", "sh", "-c", script)...)
	waitForFile(t, log, "token")
	return func() result {
		if err := os.WriteFile(stopFile, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p.wait(t)
	}
}

// tokens reads the fencing tokens dir/log recorded, in order.
func tokens(t *testing.T, dir string) []int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		n, err := strconv.ParseInt(strings.TrimPrefix(line, "token "), 10, 64)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, n)
	}
	return out
}

// lockKeyOn reports whether srv has the lock hash of name.
func lockKeyOn(t *testing.T, srv *redistest.Server, name string) bool {
	t.Helper()
	n, err := srv.Client().Exists(context.Background(), "{"+name+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// eventually reports whether ok holds within d, looking every 10 ms.
func eventually(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if ok() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// fsyncAlways starts a server that persists every write, which a quorum
// counts at once (a fresh server without it counts only once up for the
// longest lease, a minute by default).
var fsyncAlways = redistest.WithArgs("--appendonly", "yes", "--appendfsync", "always")

// `redlua lock --quorum` holds the lock on every primary, refuses a second
// holder, keeps working with a minority of the primaries down (the first
// address among them), and fails fast, exit 69, without a majority.
func TestLockQuorum(t *testing.T) {
	// appendfsync always: a quorum counts a server only once it has been up
	// for the longest lease, or at once when it persists every write.
	srvs := []*redistest.Server{redistest.Standalone(t, fsyncAlways), redistest.Standalone(t, fsyncAlways), redistest.Standalone(t, fsyncAlways)}
	addr := srvs[0].Addr + "," + srvs[1].Addr + "," + srvs[2].Addr
	dir := t.TempDir()

	stop := holding(t, "", dir, "lock", "--quorum", "--addr", addr, "--ttl", "10s", "job")
	// Lock returns once a majority granted it; the last primary's grant may
	// still be on its way, and the holder keeps the lock until stopped.
	for i, srv := range srvs {
		if !eventually(5*time.Second, func() bool { return lockKeyOn(t, srv, "job") }) {
			t.Errorf("primary %d (%s) has no hold while the quorum lock is held", i+1, srv.Addr)
		}
	}
	if r := redlua(t, "", "lock", "-n", "--quorum", "--addr", addr, "job", "--", "true"); r.code != exitNotAcquired {
		t.Errorf("a second holder: exit %d, want %d (not acquired)\n%s", r.code, exitNotAcquired, r.stderr)
	}
	if r := stop(); r.code != 0 {
		t.Fatalf("the holder: exit %d\n%s", r.code, r.stderr)
	}

	srvs[0].Kill()
	if r := redlua(t, "", "lock", "--quorum", "--addr", addr, "job", "--", "sh", "-c",
		`echo "token $REDLUA_FENCING_TOKEN" >> `+filepath.Join(dir, "log")); r.code != 0 {
		t.Fatalf("with the first of 3 primaries down: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if got := tokens(t, dir); len(got) != 2 || got[1] <= got[0] {
		t.Errorf("fencing tokens %v, want two, growing", got)
	}

	srvs[1].Kill()
	r := redlua(t, "", "lock", "--quorum", "--addr", addr, "job", "--", "true")
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "cannot reach a majority") || !strings.Contains(r.stderr, srvs[1].Addr) {
		t.Errorf("with 2 of 3 primaries down: exit %d, want %d naming the unreachable primaries\n%s", r.code, exitUnavailable, r.stderr)
	}

	for _, args := range [][]string{
		{"--replicas", "1"},
		{"--fair"},
		{"--waiter-ttl", "1s"},
	} {
		args = append(append([]string{"lock", "--quorum", "--addr", addr}, args...), "job", "--", "true")
		if r := redlua(t, "", args...); r.code != exitUsage || !strings.Contains(r.stderr, "--quorum") {
			t.Errorf("%q: exit %d, want %d naming --quorum\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

// `redlua lock --replicas 1` takes the lock only once the replica has it:
// while replication is held up, it exits 69 and leaves no hold behind,
// where plain mode takes the lock.
func TestLockReplicas(t *testing.T) {
	pair := redistest.NewLaggingPair(t)
	url := serverURL(pair.Primary)
	if r := redlua(t, url, "lock", "--replicas", "1", "job", "--", "true"); r.code != 0 {
		t.Fatalf("--replicas 1 with the replica in sync: exit %d\n%s", r.code, r.stderr)
	}

	pair.Link.Hold()
	defer pair.Link.Release()
	r := redlua(t, url, "lock", "--replicas", "1", "--replica-timeout", "300ms", "job", "--", "true")
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "not acknowledged by enough replicas") {
		t.Fatalf("--replicas 1 with replication held up: exit %d, want %d (not replicated)\n%s", r.code, exitUnavailable, r.stderr)
	}
	info, err := testLocks(t, pair.Primary).Inspect(context.Background(), "job")
	if err != nil {
		t.Fatal(err)
	}
	if info.Held {
		t.Errorf("the refused acquisition left a hold: %+v", info)
	}
	if r := redlua(t, url, "lock", "job", "--", "true"); r.code != 0 {
		t.Errorf("plain mode with replication held up: exit %d, want 0\n%s", r.code, r.stderr)
	}

	for _, args := range [][]string{
		{"--replicas", "-1"},
		{"--replicas", "1", "--replica-timeout", "0s"},
		{"--replica-timeout", "1s"},
	} {
		args = append(append([]string{"lock"}, args...), "job", "--", "true")
		if r := redlua(t, url, args...); r.code != exitUsage || !strings.Contains(r.stderr, "--replica") {
			t.Errorf("%q: exit %d, want %d naming the flag\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

// `redlua lock --sentinel NAME --addr SENTINELS` takes the lock on the
// primary the Sentinel names, and --replicas 1 through it waits for the
// replica: held-up replication makes it exit 69. An unknown name exits 69.
func TestLockThroughSentinel(t *testing.T) {
	set, pair := redistest.NewLaggingSentinel(t)
	via := []string{"lock", "--sentinel", set.MasterName, "--addr", set.Sentinel.Addr, "--replicas", "1"}
	stop := holding(t, "", t.TempDir(), append(via, "job")...)
	if !lockKeyOn(t, set.Primary, "job") {
		t.Errorf("the primary %s has no hold", set.Primary.Addr)
	}
	if r := stop(); r.code != 0 {
		t.Fatalf("the holder: exit %d\n%s", r.code, r.stderr)
	}

	pair.Link.Hold()
	defer pair.Link.Release()
	r := redlua(t, "", append(via, "--replica-timeout", "300ms", "job", "--", "true")...)
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "not acknowledged by enough replicas") {
		t.Errorf("--replicas 1 through the Sentinel with replication held up: exit %d, want %d (not replicated)\n%s", r.code, exitUnavailable, r.stderr)
	}
	if r := redlua(t, "", "lock", "--sentinel", "no-such-primary", "--addr", set.Sentinel.Addr, "--dial-timeout", "2s", "job", "--", "true"); r.code != exitUnavailable {
		t.Errorf("an unknown primary name: exit %d, want %d\n%s", r.code, exitUnavailable, r.stderr)
	}

	// Sentinels that require a password (the primary does not): without it
	// the Sentinel refuses, with --sentinel-password or
	// $REDLUA_SENTINEL_AUTH redlua gets through.
	sc := set.Sentinel.Client()
	if err := sc.Do(context.Background(), "ACL", "SETUSER", "default", "resetpass", ">sentinel-secret").Err(); err != nil {
		t.Fatalf("setting the Sentinel's password: %v", err)
	}
	plain := []string{"lock", "--sentinel", set.MasterName, "--addr", set.Sentinel.Addr, "--dial-timeout", "2s"}
	if r := redlua(t, "", append(plain, "job", "--", "true")...); r.code != exitUnavailable {
		t.Errorf("a Sentinel with a password, none given: exit %d, want %d\n%s", r.code, exitUnavailable, r.stderr)
	}
	if r := redlua(t, "", append(plain, "--sentinel-password", "sentinel-secret", "job", "--", "true")...); r.code != 0 {
		t.Errorf("--sentinel-password: exit %d, want 0\n%s", r.code, r.stderr)
	}
	t.Setenv("REDLUA_SENTINEL_AUTH", "sentinel-secret")
	if r := redlua(t, "", append(plain, "job", "--", "true")...); r.code != 0 {
		t.Errorf("$REDLUA_SENTINEL_AUTH: exit %d, want 0\n%s", r.code, r.stderr)
	}
}

// `redlua inspect --quorum` reports who holds a majority of the primaries
// and what each one holds; `unlock --force --quorum` frees every primary it
// reaches and warns about the ones it could not. With a primary down the
// others still decide; when the down one could decide, inspect shows what
// it saw and exits 69.
func TestInspectAndUnlockQuorum(t *testing.T) {
	// appendfsync always: a quorum counts a server only once it has been up
	// for the longest lease, or at once when it persists every write.
	srvs := []*redistest.Server{redistest.Standalone(t, fsyncAlways), redistest.Standalone(t, fsyncAlways), redistest.Standalone(t, fsyncAlways)}
	addr := srvs[0].Addr + "," + srvs[1].Addr + "," + srvs[2].Addr
	quorum := func(args ...string) result {
		return redlua(t, "", append([]string{args[0], "--quorum", "--addr", addr}, args[1:]...)...)
	}

	stop := holding(t, "", t.TempDir(), "lock", "--quorum", "--addr", addr, "--ttl", "6s", "job")
	defer stop()
	// Lock returned on a majority; the third acquisition may land after.
	deadline := time.Now().Add(10 * time.Second)
	for !lockKeyOn(t, srvs[0], "job") || !lockKeyOn(t, srvs[1], "job") || !lockKeyOn(t, srvs[2], "job") {
		if time.Now().After(deadline) {
			t.Fatal("the quorum lock is not on every primary after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := quorum("inspect", "job")
	if r.code != 0 || !strings.Contains(r.stdout, "job: held on 3 of 3 primaries, a majority") ||
		strings.Count(r.stdout, "held by ") != 3 || !strings.Contains(r.stdout, srvs[2].Addr) {
		t.Fatalf("inspect --quorum: exit %d, want the hold on all three primaries listed\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = quorum("inspect", "--json", "job")
	var views []lockView
	if err := json.Unmarshal([]byte(r.stdout), &views); err != nil || len(views) != 1 {
		t.Fatalf("inspect --quorum --json: %v\n%s", err, r.stdout)
	}
	if v := views[0]; !v.Held || len(v.Servers) != 3 || v.Servers[1].Addr != srvs[1].Addr || v.Servers[1].Owner != v.Owner {
		t.Fatalf("inspect --quorum --json = %+v, want held with three primaries' views", v)
	}

	srvs[2].Kill()
	r = quorum("inspect", "job")
	if r.code != 0 || !strings.Contains(r.stdout, "job: held on 2 of 3 primaries") || !strings.Contains(r.stdout, srvs[2].Addr+"  no answer") {
		t.Fatalf("inspect --quorum with a primary down: exit %d, want held, the down primary shown\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = quorum("unlock", "--force", "--grace", "0", "job")
	if r.code != 0 || !strings.Contains(r.stdout, "job: removed the holder") || !strings.Contains(r.stderr, srvs[2].Addr+" did not answer") {
		t.Fatalf("unlock --force --quorum with a primary down: exit %d, want removed and a warning naming %s\n%s%s", r.code, srvs[2].Addr, r.stdout, r.stderr)
	}
	if r := quorum("inspect", "job"); r.code != 0 || !strings.Contains(r.stdout, "job: free (no owner holds a majority") {
		t.Fatalf("inspect --quorum after unlock --force: exit %d, want free\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := stop(); r.code != exitLost {
		t.Errorf("the removed holder: exit %d, want %d (lease lost)\n%s", r.code, exitLost, r.stderr)
	}

	// One primary holds "solo" (a plain lock on it alone), one is free, one
	// is down: the down one decides, so inspect cannot tell.
	stopSolo := holding(t, "", t.TempDir(), "lock", "--addr", srvs[0].Addr, "--ttl", "6s", "solo")
	defer stopSolo()
	r = quorum("inspect", "solo")
	if r.code != exitUnavailable || !strings.Contains(r.stdout, "solo: undecided") || !strings.Contains(r.stdout, srvs[0].Addr+"  held by") ||
		!strings.Contains(r.stderr, "no quorum") {
		t.Fatalf("inspect --quorum, undecided: exit %d, want %d with each primary's view\n%s%s", r.code, exitUnavailable, r.stdout, r.stderr)
	}

	srvs[1].Kill()
	if r := quorum("inspect", "job"); r.code != exitUnavailable || !strings.Contains(r.stderr, "cannot reach a majority") {
		t.Errorf("inspect --quorum with 2 of 3 down: exit %d, want %d\n%s", r.code, exitUnavailable, r.stderr)
	}
}
