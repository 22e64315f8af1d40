package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/locks"
)

// fencing: a holder paused past its lease writes after the next holder,
// and the Redis fence (fence.write@1) refuses it.
func (d *demo) fencing(ctx context.Context) error {
	name := d.name("ledger")
	d.say("\n6. Fencing at the resource: a paused holder's write is refused (package fence, script %s).", fence.ScriptID)
	c, err := locks.New(d.client, d.keyPrefix())
	if err != nil {
		return err
	}
	defer c.Close()
	runner, err := evalsha.New(d.client)
	if err != nil {
		return err
	}
	f, err := fence.NewRedis(runner)
	if err != nil {
		return err
	}
	m, err := c.Mutex(name, locks.WithTTL(100*time.Millisecond))
	if err != nil {
		return err
	}
	a, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	d.say("   A holds %s (token %d, TTL 100ms, no watchdog), then pauses for 200ms (a GC, SIGSTOP).", name, a.Token())
	time.Sleep(200 * time.Millisecond)
	b, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	key := "{" + d.prefix + "}:ledger"
	if _, err := f.Write(ctx, b, d.prefix, fence.Set(key, "paid by B")); err != nil {
		return fmt.Errorf("B's fenced write: %w", err)
	}
	d.say("   B locks it (token %d) and writes: accepted.", b.Token())
	_, err = f.Write(ctx, a, d.prefix, fence.Set(key, "paid by A"))
	d.say("   A wakes up and writes: %v", err)
	return b.Unlock(ctx)
}
