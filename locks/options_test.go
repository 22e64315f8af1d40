package locks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// Every option × lock kind: accepted (and, where cheap to see, with its
// effect), or rejected with an error naming the option and the kind.
func TestOptionsPerKind(t *testing.T) {
	clock := simulate.NewVirtualClock(time.Now())
	options := map[string]locks.Option{
		"WithTTL":              locks.WithTTL(time.Minute),
		"WithWatchdog":         locks.WithWatchdog(0.5),
		"WithReentrant":        locks.WithReentrant(),
		"WithOwner":            locks.WithOwner("me"),
		"WithFair":             locks.WithFair(time.Second),
		"WithWaiterTTL":        locks.WithWaiterTTL(time.Second),
		"WithReaderPreference": locks.WithReaderPreference(),
		"WithLabel":            locks.WithLabel("x"),
		"WithObserver":         locks.WithObserver(func(locks.Event) {}),
		"WithHook":             locks.WithHook(func(locks.Event) {}),
		"WithLogger":           locks.WithLogger(slog.New(slog.DiscardHandler)),
		"WithReplicas":         locks.WithReplicas(1, time.Second),
		"WithClock":            locks.WithClock(clock),
	}
	// rejected[kind] lists the options a kind refuses; every other option is
	// accepted. WithReplicas needs a backend that can WAIT, which the
	// simulator is not: it is refused with a message saying so instead.
	rejected := map[string][]string{
		"Mutex":        {"WithReaderPreference", "WithClock"},
		"RWMutex":      {"WithFair", "WithClock"},
		"Semaphore":    {"WithFair", "WithReentrant", "WithOwner", "WithReaderPreference", "WithClock"},
		"MultiLock":    {"WithFair", "WithReentrant", "WithOwner", "WithReaderPreference", "WithClock"},
		"quorum Mutex": {"WithFair", "WithReaderPreference", "WithWaiterTTL", "WithReplicas", "WithClock"},
	}
	srv := simulate.New()
	c, err := locks.NewWithBackend(srv)
	if err != nil {
		t.Fatal(err)
	}
	q, err := locks.NewQuorumWithBackends([]locks.Backend{simulate.New(), simulate.New(), simulate.New()})
	if err != nil {
		t.Fatal(err)
	}
	make := map[string]func(locks.Option) error{
		"Mutex":   func(o locks.Option) error { _, err := c.Mutex("m", o); return err },
		"RWMutex": func(o locks.Option) error { _, err := c.RWMutex("rw", o); return err },
		"Semaphore": func(o locks.Option) error {
			_, err := c.Semaphore("s", 2, o)
			return err
		},
		"MultiLock":    func(o locks.Option) error { _, err := c.MultiLock([]string{"a", "b"}, o); return err },
		"quorum Mutex": func(o locks.Option) error { _, err := q.Mutex("qm", o); return err },
	}
	for kind, build := range make {
		for name, opt := range options {
			t.Run(kind+"/"+name, func(t *testing.T) {
				err := build(opt)
				refused := false
				for _, r := range rejected[kind] {
					refused = refused || r == name
				}
				switch {
				case refused && (err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), kind)):
					t.Fatalf("%s with %s = %v, want an error naming both", kind, name, err)
				case !refused && name == "WithReplicas":
					if err == nil || !strings.Contains(err.Error(), "WAIT") {
						t.Fatalf("%s with %s on the simulator = %v, want an error saying the backend cannot WAIT", kind, name, err)
					}
				case !refused && err != nil:
					t.Fatalf("%s with %s = %v, want it accepted", kind, name, err)
				}
			})
		}
	}

	// Client-wide defaults apply where they fit: WithFair on the Client
	// does not stop an RWMutex or a Semaphore from being made.
	fair, err := locks.NewWithBackend(simulate.New(), locks.WithFair(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fair.RWMutex("rw"); err != nil {
		t.Errorf("a fair Client's RWMutex: %v", err)
	}
	if _, err := fair.Semaphore("s", 1); err != nil {
		t.Errorf("a fair Client's Semaphore: %v", err)
	}

	// Some effects: the TTL, the label, the owner, the hook.
	ctx := context.Background()
	var events []locks.EventKind
	m, _ := c.Mutex("effects", locks.WithTTL(time.Minute), locks.WithLabel("nightly"), locks.WithOwner("owner-1"),
		locks.WithHook(func(e locks.Event) { events = append(events, e.Kind) }))
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := c.Inspect(ctx, "effects")
	if info.Owner != "owner-1" || info.Holder.Label != "nightly" || info.TTL <= 50*time.Second {
		t.Errorf("Inspect = %+v: want owner-1, label nightly, a TTL near a minute", info)
	}
	l.Unlock(ctx)
	if fmt.Sprint(events) != fmt.Sprint([]locks.EventKind{locks.EventAcquired, locks.EventReleased}) {
		t.Errorf("hook saw %v", events)
	}

	// Bad values are errors, never silently replaced by defaults.
	for _, bad := range []locks.Option{locks.WithWatchdog(-1), locks.WithFair(-time.Second), locks.WithOwner(""),
		locks.WithHook(nil), locks.WithObserver(nil), locks.WithTTL(0), locks.WithReplicas(0, time.Second), locks.WithClock(nil), nil} {
		if _, err := c.Mutex("bad", bad); err == nil {
			t.Errorf("a bad option was accepted")
		}
	}
	if _, err := locks.NewWithBackend(srv, nil); err == nil || !errors.Is(err, err) || !strings.Contains(err.Error(), "nil") {
		t.Errorf("NewWithBackend(srv, nil) = %v, want an error about the nil option", err)
	}
}
