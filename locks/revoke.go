package locks

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// revokeChannelPrefix follows the Client's key prefix in the name of its
// revoke channel: "<key prefix>redlua:revoke:<client id>". The key prefix
// comes first so that an ACL user limited to the prefix's channels
// (&app:*) hears it.
const revokeChannelPrefix = "redlua:revoke:"

// classicPubSub is a Backend that can subscribe a classic channel
// (SUBSCRIBE) when its Subscribe is sharded (see shardedPubSub):
// evalsha.Runner and simulate.Server. A Client hears revocations on its
// revoke channel, in no lock's slot, so with classic pub/sub.
type classicPubSub interface {
	SubscribeClassic(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error)
}

// revokeHub routes lock.forceunlock's revocation messages, published on
// this Client's revoke channel (one per Client, whatever it holds), to the
// live leases they name: "revoke <lock bytes> <lock>\n" then
// "<attempt> <owner bytes> <owner>\n" for each revoked hold of the Client.
// The channel is subscribed once, at the Client's first live lease, and
// stays subscribed (a subscription per held lock cost the server more than
// the lock's own hash).
type revokeHub struct {
	mu          sync.Mutex
	channel     string
	started     bool          // a subscription was started (and did not fail)
	ready       chan struct{} // closed once it is confirmed (or failed)
	unsubscribe func()
	leases      map[string]map[*Lease]struct{} // live leases by lock key
	revoked     []revocation                   // recent revocations (see watch)
}

// revocation is a revoked hold kept for a while: a lease that a release
// handed to a waiter is built after the grant message arrived, and a
// forced unlock right after the grant may reach the Client first.
type revocation struct {
	lock, attempt, owner string
	at                   time.Time
}

// revocationMemory is how long a revocation that named an attempt is kept
// for a lease that starts later, and revocationsKept how many at most (of
// every lock of the Client).
const (
	revocationMemory = time.Minute
	revocationsKept  = 256
)

// revokePrefix is the Client's revoke channel without its id, as
// lock.forceunlock takes it: the key prefix, then revokeChannelPrefix.
func (c *Client) revokePrefix() string { return c.defaults.keyPrefix + revokeChannelPrefix }

// subscribeRevokes subscribes the Client's revoke channel on node, with
// classic SUBSCRIBE whatever the Client's grant channels use.
func (c *Client) subscribeRevokes(ctx context.Context, node Backend, deliver func(string)) (func(), error) {
	if c.publish == "SPUBLISH" {
		cp, ok := node.(classicPubSub)
		if !ok {
			return nil, errNoClassicPubSub
		}
		return cp.SubscribeClassic(ctx, c.revokes.channel, deliver)
	}
	return node.Subscribe(ctx, c.revokes.channel, deliver)
}

// errNoClassicPubSub: a sharded Backend without SubscribeClassic; its
// leases learn of a forced unlock at their next renewal.
var errNoClassicPubSub = errors.New("locks: the backend subscribes with SSUBSCRIBE and has no SubscribeClassic for the revoke channel")

// watch makes a live lease listen for its revocation, subscribing the
// Client's revoke channel when it is not yet, without waiting for the
// subscription: a forced unlock that comes before it is confirmed (a round
// trip after the Client's first lease began) reaches the lease at its next
// renewal (the extend replies outcomeRevoked) or at Unlock.
func (c *Client) watch(l *Lease) {
	h := &c.revokes
	h.mu.Lock()
	if !h.started {
		h.started = true
		h.ready = make(chan struct{})
		go c.subscribeRevokeChannel(h.ready)
	}
	if h.leases == nil {
		h.leases = map[string]map[*Lease]struct{}{}
	}
	set := h.leases[l.k.lock]
	if set == nil {
		set = map[*Lease]struct{}{}
		h.leases[l.k.lock] = set
	}
	set[l] = struct{}{}
	l.watched = true
	revoked := false
	for _, r := range h.revoked {
		if r.lock == l.k.lock && time.Since(r.at) < revocationMemory && l.revokedBy(r.attempt, r.owner) {
			revoked = true
		}
	}
	h.mu.Unlock()
	if revoked {
		l.revoke()
	}
}

// subscribeRevokeChannel runs without a caller's context: the subscription
// outlives the lease that started it. A failed one is started again by the
// next lease.
func (c *Client) subscribeRevokeChannel(ready chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := &c.revokes
	unsubscribe, err := c.subscribeRevokes(ctx, c.backend(), h.deliver)
	h.mu.Lock()
	if err != nil {
		h.started = false
	} else {
		h.unsubscribe = unsubscribe
	}
	h.mu.Unlock()
	close(ready)
}

// unwatch ends a lease's listening; the revoke channel stays subscribed.
func (h *revokeHub) unwatch(l *Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !l.watched {
		return
	}
	l.watched = false
	set := h.leases[l.k.lock]
	delete(set, l)
	if len(set) == 0 {
		delete(h.leases, l.k.lock)
	}
}

// stop unsubscribes the revoke channel (Client.Close).
func (h *revokeHub) stop() {
	h.mu.Lock()
	unsubscribe := h.unsubscribe
	h.unsubscribe = nil
	h.mu.Unlock()
	if unsubscribe != nil {
		unsubscribe()
	}
}

// deliver reads a message of the revoke channel (an empty one, after a
// reconnect, says nothing: a lease that missed its revocation learns of it
// at its next renewal).
func (h *revokeHub) deliver(payload string) {
	lock, revoked := parseRevocations(payload)
	h.revoke(lock, revoked)
}

// parseRevocations reads a revoke message: "revoke <lock bytes> <lock>\n",
// then "<attempt> <owner bytes> <owner>\n" for each revoked hold (an
// RWMutex call's identity holds a tab, and lock names and owner tokens may
// hold spaces and newlines: the lengths delimit them).
func parseRevocations(payload string) (lock string, out []revocation) {
	rest, ok := strings.CutPrefix(payload, "revoke ")
	if !ok {
		return "", nil
	}
	lock, rest, ok = cutSized(rest)
	if !ok || lock == "" {
		return "", nil
	}
	for rest != "" {
		attempt, after, ok := strings.Cut(rest, " ")
		if !ok {
			break
		}
		owner, after, ok := cutSized(after)
		if !ok || owner == "" {
			break
		}
		out = append(out, revocation{lock: lock, attempt: attempt, owner: owner})
		rest = after
	}
	return lock, out
}

// cutSized reads "<bytes> <text>\n" at the start of s: the text, and what
// follows the newline.
func cutSized(s string) (text, rest string, ok bool) {
	size, after, found := strings.Cut(s, " ")
	n, err := strconv.Atoi(size)
	if !found || err != nil || n < 0 || n >= len(after) || after[n] != '\n' {
		return "", "", false
	}
	return after[:n], after[n+1:], true
}

// revoke ends the leases of lock that revoked names, and remembers the
// revocations for a lease that starts right after (see revocation).
func (h *revokeHub) revoke(lock string, revoked []revocation) {
	if len(revoked) == 0 {
		return
	}
	h.mu.Lock()
	var ended []*Lease
	for l := range h.leases[lock] {
		for _, r := range revoked {
			if l.revokedBy(r.attempt, r.owner) {
				ended = append(ended, l)
				break
			}
		}
	}
	now := time.Now()
	kept := h.revoked[:0]
	for _, r := range h.revoked {
		if now.Sub(r.at) < revocationMemory {
			kept = append(kept, r)
		}
	}
	for _, r := range revoked {
		// Only a revocation that names a call is kept: an owner alone
		// (a reentrant owner) could take the lock again meanwhile.
		if r.attempt != "" {
			r.at = now
			kept = append(kept, r)
		}
	}
	if len(kept) > revocationsKept {
		kept = append(kept[:0:0], kept[len(kept)-revocationsKept:]...)
	}
	h.revoked = kept
	h.mu.Unlock()
	for _, l := range ended {
		l.revoke()
	}
}
