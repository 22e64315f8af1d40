package explore_test

import (
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// benchMutexModel is two clients taking and releasing the fixture mutex
// (mutex.acquire@1, mutex.release@1 of internal/testscripts),
// with leases running out: the model the speed target names.
func benchMutexModel(tb testing.TB, steps, ticks int) *explore.Model {
	return &explore.Model{
		Name:       "two-client mutex",
		Actors:     []explore.Actor{benchMutexClient(tb, "a"), benchMutexClient(tb, "b")},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: steps, MaxTicks: ticks},
	}
}

// benchMutexClient takes the fixture mutex and releases it, again and again.
func benchMutexClient(tb testing.TB, name string) explore.Actor {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		tb.Fatal(err)
	}
	acquire, _ := reg.Lookup("mutex.acquire@1")
	release, _ := reg.Lookup("mutex.release@1")
	const ttl = 100 * time.Millisecond
	return explore.Actor{Name: name, Steps: []explore.Step{
		{Label: "acquire", Script: acquire, Keys: []string{"{m}", "{m}:fence"}, Args: []any{name, ttl.Milliseconds(), "0", ""},
			Then: func(c *explore.Ctx) string {
				if c.Int() != 1 {
					return "acquire"
				}
				c.Acquire(ttl)
				return "release"
			}},
		{Label: "release", Script: release, Keys: []string{"{m}"}, Args: []any{name, "{m}:released"},
			Then: func(c *explore.Ctx) string { c.Release(); return "acquire" }},
	}}
}

// BenchmarkTwoActorMutex reports the explorer's speed in distinct states
// per second of wall time and per CPU-second (the one-core figure when
// run with -cpu 1, and the honest one on a machine shared with others).
func BenchmarkTwoActorMutex(b *testing.B) {
	m := benchMutexModel(b, 12, 4)
	var states int
	var elapsed time.Duration
	cpu0, cpuOK := cpuTime()
	for b.Loop() {
		res, err := explore.Run(m)
		if err != nil || res.Violation != nil {
			b.Fatalf("%v %v", err, res.Violation)
		}
		states += res.States
		elapsed += res.Elapsed
	}
	b.ReportMetric(float64(states)/elapsed.Seconds(), "states/s")
	if cpu1, ok := cpuTime(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(states)/(cpu1-cpu0).Seconds(), "states/cpu-s")
	}
	b.ReportMetric(float64(states)/float64(b.N), "states/op")
}
