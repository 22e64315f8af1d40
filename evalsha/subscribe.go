package evalsha

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Subscribe calls deliver for every message published on channel until the
// returned unsubscribe is called. It returns only once the server has
// confirmed the subscription, so a message published after Subscribe returns
// is not missed: the locks package subscribes before an attempt that may
// fail, then waits for the release message.
//
// Channels share connections: one per Runner, or with sharded pub/sub (see
// ShardedPubSub) one per cluster node, holding the channels whose slots that
// node owns. deliver runs on the connection's receive goroutine and must not
// block. After a connection is re-established (messages may have been missed
// meanwhile), deliver is called with an empty payload, so a waiter can retry
// at once instead of waiting out its timeout.
func (r *Runner) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	if !r.usable() {
		return nil, errNoRunner
	}
	if err := checkContext(ctx, "Subscribe"); err != nil {
		return nil, err
	}
	if channel == "" || deliver == nil {
		return nil, errors.New("evalsha: Subscribe needs a channel name and a deliver function")
	}
	r.subOnce.Do(func() { r.sub = r.newSubscriber() })
	if r.sub == nil {
		return nil, errors.New("evalsha: Subscribe after Close")
	}
	return r.sub.subscribe(ctx, channel, deliver)
}

// SubscribeClassic is Subscribe with classic SUBSCRIBE even when Subscribe
// uses SSUBSCRIBE (ShardedPubSub), for a channel that is in no key's slot,
// such as one per process: its publishers use classic PUBLISH, which a
// script may send on a cluster whatever its keys, and whose messages reach
// a subscriber on any node. Without sharded pub/sub it is Subscribe. Its
// channels share one connection (to any node of a cluster), which go-redis
// re-subscribes after a reconnect; deliver then gets an empty payload.
func (r *Runner) SubscribeClassic(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	if !r.usable() {
		return nil, errNoRunner
	}
	if !r.sharded {
		return r.Subscribe(ctx, channel, deliver)
	}
	if err := checkContext(ctx, "SubscribeClassic"); err != nil {
		return nil, err
	}
	if channel == "" || deliver == nil {
		return nil, errors.New("evalsha: SubscribeClassic needs a channel name and a deliver function")
	}
	r.classicOnce.Do(func() {
		r.classic = newMultiplexer(func() *redis.PubSub { return r.client.Subscribe(context.Background()) }, false, false)
	})
	if r.classic == nil {
		return nil, errors.New("evalsha: SubscribeClassic after Close")
	}
	return r.classic.subscribe(ctx, channel, deliver)
}

// ShardedPubSub reports whether Subscribe uses SSUBSCRIBE (sharded pub/sub,
// Redis 7): then publishers must use SPUBLISH, from a script whose keys
// share the channel's slot. It is true on a *redis.ClusterClient unless
// WithShardedPubSub(false) was given.
func (r *Runner) ShardedPubSub() bool { return r != nil && r.sharded }

// Close releases the shared pub/sub connections, if any were opened. It does
// not close the client, which the caller owns.
func (r *Runner) Close() error {
	if r == nil {
		return errNoRunner
	}
	r.backgroundMu.Lock()
	r.closed = true
	r.backgroundMu.Unlock()
	r.background.Wait()
	r.subOnce.Do(func() {}) // no subscriber may start after Close
	r.classicOnce.Do(func() {})
	var err error
	if r.sub != nil {
		err = r.sub.close()
	}
	if r.classic != nil {
		if cerr := r.classic.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// subscriber is what Subscribe runs on: one multiplexer, or a router of one
// multiplexer per cluster node.
type subscriber interface {
	subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error)
	close() error
}

func (r *Runner) newSubscriber() subscriber {
	if !r.sharded {
		return newMultiplexer(func() *redis.PubSub { return r.client.Subscribe(context.Background()) }, false, false)
	}
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		return newNodeRouter(cc)
	}
	// Outside cluster mode the server checks no slots, so go-redis's own
	// re-subscription (all channels in one SSUBSCRIBE) works.
	return newMultiplexer(func() *redis.PubSub { return r.client.SSubscribe(context.Background()) }, true, false)
}

type handler struct{ deliver func(string) }

// multiplexer fans one *redis.PubSub out to many handlers.
type multiplexer struct {
	open    func() *redis.PubSub // a PubSub without channels; it connects on the first (S)SUBSCRIBE
	sharded bool                 // SSUBSCRIBE/SUNSUBSCRIBE instead of SUBSCRIBE/UNSUBSCRIBE
	// ownLoop: receive with receiveLoop, which re-subscribes channel by
	// channel after a reconnect (see there), instead of go-redis's channel.
	ownLoop  bool
	loopOnce sync.Once

	mu          sync.Mutex
	ps          *redis.PubSub
	lastRebuild time.Time // see rebuild
	closed      bool
	handlers    map[string]map[*handler]struct{}
	confirmed   map[string]bool
	waiting     map[string][]chan struct{}
	// requested counts SUBSCRIBE commands sent and not yet confirmed, so a
	// confirmation nobody asked for is recognised as go-redis re-subscribing
	// after a reconnect.
	requested map[string]int
}

func newMultiplexer(open func() *redis.PubSub, sharded, ownLoop bool) *multiplexer {
	return &multiplexer{
		open:      open,
		sharded:   sharded,
		ownLoop:   ownLoop,
		handlers:  map[string]map[*handler]struct{}{},
		confirmed: map[string]bool{},
		waiting:   map[string][]chan struct{}{},
		requested: map[string]int{},
	}
}

func (m *multiplexer) subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	h := &handler{deliver: deliver}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("evalsha: Subscribe after Close")
	}
	if m.ps == nil {
		// Opened without channels: go-redis connects lazily on the first SUBSCRIBE.
		m.ps = m.open()
		if !m.ownLoop {
			go m.receive(m.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)))
		}
	}
	hs := m.handlers[channel]
	if hs == nil {
		hs = map[*handler]struct{}{}
		m.handlers[channel] = hs
	}
	hs[h] = struct{}{}
	unsubscribe := func() { m.remove(channel, h) }
	if m.confirmed[channel] {
		m.mu.Unlock()
		return unsubscribe, nil
	}
	// Every subscriber still unconfirmed sends its own SUBSCRIBE: the server
	// treats repeats as no-ops, and no one depends on another's request.
	done := make(chan struct{})
	m.waiting[channel] = append(m.waiting[channel], done)
	m.requested[channel]++
	ps := m.ps
	m.mu.Unlock()

	if err := m.send(ctx, ps, channel); err != nil && !m.replaced(ps) {
		m.abandon(channel, h, done, true)
		return nil, fmt.Errorf("evalsha: subscribing to %s: %w", channel, err)
	}
	// (A PubSub replaced meanwhile by rebuild was closed under us; the new
	// one subscribes every channel with a handler, this one included.)
	if m.ownLoop {
		// Started only now: before its first channel, a cluster PubSub
		// would connect to a random node instead of the channel's owner.
		m.loopOnce.Do(func() { go m.receiveLoop(ps, false) })
	}
	select {
	case <-done:
		return unsubscribe, nil
	case <-ctx.Done():
		m.abandon(channel, h, done, false)
		return nil, fmt.Errorf("evalsha: waiting for the subscription to %s: %w", channel, ctx.Err())
	}
}

// abandon undoes a subscribe that failed or was cancelled before its
// confirmation arrived.
func (m *multiplexer) abandon(channel string, h *handler, done chan struct{}, notSent bool) {
	m.mu.Lock()
	w := m.waiting[channel]
	for i, d := range w {
		if d == done {
			m.waiting[channel] = append(w[:i:i], w[i+1:]...)
			break
		}
	}
	if len(m.waiting[channel]) == 0 {
		delete(m.waiting, channel)
	}
	if notSent {
		m.requested[channel]--
	}
	m.mu.Unlock()
	m.remove(channel, h)
}

func (m *multiplexer) remove(channel string, h *handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	hs := m.handlers[channel]
	if _, ok := hs[h]; !ok {
		return
	}
	delete(hs, h)
	if len(hs) > 0 || m.closed {
		return
	}
	delete(m.handlers, channel)
	delete(m.confirmed, channel)
	if len(m.waiting[channel]) > 0 {
		return // someone else is subscribing to it right now
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Best effort: a stray subscription only costs unread messages.
	if m.sharded {
		_ = m.ps.SUnsubscribe(ctx, channel)
	} else {
		_ = m.ps.Unsubscribe(ctx, channel)
	}
}

// send sends the subscribe command for channel.
func (m *multiplexer) send(ctx context.Context, ps *redis.PubSub, channel string) error {
	if m.sharded {
		return ps.SSubscribe(ctx, channel)
	}
	return ps.Subscribe(ctx, channel)
}

func (m *multiplexer) receive(in <-chan any) {
	for msg := range in {
		m.handle(msg)
	}
}

func (m *multiplexer) handle(msg any) {
	switch msg := msg.(type) {
	case *redis.Subscription:
		if msg.Kind == "subscribe" || msg.Kind == "ssubscribe" {
			m.confirm(msg.Channel)
		}
	case *redis.Message:
		m.dispatch(msg.Channel, msg.Payload)
	}
}

// confirm marks channel as subscribed and releases its waiters. A second
// confirmation of a channel already confirmed means go-redis reconnected and
// re-subscribed: messages may have been lost, so handlers get a wake-up.
func (m *multiplexer) confirm(channel string) {
	m.mu.Lock()
	reconnect := m.confirmed[channel] && m.requested[channel] == 0
	if m.requested[channel] > 0 {
		m.requested[channel]--
	}
	if _, wanted := m.handlers[channel]; wanted {
		m.confirmed[channel] = true
	}
	for _, done := range m.waiting[channel] {
		close(done)
	}
	delete(m.waiting, channel)
	m.mu.Unlock()
	if reconnect {
		m.dispatch(channel, "")
	}
}

func (m *multiplexer) dispatch(channel, payload string) {
	m.mu.Lock()
	hs := make([]*handler, 0, len(m.handlers[channel]))
	for h := range m.handlers[channel] {
		hs = append(hs, h)
	}
	m.mu.Unlock()
	for _, h := range hs {
		h.deliver(payload)
	}
}

func (m *multiplexer) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if m.ps != nil {
		return m.ps.Close()
	}
	return nil
}
