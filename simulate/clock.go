package simulate

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the simulator what time it is.
type Clock interface{ Now() time.Time }

// VirtualClock is a Clock that moves only when told to, so tests of TTLs and
// leases run in microseconds. Its timers (AfterFunc) fire inside Advance and
// Set, in deadline order, with the clock reading each timer's deadline while
// it runs: code that schedules work on the clock (the locks package's
// watchdog, with locks.WithClock) runs exactly when virtual time passes its
// moment, however busy the machine is. It is safe for concurrent use.
type VirtualClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*virtualTimer
	seq    uint64
}

type virtualTimer struct {
	at      time.Time
	seq     uint64 // breaks ties: timers due at the same moment fire in the order they were set
	f       func()
	stopped bool
}

// NewVirtualClock returns a clock that reads start until advanced.
func NewVirtualClock(start time.Time) *VirtualClock { return &VirtualClock{t: start} }

// Now returns the clock's time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// AfterFunc calls f once the clock has been advanced by d (at least to
// Now()+d). f never runs inside AfterFunc, even for d <= 0: it runs in the
// next Advance or Set, on that caller's goroutine, so it may call into the
// simulator but must not Advance the clock itself. stop cancels the call; it
// reports whether it did so before f ran.
func (c *VirtualClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	vt := &virtualTimer{at: c.t.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, vt)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if vt.stopped {
			return false
		}
		vt.stopped = true
		c.drop(vt)
		return true
	}
}

// Advance moves the clock forward by d, firing the timers due on the way.
func (c *VirtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.t.Add(d)
	c.mu.Unlock()
	c.moveTo(target)
}

// Set moves the clock to t, firing the timers due on the way when t is later.
func (c *VirtualClock) Set(t time.Time) { c.moveTo(t) }

// moveTo fires due timers one at a time (a timer may set new ones, which
// fire too when due before target), then settles on target.
func (c *VirtualClock) moveTo(target time.Time) {
	for {
		c.mu.Lock()
		next := c.nextDue(target)
		if next == nil {
			c.t = target
			c.mu.Unlock()
			return
		}
		next.stopped = true
		c.drop(next)
		if next.at.After(c.t) {
			c.t = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

func (c *VirtualClock) nextDue(target time.Time) *virtualTimer {
	sort.Slice(c.timers, func(i, j int) bool {
		a, b := c.timers[i], c.timers[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.seq < b.seq
	})
	if len(c.timers) == 0 || c.timers[0].at.After(target) {
		return nil
	}
	return c.timers[0]
}

func (c *VirtualClock) drop(vt *virtualTimer) {
	for i, x := range c.timers {
		if x == vt {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}

// WallClock is the real time.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }
