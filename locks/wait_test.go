package locks

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeWait scripts a waiter: try returns the outcomes in order, and every
// hook call is logged, so a test can check what the loop did in which order.
type fakeWait struct {
	mu       sync.Mutex
	log      []string
	wakes    map[string]chan int64 // by channel, created on subscribe
	outcomes []fakeTry
	settle   int64 // onMessage settles on this token
	subErr   error
}

type fakeTry struct {
	done    bool
	channel string
	hint    time.Duration
	err     error
}

func (f *fakeWait) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *fakeWait) waiter() waiter {
	if f.wakes == nil {
		f.wakes = map[string]chan int64{}
	}
	return waiter{
		subscribe: func(_ context.Context, channel string) (<-chan int64, func(), error) {
			f.record("subscribe " + channel)
			if f.subErr != nil {
				return nil, nil, f.subErr
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.wakes[channel] == nil {
				f.wakes[channel] = make(chan int64, 1)
			}
			return f.wakes[channel], func() { f.record("stop " + channel) }, nil
		},
		try: func(context.Context) (bool, string, time.Duration, error) {
			f.record("try")
			if len(f.outcomes) == 0 {
				return true, "", 0, errors.New("test: tried more often than scripted")
			}
			o := f.outcomes[0]
			f.outcomes = f.outcomes[1:]
			return o.done, o.channel, o.hint, o.err
		},
		onMessage: func(token int64) bool {
			f.record("message")
			return f.settle != 0 && token == f.settle
		},
		failed: func(err error) error { return errors.New("failed: " + err.Error()) },
	}
}

func (f *fakeWait) steps() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, ", ")
}

// The caller's attempt ran before any subscription: the loop subscribes
// and looks again at once, without waiting out the hint (an hour here), so
// a release between that attempt and the subscription is not lost.
func TestWaitSubscribesThenTriesAtOnce(t *testing.T) {
	f := &fakeWait{outcomes: []fakeTry{{done: true}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.waiter().wait(ctx, "a", time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if got, want := f.steps(), "subscribe a, try, stop a"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
}

// The caller's attempt ran subscribed already (a Mutex whose grant channel
// was subscribed): the loop waits first; a message onMessage declines (a
// stale grant) leads to an attempt, and one it accepts ends the wait
// without another.
func TestWaitSubscribedWaitsForTheMessage(t *testing.T) {
	f := &fakeWait{settle: 42, outcomes: []fakeTry{{channel: "g", hint: time.Hour}}}
	wake := make(chan int64, 1)
	f.wakes = map[string]chan int64{"g": wake}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.waiter().wait(ctx, "g", time.Hour, true) }()
	wake <- 7
	select {
	case wake <- 42: // taken once the loop read 7 and tried again
	case err := <-done:
		t.Fatalf("wait ended before the grant: %v (steps %s)", err, f.steps())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := f.steps(), "subscribe g, message, try, message, stop g"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
}

// With no message, the wait ends when the attempt's hint passes: the loop
// looks again by itself (a holder that died publishes nothing).
func TestWaitBoundedByTheHint(t *testing.T) {
	f := &fakeWait{outcomes: []fakeTry{
		{channel: "a", hint: 10 * time.Millisecond},
		{channel: "a", hint: 10 * time.Millisecond},
		{done: true},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.waiter().wait(ctx, "a", time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if got, want := f.steps(), "subscribe a, try, try, try, stop a"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
}

// An attempt that names another channel moves the subscription there and
// looks again at once.
func TestWaitFollowsTheBlocker(t *testing.T) {
	f := &fakeWait{outcomes: []fakeTry{
		{channel: "b", hint: time.Hour},
		{done: true, err: errors.New("boom")},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.waiter().wait(ctx, "a", time.Hour, false); err == nil || err.Error() != "boom" {
		t.Fatalf("wait = %v, want try's own error unchanged", err)
	}
	if got, want := f.steps(), "subscribe a, try, stop a, subscribe b, try, stop b"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
}

// The wait's own failures (subscribing, ctx ending asleep) go through
// failed; nothing stays subscribed.
func TestWaitFailures(t *testing.T) {
	f := &fakeWait{subErr: errors.New("no pubsub")}
	if err := f.waiter().wait(context.Background(), "a", time.Hour, false); err == nil || err.Error() != "failed: no pubsub" {
		t.Fatalf("wait = %v, want the subscribe error through failed", err)
	}
	if got, want := f.steps(), "subscribe a"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}

	f = &fakeWait{outcomes: []fakeTry{{channel: "a", hint: time.Hour}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := f.waiter().wait(ctx, "a", time.Hour, false)
	if err == nil || err.Error() != "failed: "+context.DeadlineExceeded.Error() {
		t.Fatalf("wait = %v, want the deadline through failed", err)
	}
	if got, want := f.steps(), "subscribe a, try, stop a"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
}
