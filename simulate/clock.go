package simulate

import (
	"sync"
	"time"
)

// Clock tells the simulator what time it is.
type Clock interface{ Now() time.Time }

// VirtualClock is a Clock that moves only when told to, so tests of TTLs and
// leases run in microseconds. It is safe for concurrent use.
type VirtualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewVirtualClock returns a clock that reads start until advanced.
func NewVirtualClock(start time.Time) *VirtualClock { return &VirtualClock{t: start} }

// Now returns the clock's time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *VirtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *VirtualClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// WallClock is the real time.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }
