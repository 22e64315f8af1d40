package main

import (
	"context"
	"time"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// scripts shows what the locks run on: versioned Lua files, registered,
// loaded and called through the evalsha Runner.
func (d *demo) scripts(ctx context.Context) error {
	reg, err := registry.New(lua.FS)
	if err != nil {
		return err
	}
	d.say("\n4. Underneath, the locks are %d versioned Lua scripts; the registry checked each header against its body.", len(reg.Scripts()))
	d.say("   A Mutex runs the latest version of each (older ones stay registered, unchanged, for clients that still run them):")
	var inspect *registry.Script
	for _, name := range []string{"mutex.acquire", "mutex.release", "lock.inspect"} {
		s, err := reg.Get(name)
		if err != nil {
			return err
		}
		d.say("   %-16s sha1 %s…  keys %v  args %v", s.ID(), s.SHA1[:12], s.Keys, s.Args)
		inspect = s
	}
	if err := evalsha.Load(ctx, d.client, reg); err != nil {
		return err
	}
	runner, err := evalsha.New(d.client)
	if err != nil {
		return err
	}
	defer runner.Close()
	// The report is on a name no lock uses, so it reads nothing and writes
	// nothing; what matters here is how the calls reach the server. Every
	// key arrives in KEYS, one per name the header declares, all under one
	// hash tag.
	tag := "{" + d.name("report") + "}"
	keys := make([]string, len(inspect.Keys))
	for i, k := range inspect.Keys {
		keys[i] = tag + ":" + k
	}
	keys[0] = tag
	for range 3 {
		if err := runner.Run(ctx, inspect, keys, "0", 100).Err(); err != nil { // the first page
			return err
		}
	}
	st := runner.Stats()
	d.say("   SCRIPT LOAD sent them to the server; then the Runner called %s %d times.", inspect.ID(), st.Calls)
	// Say what happened, not what should have: a server that cannot compile
	// the "#!lua" line (miniredis, Redis 6) caches the legacy source under
	// another SHA1, and the Runner learns that from one NOSCRIPT.
	if st.NoScript == 0 {
		d.say("   Every call was a plain EVALSHA: no NOSCRIPT fallback was needed.")
	} else {
		was := "was"
		if st.NoScript > 1 {
			was = "were"
		}
		d.say("   %d of them came back NOSCRIPT and %s re-sent with the source (this server runs the scripts' legacy form); the rest were plain EVALSHA.", st.NoScript, was)
	}
	return nil
}

// simulator shows the offline Redis: the same locks on a virtual clock, so
// a test sees a lease expire without sleeping.
func (d *demo) simulator(ctx context.Context) error {
	d.say("\n5. The simulator runs the same scripts offline, on a virtual clock.")
	clock := simulate.NewVirtualClock(time.Now())
	c, err := locks.NewWithBackend(simulate.New(simulate.WithClock(clock)))
	if err != nil {
		return err
	}
	m, err := c.Mutex("job", locks.WithTTL(time.Hour))
	if err != nil {
		return err
	}
	if _, err := m.Lock(ctx); err != nil {
		return err
	}
	_, err = m.TryLock(ctx)
	d.say("   A one-hour lease is taken; a second TryLock fails: %v.", err != nil)
	clock.Advance(time.Hour + time.Second)
	l, err := m.TryLock(ctx)
	if err != nil {
		return err
	}
	d.say("   The clock moves an hour in no time; the lease expired and TryLock succeeds (token %d).", l.Token())
	return nil
}
