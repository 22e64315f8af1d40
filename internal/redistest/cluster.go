package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterOptions shapes a test cluster.
type ClusterOptions struct {
	Primaries          int // default 3
	ReplicasPerPrimary int // default 0
}

// Cluster is a running Redis Cluster.
type Cluster struct {
	Nodes     []*Server // primaries first, then replicas
	Primaries []*Server
	Replicas  []*Server

	mu      sync.Mutex
	clients []*redis.ClusterClient
}

const slots = 16384

// NewCluster starts a Redis Cluster: the primaries split the 16384 slots
// evenly, each gets its replicas, and it returns once every node reports
// cluster_state:ok and sees every other node.
func NewCluster(t testing.TB, o ClusterOptions, opts ...Option) *Cluster {
	t.Helper()
	if o.Primaries <= 0 {
		o.Primaries = 3
	}
	c := newConfig(opts)
	bin := RequireServer(t, opts...)
	cl := &Cluster{}
	total := o.Primaries * (1 + o.ReplicasPerPrimary)
	for i := 0; i < total; i++ {
		bus, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		// A replica is listed in CLUSTER SLOTS only once its replication offset
		// moved, which an idle primary's pings do every repl-ping-replica-period
		// (10 s by default): 1 s keeps cluster start-up near 3 s.
		args := append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--repl-ping-replica-period", "1"}, c.args...)
		s := start(t, bin, args, bus)
		cl.Nodes = append(cl.Nodes, s)
	}
	cl.Primaries = cl.Nodes[:o.Primaries]
	cl.Replicas = cl.Nodes[o.Primaries:]
	t.Cleanup(cl.closeClients)

	ctx := context.Background()
	ids := make([]string, total)
	for i, s := range cl.Nodes {
		id, err := s.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatalf("redistest: CLUSTER MYID on %s: %v", s.Addr, err)
		}
		ids[i] = id
	}
	per := slots / o.Primaries
	for i, s := range cl.Primaries {
		lo, hi := i*per, (i+1)*per-1
		if i == o.Primaries-1 {
			hi = slots - 1
		}
		if err := s.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("redistest: ADDSLOTSRANGE on %s: %v", s.Addr, err)
		}
	}
	for _, s := range cl.Nodes[1:] {
		bus := busPortOf(s)
		if err := cl.Nodes[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", s.Port, bus).Err(); err != nil {
			t.Fatalf("redistest: CLUSTER MEET %s: %v", s.Addr, err)
		}
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		for _, s := range cl.Nodes {
			nodes, err := s.Do(ctx, "CLUSTER", "NODES").Text()
			if err != nil {
				return false, err.Error()
			}
			if n := strings.Count(strings.TrimSpace(nodes), "\n") + 1; n != total {
				return false, fmt.Sprintf("%s knows %d of %d nodes", s.Addr, n, total)
			}
		}
		return true, ""
	})
	for r, s := range cl.Replicas {
		primary := ids[r%o.Primaries]
		waitFor(t, 10*time.Second, func() (bool, string) {
			err := s.Do(ctx, "CLUSTER", "REPLICATE", primary).Err()
			return err == nil, fmt.Sprintf("CLUSTER REPLICATE on %s: %v", s.Addr, err)
		})
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		for _, s := range cl.Nodes {
			info, err := s.Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil {
				return false, err.Error()
			}
			if !strings.Contains(info, "cluster_state:ok") {
				return false, s.Addr + ": " + info
			}
			shape, err := slotShape(ctx, s)
			if err != nil {
				return false, err.Error()
			}
			want := fmt.Sprintf("%d ranges, %d replicas", o.Primaries, len(cl.Replicas))
			if shape != want {
				return false, fmt.Sprintf("%s sees %s, want %s", s.Addr, shape, want)
			}
		}
		for _, s := range cl.Replicas {
			info, err := s.Do(ctx, "INFO", "replication").Text()
			if err != nil || !strings.Contains(info, "master_link_status:up") {
				return false, fmt.Sprintf("replica %s not in sync: %v", s.Addr, err)
			}
		}
		return true, ""
	})
	return cl
}

func busPortOf(s *Server) int {
	for i, a := range s.args {
		if a == "--cluster-port" && i+1 < len(s.args) {
			p, _ := strconv.Atoi(s.args[i+1])
			return p
		}
	}
	return s.Port + 10000
}

// slotShape summarises CLUSTER SLOTS as "N ranges, M replicas".
func slotShape(ctx context.Context, s *Server) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ranges, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return "", err
	}
	replicas := 0
	for _, r := range ranges {
		replicas += len(r.Nodes) - 1
	}
	return fmt.Sprintf("%d ranges, %d replicas", len(ranges), replicas), nil
}

// Addrs returns every node's address, primaries first.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr
	}
	return out
}

// Client returns a cluster client seeded with every node, closed when the
// test ends.
func (c *Cluster) Client(opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	o := &redis.ClusterOptions{Addrs: c.Addrs()}
	for _, f := range opts {
		f(o)
	}
	cc := redis.NewClusterClient(o)
	c.mu.Lock()
	c.clients = append(c.clients, cc)
	c.mu.Unlock()
	return cc
}

func (c *Cluster) closeClients() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cc := range c.clients {
		_ = cc.Close()
	}
	c.clients = nil
}
