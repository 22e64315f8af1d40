package evalsha

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// healthInterval is how long receiveLoop waits for a message before it
// pings the connection, as go-redis's own pub/sub channel does.
const healthInterval = 3 * time.Second

// nodeRouter gives each cluster node its own sharded multiplexer: SSUBSCRIBE
// must reach the primary that owns the channel's slot, and one connection
// per node carries all the channels that node owns.
type nodeRouter struct {
	cluster *redis.ClusterClient

	mu     sync.Mutex
	closed bool
	nodes  map[string]*multiplexer // by the primary's address
}

func newNodeRouter(cluster *redis.ClusterClient) *nodeRouter {
	return &nodeRouter{cluster: cluster, nodes: map[string]*multiplexer{}}
}

func (n *nodeRouter) subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	node, err := n.cluster.MasterForKey(ctx, channel)
	if err != nil {
		return nil, fmt.Errorf("evalsha: finding the cluster node of channel %s: %w", channel, err)
	}
	addr := node.Options().Addr
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, errors.New("evalsha: Subscribe after Close")
	}
	m := n.nodes[addr]
	if m == nil {
		// Opened through the cluster client, not the node's own client, so
		// a reconnect goes to whichever node owns the channels' slot then.
		m = newMultiplexer(func() *redis.PubSub { return n.cluster.SSubscribe(context.Background()) }, true, true)
		n.nodes[addr] = m
	}
	n.mu.Unlock()
	return m.subscribe(ctx, channel, deliver)
}

func (n *nodeRouter) close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	var first error
	for _, m := range n.nodes {
		if err := m.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// receiveLoop reads ps until it is closed. It exists because go-redis
// re-subscribes after a reconnect with one SSUBSCRIBE naming every channel,
// which a cluster node refuses with CROSSSLOT as soon as the channels live
// in different slots (they do: each lock has its own hash tag). So after a
// broken connection this loop re-subscribes channel by channel; the
// confirmations it gets back wake the handlers with an empty payload, as a
// reconnect must.
// resubscribe says whether the channels still need to be re-subscribed.
func (m *multiplexer) receiveLoop(ps *redis.PubSub, resubscribe bool) {
	failures := 0
	for !m.isClosed() {
		if resubscribe {
			resubscribe = !m.resubscribeEach(ps)
		}
		msg, err := ps.ReceiveTimeout(context.Background(), healthInterval)
		switch {
		case err == nil:
			failures = 0
			m.handle(msg)
		case m.isClosed() || errors.Is(err, redis.ErrClosed):
			return
		case isMoved(err):
			// This connection is on a node that does not own a channel:
			// after a reconnect with no channels left, go-redis picked a
			// random node, or the slot moved. Start over from the slots.
			m.rebuild(ps)
			return
		case isRedisError(err):
			// A refused subscribe command, such as the CROSSSLOT answer to
			// go-redis's own re-subscription; nothing to do here.
		case isTimeout(err):
			ctx, cancel := context.WithTimeout(context.Background(), healthInterval)
			if ps.Ping(ctx) != nil {
				resubscribe = true
			}
			cancel()
		default:
			// The connection broke; go-redis reconnects on the next call.
			resubscribe = true
			failures++
			time.Sleep(time.Duration(min(failures, 10)) * 50 * time.Millisecond)
		}
	}
}

// resubscribeEach sends one SSUBSCRIBE per wanted channel; it reports
// whether all were sent.
func (m *multiplexer) resubscribeEach(ps *redis.PubSub) bool {
	m.mu.Lock()
	channels := make([]string, 0, len(m.handlers))
	for ch := range m.handlers {
		channels = append(channels, ch)
	}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), healthInterval)
	defer cancel()
	for _, ch := range channels {
		if err := ps.SSubscribe(ctx, ch); err != nil {
			return false
		}
	}
	return true
}

// rebuild replaces old, which is connected to the wrong node, by a new
// PubSub that connects to the owner of the first channel it subscribes, and
// re-subscribes every channel with a handler on it.
func (m *multiplexer) rebuild(old *redis.PubSub) {
	m.mu.Lock()
	if m.closed || m.ps != old {
		m.mu.Unlock()
		return
	}
	// Rebuilding again at once would only hammer a cluster whose slot map
	// go-redis has not caught up with yet.
	wait := time.Until(m.lastRebuild.Add(time.Second))
	m.lastRebuild = time.Now()
	ps := m.open()
	m.ps = ps
	m.mu.Unlock()
	_ = old.Close()
	if wait > 0 {
		time.Sleep(min(wait, 250*time.Millisecond))
	}
	go m.receiveLoop(ps, !m.resubscribeEach(ps))
}

// replaced reports whether rebuild replaced ps.
func (m *multiplexer) replaced(ps *redis.PubSub) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ps != ps
}

func (m *multiplexer) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

func isMoved(err error) bool {
	kind, _, ok := parseRedirect(err)
	return ok && kind == "MOVED"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
