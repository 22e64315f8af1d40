package locks

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// grantLinger is how long a grant channel stays subscribed after its last
// waiter left, so that a lock contended again soon needs no new SUBSCRIBE
// (a round trip during which a grant to its first waiter cannot reach it).
const grantLinger = 10 * time.Second

// grantHub routes the release script's grant messages, published on this
// Client's grant channel of a lock ("{name}:grant:<id>"), to the waiting
// Lock call they name: "grant <token> <attempt> <owner>" goes to the call
// of that attempt only.
// A Semaphore's queued Acquire calls wait on the same channel for
// "wake <owner>" (the owner is the call's own token).
// The Client's live leases of the lock listen on it too, for "revoke
// <attempt> <owner>": a forced unlock (lock.forceunlock) revoked that hold,
// and the lease ends at once (Lease.revoke).
// Each lock name has one subscription per Client, however many of its
// goroutines wait or hold leases.
type grantHub struct {
	mu   sync.Mutex
	subs map[string]*grantSub // by channel
}

// grantCall is one waiting Lock call: its attempt id and where its grants go.
type grantCall struct {
	attempt string
	grants  chan int64
}

type grantSub struct {
	channel     string
	ready       chan struct{} // closed once the subscription is confirmed (or failed)
	err         error
	unsubscribe func()
	waiters     map[string][]grantCall // owner -> its waiting calls
	leases      map[*Lease]struct{}    // live leases, told of forced unlocks
	revoked     []revocation           // recent "revoke" messages (see watch)
	users       int                    // waiting calls and live leases
	linger      func() bool            // stops the idle timer
}

// revocation is a "revoke" message kept for a while: a lease that a release
// handed to a waiter is built after the grant message arrived, and a
// forced unlock right after the grant may reach the channel first.
type revocation struct {
	attempt, owner string
	at             time.Time
}

// revocationMemory is how long a revocation that named an attempt is kept
// for a lease that starts later, and revocationsKept how many at most.
const (
	revocationMemory = time.Minute
	revocationsKept  = 64
)

// register adds a waiting call (owner, attempt) when the channel is
// already subscribed; ok is false otherwise (join subscribes).
func (h *grantHub) register(channel, owner, attempt string) (grants chan int64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := h.subs[channel]
	if sub == nil || !isClosed(sub.ready) || sub.err != nil {
		return nil, false
	}
	return h.add(sub, owner, attempt), true
}

// join registers a waiting call (owner, attempt), subscribing the channel
// first when needed; it returns once the subscription is confirmed.
func (h *grantHub) join(ctx context.Context, node Backend, channel, owner, attempt string) (chan int64, error) {
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]*grantSub{}
	}
	sub := h.live(node, channel)
	grants := h.add(sub, owner, attempt)
	h.mu.Unlock()
	select {
	case <-sub.ready:
		if sub.err != nil {
			h.leave(channel, owner, grants)
			return nil, sub.err
		}
		return grants, nil
	case <-ctx.Done():
		h.leave(channel, owner, grants)
		return nil, ctx.Err()
	}
}

// live returns the channel's subscription, starting one when there is none
// or the last one failed (its leases move to the new one); h.mu is held.
func (h *grantHub) live(node Backend, channel string) *grantSub {
	if h.subs == nil {
		h.subs = map[string]*grantSub{}
	}
	sub := h.subs[channel]
	if sub != nil && !(isClosed(sub.ready) && sub.err != nil) {
		return sub
	}
	fresh := &grantSub{channel: channel, ready: make(chan struct{}), waiters: map[string][]grantCall{}}
	if sub != nil {
		for l := range sub.leases {
			h.addLease(fresh, l)
		}
	}
	h.subs[channel] = fresh
	go h.subscribe(node, channel, fresh)
	return fresh
}

// watch makes a live lease listen for "revoke" messages on its Client's
// grant channel of the lock, subscribing when needed, without waiting for
// the subscription: a forced unlock that comes before it is confirmed (a
// round trip after the lease began) reaches the lease at its next renewal
// (the extend replies outcomeRevoked) or at Unlock.
func (h *grantHub) watch(node Backend, channel string, l *Lease) {
	h.mu.Lock()
	sub := h.live(node, channel)
	h.addLease(sub, l)
	revoked := false
	for _, r := range sub.revoked {
		if time.Since(r.at) < revocationMemory && l.revokedBy(r.attempt, r.owner) {
			revoked = true
		}
	}
	h.mu.Unlock()
	if revoked {
		l.revoke()
	}
}

// addLease is watch's and live's common part; h.mu is held.
func (h *grantHub) addLease(sub *grantSub, l *Lease) {
	if sub.leases == nil {
		sub.leases = map[*Lease]struct{}{}
	}
	sub.leases[l] = struct{}{}
	l.watched = sub
	sub.users++
	if sub.linger != nil {
		sub.linger()
		sub.linger = nil
	}
}

// unwatch ends a lease's listening; the subscription lingers as after the
// last waiter left.
func (h *grantHub) unwatch(l *Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := l.watched
	if sub == nil {
		return
	}
	l.watched = nil
	if _, ok := sub.leases[l]; !ok {
		return
	}
	delete(sub.leases, l)
	sub.users--
	h.idle(sub)
}

// idle starts the linger timer of a subscription no one uses; h.mu is held.
func (h *grantHub) idle(sub *grantSub) {
	if sub.users > 0 || !isClosed(sub.ready) || sub.linger != nil || h.subs[sub.channel] != sub {
		return
	}
	sub.linger = time.AfterFunc(grantLinger, func() { h.drop(sub.channel, sub) }).Stop
}

// parseRevocations reads a "revoke" message: "revoke <attempt> <owner>",
// or, for several holds of one Client, "revoke\n" then "<attempt> <owner
// bytes> <owner>\n" for each (an RWMutex call's identity holds a tab, and
// owner tokens may hold newlines: the length delimits the owner).
func parseRevocations(payload string) []revocation {
	if rest, ok := strings.CutPrefix(payload, "revoke "); ok {
		attempt, owner, ok := strings.Cut(rest, " ")
		if !ok || owner == "" {
			return nil
		}
		return []revocation{{attempt: attempt, owner: owner}}
	}
	rest, ok := strings.CutPrefix(payload, "revoke\n")
	if !ok {
		return nil
	}
	var out []revocation
	for rest != "" {
		attempt, after, ok1 := strings.Cut(rest, " ")
		size, after, ok2 := strings.Cut(after, " ")
		n, err := strconv.Atoi(size)
		if !ok1 || !ok2 || err != nil || n <= 0 || n >= len(after) || after[n] != '\n' {
			return out
		}
		out = append(out, revocation{attempt: attempt, owner: after[:n]})
		rest = after[n+1:]
	}
	return out
}

// revoke ends the leases that a "revoke" message (see parseRevocations)
// names, and remembers its revocations for a lease that starts right after
// (see revocation).
func (h *grantHub) revoke(channel string, revoked []revocation) {
	if len(revoked) == 0 {
		return
	}
	h.mu.Lock()
	sub := h.subs[channel]
	if sub == nil {
		h.mu.Unlock()
		return
	}
	var ended []*Lease
	for l := range sub.leases {
		for _, r := range revoked {
			if l.revokedBy(r.attempt, r.owner) {
				ended = append(ended, l)
				break
			}
		}
	}
	now := time.Now()
	kept := sub.revoked[:0]
	for _, r := range sub.revoked {
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
	sub.revoked = kept
	h.mu.Unlock()
	for _, l := range ended {
		l.revoke()
	}
}

// subscribe runs without a caller's context: the subscription outlives the
// call that started it.
func (h *grantHub) subscribe(node Backend, channel string, sub *grantSub) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unsubscribe, err := node.Subscribe(ctx, channel, func(payload string) { h.deliver(channel, payload) })
	h.mu.Lock()
	sub.unsubscribe, sub.err = unsubscribe, err
	if err == nil && sub.users == 0 {
		sub.linger = time.AfterFunc(grantLinger, func() { h.drop(channel, sub) }).Stop
	}
	h.mu.Unlock()
	close(sub.ready)
}

// add is register's and join's common part; h.mu is held.
func (h *grantHub) add(sub *grantSub, owner, attempt string) chan int64 {
	grants := make(chan int64, 1)
	sub.waiters[owner] = append(sub.waiters[owner], grantCall{attempt: attempt, grants: grants})
	sub.users++
	if sub.linger != nil {
		sub.linger()
		sub.linger = nil
	}
	return grants
}

// leave unregisters a waiting call; the subscription lingers a while.
func (h *grantHub) leave(channel, owner string, grants chan int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := h.subs[channel]
	if sub == nil {
		return
	}
	list := sub.waiters[owner]
	for i, g := range list {
		if g.grants == grants {
			list = append(list[:i:i], list[i+1:]...)
			sub.users--
			break
		}
	}
	if len(list) == 0 {
		delete(sub.waiters, owner)
	} else {
		sub.waiters[owner] = list
	}
	if sub.users == 0 && isClosed(sub.ready) && sub.linger == nil {
		sub.linger = time.AfterFunc(grantLinger, func() { h.drop(channel, sub) }).Stop
	}
}

// drop unsubscribes an idle channel.
func (h *grantHub) drop(channel string, sub *grantSub) {
	h.mu.Lock()
	if h.subs[channel] != sub || sub.users > 0 {
		h.mu.Unlock()
		return
	}
	delete(h.subs, channel)
	h.mu.Unlock()
	if sub.unsubscribe != nil {
		sub.unsubscribe()
	}
}

// deliver hands a grant to the call it names and tells the owner's other
// calls to look again (0); a "wake" (no attempt) goes to every call of the
// owner.
// An empty payload means the subscription reconnected and messages may
// have been lost: every waiter gets 0, "look again now".
func (h *grantHub) deliver(channel, payload string) {
	if strings.HasPrefix(payload, "revoke") {
		h.revoke(channel, parseRevocations(payload))
		return
	}
	token, attempt, owner, ok := parseGrant(payload)
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := h.subs[channel]
	if sub == nil {
		return
	}
	for who, list := range sub.waiters {
		if payload != "" && (!ok || who != owner) {
			continue
		}
		for _, g := range list {
			give := token
			// Attempts compare by their ids: a Mutex waiter's entry, and
			// so its grant, holds the bare id from mutex.acquire@14 on.
			if attempt != "" && attemptID(g.attempt) != attemptID(attempt) { // (an empty payload has no attempt)
				// Another call of the same owner: the grant is not its, and
				// the queue no longer has it (one entry per owner, now taken).
				// It looks again at once, to queue behind the new hold.
				give = 0
			}
			select {
			case g.grants <- give:
			default: // a wake-up is already pending
			}
		}
	}
}

// parseGrant parses "grant <token> <attempt> <owner>" and "wake <owner>"
// (a queued Semaphore call whose permits are free: token 0, look again).
// The owner is the rest of the message: an owner token may contain spaces.
func parseGrant(payload string) (token int64, attempt, owner string, ok bool) {
	if owner, found := strings.CutPrefix(payload, "wake "); found {
		return 0, "", owner, owner != ""
	}
	rest, found := strings.CutPrefix(payload, "grant ")
	if !found {
		return 0, "", "", false
	}
	t, rest, found := strings.Cut(rest, " ")
	if !found {
		return 0, "", "", false
	}
	if attempt, owner, found = strings.Cut(rest, " "); !found || attempt == "" {
		return 0, "", "", false
	}
	token, err := strconv.ParseInt(t, 10, 64)
	return token, attempt, owner, err == nil && token > 0
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
