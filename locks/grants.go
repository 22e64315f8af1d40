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
// Each lock name has one subscription per Client while its goroutines
// wait (and a while after: grantLinger); held leases do not keep it (they
// hear of a forced unlock on the Client's revoke channel, see revokeHub).
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
	users       int                    // waiting calls
	linger      func() bool            // stops the idle timer
}

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
// or the last one failed; h.mu is held.
func (h *grantHub) live(node Backend, channel string) *grantSub {
	if h.subs == nil {
		h.subs = map[string]*grantSub{}
	}
	sub := h.subs[channel]
	if sub != nil && !(isClosed(sub.ready) && sub.err != nil) {
		return sub
	}
	fresh := &grantSub{channel: channel, ready: make(chan struct{}), waiters: map[string][]grantCall{}}
	h.subs[channel] = fresh
	go h.subscribe(node, channel, fresh)
	return fresh
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
