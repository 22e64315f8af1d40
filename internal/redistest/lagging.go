package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/faultproxy"
)

// LaggingPair is a primary and a replica whose replication link runs
// through a faultproxy.Proxy, so the test decides how far the replica lags:
// Link.SetDelay delays the stream, Link.Hold stops it.
type LaggingPair struct {
	Primary, Replica *Server
	Link             *faultproxy.Proxy // the replica's REPLICAOF points here
}

// NewLaggingPair starts a primary and a replica that replicates through a
// proxy, and returns once the replica is in sync. The link has no delay yet.
func NewLaggingPair(t testing.TB, opts ...Option) *LaggingPair {
	t.Helper()
	c := newConfig(opts)
	bin := RequireServer(t, opts...)
	primary := start(t, bin, c.args, 0)
	link := faultproxy.New(t, primary.Addr)
	replica := start(t, bin, c.args, 0)
	p := &LaggingPair{Primary: primary, Replica: replica, Link: link}
	if err := replica.ReplicaOf(context.Background(), link.Addr); err != nil {
		t.Fatal(err)
	}
	replica.WaitInSync(t, primary, 10*time.Second)
	return p
}

// Failover does what a crash of the primary followed by a manual promotion
// does: the replication stream stops where it is (bytes the proxy still
// held are lost with the primary), the primary dies, and the replica becomes
// a primary (REPLICAOF NO ONE). Primary and Replica swap: Primary is the
// promoted server, Replica the dead one until Rejoin.
func (p *LaggingPair) Failover(t testing.TB) {
	t.Helper()
	p.KillPrimary()
	if err := p.Primary.Promote(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// KillPrimary is Failover without the promotion, for a test whose
// Sentinel promotes the replica: afterwards Primary is the replica (not yet
// promoted) and Replica the dead server.
func (p *LaggingPair) KillPrimary() {
	p.Link.Hold()
	p.Primary.Kill()
	p.Link.KillAll()
	p.Link.Release()
	p.Primary, p.Replica = p.Replica, p.Primary
}

// Rejoin restarts the dead server (empty, as a crashed server without
// persistence) as a replica of the current primary through the link, and
// returns once it is in sync. The link's delay is whatever the test set;
// set it to 0 first for a quick sync.
func (p *LaggingPair) Rejoin(t testing.TB) {
	t.Helper()
	p.Link.SetTarget(p.Primary.Addr)
	p.Replica.Restart(t)
	if err := p.Replica.ReplicaOf(context.Background(), p.Link.Addr); err != nil {
		t.Fatal(err)
	}
	p.Replica.WaitInSync(t, p.Primary, 10*time.Second)
}

// ReplicaOf makes the server a replica of addr (host:port) at run time.
func (s *Server) ReplicaOf(ctx context.Context, addr string) error {
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		return fmt.Errorf("redistest: ReplicaOf needs host:port, got %q", addr)
	}
	if err := s.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		return fmt.Errorf("redistest: REPLICAOF %s on %s: %w", addr, s.Addr, err)
	}
	return nil
}

// Promote makes a replica a primary (REPLICAOF NO ONE), as an operator or a
// failover tool does.
func (s *Server) Promote(ctx context.Context) error {
	if err := s.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("redistest: promoting %s: %w", s.Addr, err)
	}
	return nil
}

// WaitInSync waits until the server, a replica of primary, reports its link
// up and has the primary's replication offset.
func (s *Server) WaitInSync(t testing.TB, primary *Server, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, func() (bool, string) {
		info, err := s.Do(context.Background(), "INFO", "replication").Text()
		if err != nil {
			return false, err.Error()
		}
		if !strings.Contains(info, "master_link_status:up") {
			return false, "the replica's link is not up: " + info
		}
		pinfo, err := primary.Do(context.Background(), "INFO", "replication").Text()
		if err != nil {
			return false, err.Error()
		}
		want, got := infoField(pinfo, "master_repl_offset"), infoField(info, "slave_repl_offset")
		return want == got && want != "", fmt.Sprintf("replica offset %s, primary offset %s", got, want)
	})
}

// ReplicationOffset returns the server's master_repl_offset.
func (s *Server) ReplicationOffset(ctx context.Context) (int64, error) {
	info, err := s.Do(ctx, "INFO", "replication").Text()
	if err != nil {
		return 0, fmt.Errorf("redistest: INFO replication on %s: %w", s.Addr, err)
	}
	return strconv.ParseInt(infoField(info, "master_repl_offset"), 10, 64)
}

func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
