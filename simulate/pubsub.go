package simulate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// publication is a message published while the server lock was held; it is
// delivered once the lock is released.
type publication struct {
	channel, message string
	sharded          bool
}

type subscriber struct{ deliver func(string) }

// chanKey names a subscription: shard channels (SSUBSCRIBE/SPUBLISH) are
// apart from ordinary ones, as in Redis, where a PUBLISH never reaches a
// shard subscriber of the same name nor an SPUBLISH an ordinary one.
type chanKey struct {
	name    string
	sharded bool
}

// subscribers are the in-process subscriptions of a Server. They have their
// own lock so that deliver functions run with neither lock held.
type subscribers struct {
	mu       sync.Mutex
	channels map[chanKey]map[*subscriber]struct{}
}

func (ss *subscribers) count(ch chanKey) int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return int64(len(ss.channels[ch]))
}

// Subscribe calls deliver for every message PUBLISHed on channel, by a
// script or by Do, until the returned unsubscribe is called. Messages are
// delivered synchronously, in order, after the script or command that
// published them has finished and released the server (so deliver may
// call back into the Server), on the goroutine that ran it. As with
// evalsha.Runner, deliver must not block: it would hold up that caller.
// SPUBLISH messages go to shard channels: see SSubscribe. The signature is
// the one evalsha.Runner offers, so code written against either backend
// can use both.
func (s *Server) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	return s.subscribe(ctx, "Subscribe", chanKey{name: channel}, deliver)
}

// SubscribeClassic is Subscribe (the simulator's Subscribe is classic
// already), as evalsha.Runner offers it for a per-process channel when its
// Subscribe is sharded.
func (s *Server) SubscribeClassic(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	return s.subscribe(ctx, "SubscribeClassic", chanKey{name: channel}, deliver)
}

// SSubscribe is Subscribe for a shard channel, as SSUBSCRIBE is: deliver
// gets every message SPUBLISHed on channel, and no PUBLISHed one. Delivery
// follows Subscribe's rules; SPUBLISH replies the number of shard
// subscribers.
func (s *Server) SSubscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	return s.subscribe(ctx, "SSubscribe", chanKey{name: channel, sharded: true}, deliver)
}

func (s *Server) subscribe(ctx context.Context, method string, ch chanKey, deliver func(payload string)) (unsubscribe func(), err error) {
	if err := s.checkCall(ctx, strings.ToLower(method)+" to ", strconv.Quote(truncate(ch.name, 64))); err != nil {
		return nil, err
	}
	if ch.name == "" || deliver == nil {
		return nil, fmt.Errorf("simulate: %s needs a channel name and a deliver function", method)
	}
	sub := &subscriber{deliver: deliver}
	ss := &s.subs
	ss.mu.Lock()
	if ss.channels == nil {
		ss.channels = map[chanKey]map[*subscriber]struct{}{}
	}
	if ss.channels[ch] == nil {
		ss.channels[ch] = map[*subscriber]struct{}{}
	}
	ss.channels[ch][sub] = struct{}{}
	ss.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ss.mu.Lock()
			defer ss.mu.Unlock()
			delete(ss.channels[ch], sub)
			if len(ss.channels[ch]) == 0 {
				delete(ss.channels, ch)
			}
		})
	}, nil
}

// deliver hands published messages to the subscribers of their channels.
// It runs without s.mu held.
func (s *Server) deliver(pubs []publication) {
	for _, p := range pubs {
		ch := chanKey{name: p.channel, sharded: p.sharded}
		s.subs.mu.Lock()
		subs := make([]*subscriber, 0, len(s.subs.channels[ch]))
		for sub := range s.subs.channels[ch] {
			subs = append(subs, sub)
		}
		s.subs.mu.Unlock()
		for _, sub := range subs {
			sub.deliver(p.message)
		}
	}
}

// publisher returns the CallContext.Publish function that records messages
// in *into and answers with the number of receivers, as PUBLISH and
// SPUBLISH do.
func (s *Server) publisher(into *[]publication) func(channel, message string, sharded bool) int64 {
	return func(channel, message string, sharded bool) int64 {
		*into = append(*into, publication{channel: channel, message: message, sharded: sharded})
		return s.subs.count(chanKey{name: channel, sharded: sharded})
	}
}

// publish is the sandbox's CallContext.Publish: it records into the running script.
func (sb *sandbox) publish(channel, message string, sharded bool) int64 {
	return sb.srv.publisher(&sb.run.published)(channel, message, sharded)
}
