package locks

import "time"

// Clock is the time a Client's leases measure their deadlines and run their
// watchdog on. simulate.VirtualClock satisfies it, so lease expiry and
// renewal follow virtual time in offline tests (WithClock).
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed, never inside AfterFunc itself
	// (not even for d <= 0: the Client arms timers while holding its own
	// locks, which f takes); stop cancels it and reports whether it did so
	// before f ran.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// wallClock is the real, monotonic time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
