package simulate

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// publication is a message published while the server lock was held; it is
// delivered once the lock is released.
type publication struct {
	channel, message string
	sharded          bool
}

type subscriber struct{ deliver func(string) }

// subscribers are the in-process subscriptions of a Server. They have their
// own lock so that deliver functions run with neither lock held.
type subscribers struct {
	mu       sync.Mutex
	channels map[string]map[*subscriber]struct{}
}

func (ss *subscribers) count(channel string) int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return int64(len(ss.channels[channel]))
}

// Subscribe calls deliver for every message PUBLISHed on channel, by a
// script or by Do, until the returned unsubscribe is called. Messages are
// delivered synchronously, in order, after the script or command that
// published them has finished and released the server (so deliver may
// call back into the Server), on the goroutine that ran it. As with
// evalsha.Runner, deliver must not block: it would hold up that caller.
// SPUBLISH messages go to shard channels, which this API does not
// subscribe to. The signature is the one evalsha.Runner offers, so code
// written against either backend can use both.
func (s *Server) Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("simulate: subscribe to %q: %w", channel, err)
	}
	if channel == "" || deliver == nil {
		return nil, errors.New("simulate: Subscribe needs a channel name and a deliver function")
	}
	sub := &subscriber{deliver: deliver}
	ss := &s.subs
	ss.mu.Lock()
	if ss.channels == nil {
		ss.channels = map[string]map[*subscriber]struct{}{}
	}
	if ss.channels[channel] == nil {
		ss.channels[channel] = map[*subscriber]struct{}{}
	}
	ss.channels[channel][sub] = struct{}{}
	ss.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ss.mu.Lock()
			defer ss.mu.Unlock()
			delete(ss.channels[channel], sub)
			if len(ss.channels[channel]) == 0 {
				delete(ss.channels, channel)
			}
		})
	}, nil
}

// deliver hands published messages to the subscribers of their channels.
// It runs without s.mu held.
func (s *Server) deliver(pubs []publication) {
	for _, p := range pubs {
		if p.sharded {
			continue
		}
		s.subs.mu.Lock()
		subs := make([]*subscriber, 0, len(s.subs.channels[p.channel]))
		for sub := range s.subs.channels[p.channel] {
			subs = append(subs, sub)
		}
		s.subs.mu.Unlock()
		for _, sub := range subs {
			sub.deliver(p.message)
		}
	}
}

// publisher returns the CallContext.Publish function that records messages
// in *into and answers with the number of receivers, as PUBLISH does.
func (s *Server) publisher(into *[]publication) func(channel, message string, sharded bool) int64 {
	return func(channel, message string, sharded bool) int64 {
		*into = append(*into, publication{channel: channel, message: message, sharded: sharded})
		if sharded {
			return 0
		}
		return s.subs.count(channel)
	}
}

// publish is the sandbox's CallContext.Publish: it records into the running script.
func (sb *sandbox) publish(channel, message string, sharded bool) int64 {
	return sb.srv.publisher(&sb.run.published)(channel, message, sharded)
}
