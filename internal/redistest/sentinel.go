package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelSet is a primary with one replica, watched by one Sentinel.
type SentinelSet struct {
	Primary, Replica *Server
	Sentinel         *Server // a redis-server in sentinel mode
	MasterName       string
}

// Sentinel starts a primary, a replica and a Sentinel that monitors them
// under the name "redlua", and returns once the Sentinel knows both.
func Sentinel(t testing.TB, opts ...Option) *SentinelSet {
	t.Helper()
	primary, replica := PrimaryReplica(t, opts...)
	return watch(t, primary, replica, 2000, opts)
}

// NewLaggingSentinel starts a LaggingPair (the replica replicates through a
// proxy the test controls) watched by one Sentinel that declares the primary
// down after 2 s (Sentinel pings every second at most, so less than 2 s
// makes a promoted primary that was slow to answer one ping look down and
// starts a failover nobody asked for), so a test can kill the primary and let Sentinel
// promote the lagging replica. The returned set's Primary and Replica are
// the servers at start; the pair tracks them across failovers.
func NewLaggingSentinel(t testing.TB, opts ...Option) (*SentinelSet, *LaggingPair) {
	t.Helper()
	pair := NewLaggingPair(t, opts...)
	return watch(t, pair.Primary, pair.Replica, 2000, opts), pair
}

// WaitPrimary waits until the Sentinel names want as the primary, as it
// does once a failover completed.
func (s *SentinelSet) WaitPrimary(t testing.TB, want *Server, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, func() (bool, string) {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr})
		defer c.Close()
		addr, err := c.GetMasterAddrByName(context.Background(), s.MasterName).Result()
		if err != nil {
			return false, err.Error()
		}
		got := strings.Join(addr, ":")
		return got == want.Addr, fmt.Sprintf("sentinel names %s as the primary, want %s; sentinel log ends:\n%s", got, want.Addr, lastLines(s.Sentinel.Log(), 25))
	})
}

// WaitReplicaHealthy waits until the Sentinel lists replica as a healthy
// replica (flags exactly "slave", link to its primary ok), so that it is a
// candidate for the next promotion; a replica just restarted stays in
// Sentinel's subjective-down state for a moment.
func (s *SentinelSet) WaitReplicaHealthy(t testing.TB, replica *Server, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, func() (bool, string) {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr})
		defer c.Close()
		replicas, err := c.Replicas(context.Background(), s.MasterName).Result()
		if err != nil {
			return false, err.Error()
		}
		for _, r := range replicas {
			if r["port"] == strconv.Itoa(replica.Port) {
				ok := r["flags"] == "slave" && r["master-link-status"] == "ok"
				return ok, fmt.Sprintf("sentinel sees replica %s as %v", replica.Addr, r)
			}
		}
		return false, fmt.Sprintf("sentinel does not list %s among %v", replica.Addr, replicas)
	})
}

func watch(t testing.TB, primary, replica *Server, downAfterMillis int, opts []Option) *SentinelSet {
	t.Helper()
	bin := RequireServer(t, opts...)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	// Sentinel rewrites its config file, so it must be a writable file of its own.
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nsentinel monitor redlua 127.0.0.1 %d 1\nsentinel down-after-milliseconds redlua %d\n"+
		// A replica pointing elsewhere (at a test's proxy) is left alone this long.
		"sentinel failover-timeout redlua 30000\n",
		port, dir, filepath.Join(dir, "redis.log"), primary.Port, downAfterMillis)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, t: t, binary: bin, dir: dir,
		args: []string{conf, "--sentinel"}}
	t.Cleanup(s.stop)
	if err := s.launch(); err != nil {
		t.Fatalf("redistest: starting sentinel: %v", err)
	}
	set := &SentinelSet{Primary: primary, Replica: replica, Sentinel: s, MasterName: "redlua"}
	waitFor(t, 15*time.Second, func() (bool, string) {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		defer c.Close()
		replicas, err := c.Replicas(context.Background(), "redlua").Result()
		if err != nil {
			return false, err.Error()
		}
		for _, r := range replicas {
			if r["port"] == strconv.Itoa(replica.Port) && !strings.Contains(r["flags"], "disconnected") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("sentinel does not see the replica yet: %v", replicas)
	})
	return set
}

// Client returns a Sentinel-backed failover client for the primary, closed
// when the test ends.
func (s *SentinelSet) Client(opts ...func(*redis.FailoverOptions)) *redis.Client {
	o := &redis.FailoverOptions{MasterName: s.MasterName, SentinelAddrs: []string{s.Sentinel.Addr}}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewFailoverClient(o)
	s.Sentinel.mu.Lock()
	s.Sentinel.clients = append(s.Sentinel.clients, c)
	s.Sentinel.mu.Unlock()
	return c
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
