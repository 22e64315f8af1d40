package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// runHere runs the command in this process with env as its environment.
func runHere(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut}, func(k string) string { return env[k] })
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func TestScriptsListAndVerify(t *testing.T) {
	r := runHere(t, nil, "scripts", "list", "--json")
	var views []scriptView
	if err := json.Unmarshal([]byte(r.stdout), &views); r.code != 0 || err != nil {
		t.Fatalf("scripts list --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	found := false
	for _, v := range views {
		found = found || (v.ID == "lock.forceunlock@4" && len(v.SHA1) == 40 && v.Keys[0] == "lock")
	}
	if !found {
		t.Fatalf("scripts list has no lock.forceunlock@4:\n%s", r.stdout)
	}
	if r := runHere(t, nil, "scripts", "list"); r.code != 0 || !strings.Contains(r.stdout, "mutex.acquire@14") {
		t.Fatalf("scripts list: exit %d\n%s", r.code, r.stdout)
	}
	if r := runHere(t, nil, "scripts", "verify"); r.code != 0 || !strings.Contains(r.stdout, "match the embedded scripts.sum") {
		t.Fatalf("scripts verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A copy of the scripts with one recorded version edited fails.
	dir := t.TempDir()
	entries, err := lua.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := lua.FS.ReadFile(e.Name())
		if e.Name() == "mutex.release.v11.lua" {
			b = append(b, "-- an edit after release\n"...)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = runHere(t, nil, "scripts", "verify", "--dir", dir)
	if r.code != exitFailed || !strings.Contains(r.stderr, "mutex.release@11") || !strings.Contains(r.stderr, "changed after it was recorded") {
		t.Fatalf("verify of an edited release: exit %d\n%s", r.code, r.stderr)
	}
	if r := runHere(t, nil, "scripts", "list", "--dir", filepath.Join(dir, "missing")); r.code != exitUsage {
		t.Fatalf("list --dir of a missing directory: exit %d, %s", r.code, r.stderr)
	}
	if r := runHere(t, nil, "scripts", "list", "--dir", t.TempDir()); r.code != exitFailed || !strings.Contains(r.stderr, "no scripts") {
		t.Fatalf("list --dir of an empty directory: exit %d, %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"scripts"}, {"scripts", "frob"}, {"scripts", "list", "extra"}} {
		if r := runHere(t, nil, args...); r.code != exitUsage {
			t.Fatalf("%q: exit %d, want %d", args, r.code, exitUsage)
		}
	}
}

func TestScriptsLoadAndVerifyLoaded(t *testing.T) {
	srv := redistest.Standalone(t)
	env := map[string]string{"REDIS_URL": "redis://" + srv.Addr}
	if r := runHere(t, env, "scripts", "verify", "--loaded"); r.code != exitFailed || !strings.Contains(r.stderr, "not cached") {
		t.Fatalf("verify --loaded before load: exit %d, %s", r.code, r.stderr)
	}
	want := fmt.Sprintf("loaded %d scripts", embeddedCount(t))
	if r := runHere(t, env, "scripts", "load"); r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("scripts load: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runHere(t, env, "scripts", "verify", "--loaded"); r.code != 0 {
		t.Fatalf("verify --loaded after load: exit %d, %s", r.code, r.stderr)
	}
}

// A server where a Mutex, an RWMutex and a Semaphore were just used holds
// every script this release runs: the first NOSCRIPT loads the whole set.
func TestVerifyLoadedAfterLocksWereUsed(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	lc, err := locks.New(rc, locks.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := lc.Mutex("verify-m")
	rw, _ := lc.RWMutex("verify-rw")
	sem, _ := lc.Semaphore("verify-s", 2)
	for _, lock := range []func(context.Context) (*locks.Lease, error){m.Lock, rw.RLock, rw.Lock, func(ctx context.Context) (*locks.Lease, error) { return sem.Acquire(ctx, 1) }} {
		l, err := lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lc.Close() // waits for the background load the first NOSCRIPT started
	env := map[string]string{"REDIS_URL": "redis://" + srv.Addr}
	r := runHere(t, env, "scripts", "verify", "--loaded")
	if r.code != 0 {
		t.Fatalf("verify --loaded after using the locks: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want, _ := locks.Scripts()
	if !strings.Contains(r.stdout, fmt.Sprintf("the %d this release runs are cached", len(want))) {
		t.Fatalf("verify --loaded says:\n%s", r.stdout)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"lock", "--help"}, {"inspect", "-h"}, {"scripts", "verify", "--help"}} {
		if r := runHere(t, nil, args...); r.code != 0 || !strings.Contains(r.stdout, "usage") {
			t.Fatalf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runHere(t, nil); r.code != exitUsage || !strings.Contains(r.stderr, "usage") {
		t.Fatalf("no arguments: exit %d\n%s", r.code, r.stderr)
	}
}

// version prints the release the binary was built from, as go doc's
// locks.Version says, for operators who report what they run.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if r := runHere(t, nil, args...); r.code != exitOK || r.stdout != "redlua "+locks.Version+"\n" {
			t.Fatalf("%q: exit %d, stdout %q\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runHere(t, nil, "version", "extra"); r.code != exitUsage || !strings.Contains(r.stderr, "no arguments") {
		t.Fatalf("version extra: exit %d\n%s", r.code, r.stderr)
	}
}

// The connection flags and REDIS_URL, without connecting.
func TestConnectionOptions(t *testing.T) {
	client := func(env map[string]string, args ...string) (redis.UniversalClient, error) {
		c := newCommand("test", "", func(k string) string { return env[k] })
		if err := c.parse(args, &bytes.Buffer{}); err != nil {
			return nil, err
		}
		cl, _, err := c.conn.client()
		if cl != nil {
			t.Cleanup(func() { cl.Close() })
		}
		return cl, err
	}
	opts := func(c redis.UniversalClient) *redis.Options { return c.(*redis.Client).Options() }

	c, err := client(map[string]string{"REDIS_URL": "rediss://ops:pw@cache.example:6380/3"})
	if err != nil {
		t.Fatal(err)
	}
	if o := opts(c); o.Addr != "cache.example:6380" || o.Username != "ops" || o.Password != "pw" || o.DB != 3 || o.TLSConfig == nil || o.TLSConfig.ServerName != "cache.example" {
		t.Fatalf("rediss URL: %+v", o)
	}
	c, err = client(map[string]string{"REDIS_URL": "redis://h:1", "REDISCLI_AUTH": "envpw"}, "--user", "u", "--db", "2", "--tls-skip-verify")
	if err != nil {
		t.Fatal(err)
	}
	if o := opts(c); o.Username != "u" || o.Password != "envpw" || o.DB != 2 || o.TLSConfig == nil || !o.TLSConfig.InsecureSkipVerify {
		t.Fatalf("flags over the URL: %+v", o)
	}
	c, err = client(map[string]string{"REDIS_URL": "redis://ignored:1"}, "--addr", "10.0.0.1:7000", "--tls")
	if err != nil {
		t.Fatal(err)
	}
	if o := opts(c); o.Addr != "10.0.0.1:7000" || o.TLSConfig == nil {
		t.Fatalf("--addr over REDIS_URL: %+v", o)
	}
	if c, err = client(nil); err != nil || opts(c).Addr != defaultAddr {
		t.Fatalf("default: %v", err)
	}
	if c, err = client(nil, "--addr", "a:1,b:2"); err != nil {
		t.Fatal(err)
	} else if _, ok := c.(*redis.ClusterClient); !ok {
		t.Fatalf("two addresses gave a %T, want a cluster client", c)
	}
	c, err = client(map[string]string{"REDIS_URL": "redis://ignored:1", "REDISCLI_AUTH": "pw"}, "--sentinel", "mymaster", "--addr", "s1:26379,s2:26379", "--db", "4")
	if err != nil {
		t.Fatal(err)
	}
	if o := opts(c); o.Addr != "FailoverClient" || o.Password != "pw" || o.DB != 4 {
		t.Fatalf("--sentinel: want a Sentinel failover client with the password and db, got %+v", o)
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--sentinel", "m"}, "--sentinel takes the Sentinels' addresses from --addr"},
		{map[string]string{"REDIS_URL": "redis://h:1"}, []string{"--sentinel", "m"}, "--sentinel takes"},
		{nil, []string{"--sentinel", "m", "--url", "redis://h:1"}, "--sentinel takes"},
		{nil, []string{"--sentinel", "", "--addr", "h:1"}, "--sentinel needs the name"},
		{nil, []string{"--addr", "h:1", "--sentinel-password", "pw"}, "--sentinel-password are for the Sentinels of --sentinel NAME"},
		{nil, []string{"--addr", "h:1", "--sentinel-user", "u"}, "--sentinel-user and"},
		{nil, []string{"--url", "redis://h:1", "--addr", "h:2"}, "not both"},
		{nil, []string{"--addr", "nohost"}, "host:port"},
		{nil, []string{"--addr", "a:1,b:2", "--db", "1"}, "cluster"},
		{nil, []string{"--dial-timeout", "0s"}, "dial-timeout"},
		{map[string]string{"REDIS_URL": "http://u:hunter2@h:1"}, nil, "$REDIS_URL"},
	} {
		_, err := client(tc.env, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v %q: err %v, want one naming %q (and no password)", tc.env, tc.args, err, tc.want)
		}
	}
}

// go.mod's go line and the README's "Go 1.N or later" name the same
// release (issue 13 item 9). The go line cannot be plain "go 1.26": a
// dependency (go-redis v9.23) requires 1.26.0, so it is go 1.26.0.
func TestGoLineMatchesREADME(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)(?:\.(\d+))?$`).FindSubmatch(mod)
	if line == nil {
		t.Fatal("go.mod has no go line")
	}
	if patch := string(line[3]); patch != "" && patch != "0" {
		t.Fatalf("go.mod says go %s.%s.%s: a module on Go %s.%s.0 gets \"updates to go.mod needed\"; use go %s.%s.0", line[1], line[2], patch, line[1], line[2], line[1], line[2])
	}
	want := "Go " + string(line[1]) + "." + string(line[2]) + " or later"
	if !bytes.Contains(readme, []byte(want)) {
		t.Fatalf("README does not say %q, as go.mod's go line does", want)
	}
}

// embeddedCount is how many scripts lua.FS holds, so tests do not hard-code it.
func embeddedCount(t *testing.T) int {
	t.Helper()
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	return len(reg.Scripts())
}

// --quorum: one client per primary, with the fail-fast settings NewQuorum
// asks for, and clear refusals of what a quorum cannot be.
func TestQuorumConnectionOptions(t *testing.T) {
	clients := func(args ...string) ([]redis.UniversalClient, error) {
		c := newCommand("test", "", func(string) string { return "" })
		c.conn.addQuorumFlag(c.fs)
		if err := c.parse(args, &bytes.Buffer{}); err != nil {
			return nil, err
		}
		cls, _, err := c.conn.quorumClients()
		for _, cl := range cls {
			t.Cleanup(func() { cl.Close() })
		}
		return cls, err
	}
	cls, err := clients("--quorum", "--addr", "a:1,b:2,c:3", "--password", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if len(cls) != 3 {
		t.Fatalf("%d clients, want 3", len(cls))
	}
	for i, want := range []string{"a:1", "b:2", "c:3"} {
		o := cls[i].(*redis.Client).Options()
		if o.Addr != want || o.Password != "pw" || o.MaxRetries != 1 || o.DialerRetries != 1 || o.MaxRetryBackoff > 5*time.Millisecond {
			t.Errorf("client %d: %+v, want %s with the password and fail-fast retries", i+1, o, want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--quorum"}, "needs --addr"},
		{[]string{"--quorum", "--addr", "a:1,b:2"}, "at least 3"},
		{[]string{"--quorum", "--url", "redis://h:1"}, "not --url"},
		{[]string{"--quorum", "--addr", "a:1,b:2,c:3", "--sentinel", "m"}, "exclude each other"},
		{[]string{"--quorum", "--addr", "a:1,b,c:3"}, "host:port"},
	} {
		if _, err := clients(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}
