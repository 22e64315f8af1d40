package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redlua/redlua/locks"
)

// storage stands for the resource a lock guards: it remembers the highest
// fencing token it has seen and refuses writes with a lower one.
type storage struct {
	mu      sync.Mutex
	highest int64
}

func (s *storage) write(token int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return fmt.Errorf("refused: token %d is older than %d", token, s.highest)
	}
	s.highest = token
	return nil
}

// watchdogAndFencing: one mutex, held longer than its TTL thanks to the
// watchdog, with a fencing token for the storage.
func (d *demo) watchdogAndFencing(ctx context.Context) error {
	name := d.name("report")
	d.say("\n1. A mutex with a watchdog and a fencing token.")
	c, err := locks.New(d.client, d.keyPrefix())
	if err != nil {
		return err
	}
	defer c.Close()
	// A 2s lease renewed every 667ms: a busy machine would have to stall
	// the watchdog for over a second to lose it (a 300ms lease was lost
	// once in 43 runs under load).
	m, err := c.Mutex(name, locks.WithTTL(2*time.Second), locks.WithWatchdog(locks.DefaultRenewFraction), locks.WithLabel("nightly report"))
	if err != nil {
		return err
	}
	lease, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	d.say("   Lock took %s with fencing token %d and a 2s lease.", name, lease.Token())
	info, err := c.Inspect(ctx, name)
	if err != nil {
		return err
	}
	d.say("   Inspect, as an operator would run it: held=%v, label %q, pid %d.", info.Held, info.Holder.Label, info.Holder.PID)
	time.Sleep(5 * time.Second)
	d.say("   After 5s of work, more than twice the lease: still held=%v (the watchdog renewed it).", lease.Err() == nil)
	if err := lease.Unlock(ctx); err != nil {
		return err
	}
	d.say("   Unlock stopped the watchdog first, then released the lock.")
	return nil
}

// contendedPair: two workers (two Clients, as two processes would have)
// want the same lock; the second is woken by the release, and the fencing
// token protects the storage from the first one's late write.
func (d *demo) contendedPair(ctx context.Context) error {
	name := d.name("invoice")
	d.say("\n2. Two workers, alice and bob, want the lock %s.", name)
	var clients [2]*locks.Client
	for i := range clients {
		c, err := locks.New(d.client, d.keyPrefix())
		if err != nil {
			return err
		}
		defer c.Close()
		clients[i] = c
	}
	aliceM, err := clients[0].Mutex(name, locks.WithTTL(10*time.Second))
	if err != nil {
		return err
	}
	bobM, err := clients[1].Mutex(name, locks.WithTTL(10*time.Second))
	if err != nil {
		return err
	}
	alice, err := aliceM.Lock(ctx)
	if err != nil {
		return err
	}
	store := &storage{}
	d.say("   alice holds it (token %d) and writes: %v.", alice.Token(), result(store.write(alice.Token())))
	_, err = bobM.TryLock(ctx)
	d.say("   bob's TryLock fails at once with ErrNotAcquired: %v.", errors.Is(err, locks.ErrNotAcquired))

	got := make(chan *locks.Lease, 1)
	failed := make(chan error, 1)
	go func() {
		l, err := bobM.Lock(ctx)
		if err != nil {
			failed <- err
			return
		}
		got <- l
	}()
	// Let bob queue up before alice releases; either order is correct.
	waitUntil(func() bool { return clients[1].Stats().Contended >= 2 })
	released := time.Now()
	if err := alice.Unlock(ctx); err != nil {
		return err
	}
	var bob *locks.Lease
	select {
	case bob = <-got:
	case err := <-failed:
		return err
	}
	// The lease had 10s left: only the release message can explain a
	// quick wake-up. The exact time depends on the machine, so the demo
	// says "before the lease ran out" rather than printing it.
	d.say("   alice unlocks; bob's Lock returns %s (woken by the release message, not by polling).",
		map[bool]string{true: "long before alice's lease would have run out", false: "only when alice's lease ran out"}[time.Since(released) < 5*time.Second])
	d.say("   bob's token is %d, larger than alice's; bob writes: %v.", bob.Token(), result(store.write(bob.Token())))
	d.say("   Had alice been paused past her lease, her late write with token %d would be %v.", alice.Token(), result(store.write(alice.Token())))
	return bob.Unlock(ctx)
}

func result(err error) string {
	if err != nil {
		return err.Error()
	}
	return "accepted"
}

// waitUntil polls cond for at most 5 seconds: the demo only uses it to
// make its output stable, never for correctness.
func waitUntil(cond func() bool) {
	for deadline := time.Now().Add(5 * time.Second); !cond() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// fairMode: three workers get a fair lock in arrival order; each release
// hands it to the next one inside the release script.
func (d *demo) fairMode(ctx context.Context) error {
	name := d.name("printer")
	d.say("\n3. Fair mode: workers get %s in arrival order.", name)
	c, err := locks.New(d.client, d.keyPrefix(), locks.WithTTL(10*time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := c.Mutex(name, locks.WithFair(time.Second))
	if err != nil {
		return err
	}
	first, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	d.say("   worker 1 holds it (token %d); workers 2 and 3 queue behind it.", first.Token())
	results := make(chan string, 2)
	var wg sync.WaitGroup
	for w := 2; w <= 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Lock(ctx)
			if err != nil {
				results <- fmt.Sprintf("worker %d failed: %v", w, err)
				return
			}
			results <- fmt.Sprintf("worker %d got it in its turn (token %d), handed over by the release script", w, l.Token())
			_ = l.Unlock(ctx)
		}()
		// Queue the workers in order, so the output is stable.
		waitUntil(func() bool {
			info, err := c.Inspect(ctx, name)
			return err != nil || info.Waiters >= int64(w-1)
		})
	}
	if err := first.Unlock(ctx); err != nil {
		return err
	}
	wg.Wait()
	close(results)
	for r := range results {
		d.say("   %s", r)
	}
	st := c.Stats()
	d.say("   This Client counted %d acquisitions and %d attempts that found the lock busy.", st.Acquired, st.Contended)
	return nil
}
