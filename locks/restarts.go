package locks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultQuorumMaxTTL is the longest lease of a quorum Client without
// WithMaxTTL, twice DefaultTTL: a restarted server of the quorum counts
// again once it has been up this long (plus a drift margin).
const DefaultQuorumMaxTTL = time.Minute

// restartGuard decides whether a quorum's server counts towards a majority.
// A server that restarted without persisting every write forgot the holds
// it granted; counting it while one of them may still be live lets a
// second owner win a majority (Redlock's known weak spot). So a server
// counts only once it has been up, by its own INFO, for longer than the
// longest lease (maxTTL) plus a drift margin, or when it persists every
// write (appendonly with appendfsync always), which makes it remember.
//
// The server is asked (INFO server and persistence, CONFIG GET
// appendfsync, in one round trip) the first time it answers and again
// after every new connection to it: a restarted server is only reached
// through a new connection, which the go-redis client's dial hook counts.
// Between new connections, the answer is kept.
type restartGuard struct {
	maxTTL time.Duration
	off    bool // a test's knob: every server counts
	nodes  []*nodeHealth
}

// nodeHealth is what the restart guard knows of one server.
type nodeHealth struct {
	rc    redis.UniversalClient // nil: the backend cannot report (it always counts)
	dials atomic.Uint64         // connections dialled so far

	mu      sync.Mutex
	checked bool
	seen    uint64 // dials when the kept state was asked for
	state   nodeState
}

// nodeState is one server's report, as the guard keeps it.
type nodeState struct {
	runID      string
	unknown    bool      // the server reports no run id and uptime: it counts
	restarted  bool      // the run id changed since an earlier report
	persistent bool      // appendonly with appendfsync always
	startedBy  time.Time // the server surely started no earlier (local clock)
	countsFrom time.Time // when the server counts, unless persistent
}

// dialCounter is a go-redis hook that counts the connections a client
// dials.
type dialCounter struct{ n *atomic.Uint64 }

func (d dialCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		d.n.Add(1)
		return conn, err
	}
}
func (dialCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (dialCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// redisClientOf is a Backend with a go-redis client (evalsha.Runner).
type redisClientOf interface{ Client() redis.UniversalClient }

// newRestartGuard watches the servers of backends that have a go-redis
// client; the others (simulate.Server) always count.
func newRestartGuard(backends []Backend, maxTTL time.Duration) *restartGuard {
	g := &restartGuard{maxTTL: maxTTL, nodes: make([]*nodeHealth, len(backends))}
	for i, b := range backends {
		h := &nodeHealth{}
		if rb, ok := b.(redisClientOf); ok && !isNilClient(rb.Client()) {
			h.rc = rb.Client()
			h.rc.AddHook(dialCounter{&h.dials})
		}
		g.nodes[i] = h
	}
	return g
}

// notCounted is the answer of a server that restarted too recently to
// count towards a majority.
type notCounted struct {
	st  nodeState
	max time.Duration
}

func (e *notCounted) Error() string {
	seen := ""
	if e.st.restarted {
		seen = ", with a new run id since this Client last asked"
	}
	return fmt.Sprintf("restarted, not counted until %s (up since %s at the latest%s; a server without appendfsync always counts once up longer than the longest lease, WithMaxTTL %v, plus a drift margin: it may have forgotten holds it granted before)",
		e.st.countsFrom.Format("15:04:05.000"), e.st.startedBy.Format("15:04:05.000"), seen, e.max)
}

// check reports nil when server i counts towards a majority, or why not.
func (g *restartGuard) check(ctx context.Context, i int) error {
	if g == nil || g.off {
		return nil
	}
	h := g.nodes[i]
	if h.rc == nil {
		return nil
	}
	dials := h.dials.Load()
	h.mu.Lock()
	st, fresh := h.state, h.checked && h.seen == dials
	h.mu.Unlock()
	if !fresh {
		var err error
		if st, err = h.ask(ctx, g.maxTTL, dials); err != nil {
			return err
		}
	}
	if st.unknown || st.persistent || !time.Now().Before(st.countsFrom) {
		return nil
	}
	return &notCounted{st: st, max: g.maxTTL}
}

// ask asks the server for its run id, uptime and persistence, and keeps
// the answer unless a newer one (asked after more dials) is kept already.
func (h *nodeHealth) ask(ctx context.Context, maxTTL time.Duration, dials uint64) (nodeState, error) {
	pipe := h.rc.Pipeline()
	info := pipe.Info(ctx, "server", "persistence")
	fsync := pipe.ConfigGet(ctx, "appendfsync")
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	received := time.Now()
	fields := map[string]string{}
	if err := info.Err(); err != nil {
		var reply redis.Error
		if !errors.As(err, &reply) {
			return nodeState{}, fmt.Errorf("asking whether the server restarted (INFO): %w", err)
		}
		// The server refuses INFO (an ACL, a renamed command): it cannot
		// tell, below.
	}
	for _, line := range strings.Split(info.Val(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	runID := fields["run_id"]
	up, err := strconv.ParseInt(fields["uptime_in_seconds"], 10, 64)
	if runID == "" || err != nil || up < 0 {
		// A server that does not report its run id and uptime (miniredis,
		// INFO refused) cannot tell whether it restarted: it counts, as a
		// backend without a go-redis client does, and a delayed restart is
		// its operator's to keep (docs/failure-model.md).
		return h.keep(nodeState{unknown: true}, dials), nil
	}
	// Redis computes uptime_in_seconds from whole seconds (its cached
	// unix time less its start time, both truncated), so the server has
	// surely been up for more than uptime_in_seconds − 1 seconds, plus the
	// fraction of the current second that server_time_usec shows.
	surely := time.Duration(up-1) * time.Second
	if usec, err := strconv.ParseInt(fields["server_time_usec"], 10, 64); err == nil && usec >= 0 {
		surely += time.Duration(usec%1e6) * time.Microsecond
	}
	surely = max(surely, 0)
	st := nodeState{runID: runID, startedBy: received.Add(-surely)}
	st.countsFrom = st.startedBy.Add(maxTTL + driftMargin(maxTTL))
	if fields["aof_enabled"] == "1" {
		// A server that refuses CONFIG GET (renamed, ACL) is taken not
		// to persist every write.
		if cfg, err := fsync.Result(); err == nil && strings.EqualFold(cfg["appendfsync"], "always") {
			st.persistent = true
		}
	}
	return h.keep(st, dials), nil
}

// keep records st, asked for after dials connections, unless a report
// asked for later is kept already, and returns st.
func (h *nodeHealth) keep(st nodeState, dials uint64) nodeState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checked && st.runID != "" && h.state.runID != "" && h.state.runID != st.runID {
		st.restarted = true
	}
	if !h.checked || dials >= h.seen {
		h.state, h.seen, h.checked = st, dials, true
	}
	return st
}

// restartsFor makes the guard of a quorum Client over backends, with the
// Client's WithMaxTTL or DefaultQuorumMaxTTL, and checks that the Client's
// TTL is within that bound.
func (c *Client) restartsFor(backends []Backend) error {
	if c.defaults.maxTTL == 0 {
		c.defaults.maxTTL = DefaultQuorumMaxTTL
	}
	if c.defaults.ttl > c.defaults.maxTTL {
		return fmt.Errorf("locks: a quorum Client with TTL %v needs WithMaxTTL of at least that (the longest lease; the default is %v)", c.defaults.ttl, DefaultQuorumMaxTTL)
	}
	c.restarts = newRestartGuard(backends, c.defaults.maxTTL)
	return nil
}

// serverIdentity names the server a backend talks to, for NewQuorum's
// duplicate check: its address and database as configured (not resolved),
// or the backend itself when it has no address.
func serverIdentity(b Backend) any {
	rb, ok := b.(redisClientOf)
	if !ok {
		return b
	}
	switch rc := rb.Client().(type) {
	case *redis.Client:
		if o := rc.Options(); o.Addr != "" && o.Addr != "FailoverClient" {
			return fmt.Sprintf("%s %s db %d", o.Network, strings.ToLower(o.Addr), o.DB)
		}
	}
	return rb.Client()
}

// describeIdentity shows a server identity in an error.
func describeIdentity(id any) string {
	if s, ok := id.(string); ok {
		return s
	}
	return fmt.Sprintf("the same %T", id)
}
