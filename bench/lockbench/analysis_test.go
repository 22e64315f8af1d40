package lockbench

import (
	"testing"
	"time"
)

func TestJain(t *testing.T) {
	if j := jain([]int{5, 5, 5, 5}); j != 1 {
		t.Errorf("even counts: %v", j)
	}
	if j := jain([]int{20, 0, 0, 0}); j != 0.25 {
		t.Errorf("one of four: %v, want 0.25", j)
	}
}

var t0 = time.Unix(1000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestBusyTime(t *testing.T) {
	ivs := []Interval{
		{at(5), at(8)},   // overlaps the next one: counts once
		{at(0), at(6)},   // starts before the window: clipped at 1
		{at(20), at(30)}, // ends after the window: clipped at 25
		{at(10), at(10)}, // empty
	}
	if got, want := busyTime(ivs, at(1), at(25)), 12*time.Millisecond; got != want {
		t.Errorf("busy = %v, want %v (7 ms from 1 to 8, 5 ms from 20 to 25)", got, want)
	}
	if _, idle := busyAndIdle(ivs, at(1), at(25)); idle != 12*time.Millisecond {
		t.Errorf("longest idle = %v, want 12ms (from 8 to 20)", idle)
	}
	if _, idle := busyAndIdle([]Interval{{at(2), at(3)}}, at(0), at(10)); idle != 7*time.Millisecond {
		t.Errorf("longest idle = %v, want 7ms (after the last hold)", idle)
	}
	if got := busyTime(nil, at(0), at(1)); got != 0 {
		t.Errorf("no holds: busy %v", got)
	}
}

func TestQueueStatsFIFO(t *testing.T) {
	// Three waiters queue at 0, 1, 2 ms behind a holder; each turn takes
	// 10 ms and they are served in order: nobody is overtaken.
	waits := []Wait{
		{Asked: at(0), Got: at(10), Granted: true},
		{Asked: at(1), Got: at(20), Granted: true},
		{Asked: at(2), Got: at(30), Granted: true},
	}
	s := queueStats(waits, 10*time.Millisecond)
	if s.Overtaken != 0 || s.MaxOvertakes != 0 {
		t.Errorf("FIFO order reported overtakes: %+v", s)
	}
	if s.LongestWait != 28*time.Millisecond || s.AheadOfLongest != 2 {
		t.Errorf("longest wait %v with %d ahead, want 28ms with 2 ahead", s.LongestWait, s.AheadOfLongest)
	}
	if s.WorstTurnRatio > 1 {
		t.Errorf("no wait took longer than its queue, but ratio %v", s.WorstTurnRatio)
	}
}

// The check must see a wait overtaken by later arrivals, and a waiter that
// never got the lock as overtaken by everyone served after it asked.
func TestQueueStatsOvertaken(t *testing.T) {
	waits := []Wait{
		{Asked: at(0), Got: at(160), Granted: true}, // overtaken by the two below
		{Asked: at(20), Got: at(50), Granted: true},
		{Asked: at(40), Got: at(100), Granted: true},
		{Asked: at(60), Got: at(400)}, // never granted: overtaken by the one below
		{Asked: at(200), Got: at(220), Granted: true},
	}
	s := queueStats(waits, 10*time.Millisecond)
	if s.Overtaken != 2 || s.MaxOvertakes != 2 {
		t.Errorf("overtaken %d (max %d), want 2 (max 2): %+v", s.Overtaken, s.MaxOvertakes, s)
	}
	if s.LongestWait != 340*time.Millisecond || s.AheadOfLongest != 2 {
		t.Errorf("longest wait %v with %d ahead, want 340ms with 2 ahead", s.LongestWait, s.AheadOfLongest)
	}
	if s.MaxServed != 3 {
		t.Errorf("most served during one wait: %d, want 3 (at 100, 160, 220 while the starved one waited)", s.MaxServed)
	}
	if s.WorstTurnRatio < 10 {
		t.Errorf("the starved waiter waited 340 ms behind 2: ratio %v, want > 10", s.WorstTurnRatio)
	}
}

// Requests sent within OvertakeSlack of each other may reach the server in
// either order; that is not an overtake.
func TestQueueStatsSlack(t *testing.T) {
	waits := []Wait{
		{Asked: at(0), Got: at(20), Granted: true},
		{Asked: at(1), Got: at(10), Granted: true},
	}
	if s := queueStats(waits, 10*time.Millisecond); s.Overtaken != 0 {
		t.Errorf("arrivals 1 ms apart counted as an overtake: %+v", s)
	}
}

func TestSummarizeCountsPendingAsWholeRun(t *testing.T) {
	tr := Trace{
		Holds:   []Hold{{Waiter: 0, Asked: at(0), Got: at(0), Released: at(100)}},
		Pending: []time.Time{at(0)},
		Counts:  []int{1, 0},
	}
	r := summarize(tr, at(0), at(100))
	if r.NeverAcquired != 1 || r.Waiters != 2 || r.Acquired != 1 {
		t.Errorf("counts: %+v", r)
	}
	if r.P99 != 100*time.Millisecond {
		t.Errorf("p99 = %v, want the whole run (100ms) for the waiter that never got the lock", r.P99)
	}
	if r.Busy != 1 {
		t.Errorf("busy = %v, want 1", r.Busy)
	}
}

func TestParseServerStats(t *testing.T) {
	before, err := parseServerStats("# Commandstats\r\ncmdstat_evalsha:calls=10,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=0\r\ncmdstat_set:calls=4,usec=1\r\ncmdstat_info:calls=1,usec=9\r\n# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.250000\r\nused_cpu_sys_children:9.0\r\n")
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseServerStats("cmdstat_evalsha:calls=16,usec=35\r\ncmdstat_eval:calls=1,usec=5\r\ncmdstat_set:calls=10,usec=4\r\ncmdstat_info:calls=2,usec=9\r\nused_cpu_sys:2.0\r\nused_cpu_user:0.25\r\n")
	if err != nil {
		t.Fatal(err)
	}
	c := costBetween(before, after)
	if c.Commands != 13 || c.ScriptRuns != 7 || c.CPU != 500*time.Millisecond || c.ScriptTime != 35*time.Microsecond {
		t.Errorf("cost %+v, want 13 commands (INFO left out), 7 script runs, 500ms CPU, 35µs in scripts (SET's time left out)", c)
	}
	if _, err := parseServerStats("cmdstat_get:calls=x,usec=1"); err == nil {
		t.Error("a malformed calls field was accepted")
	}
	if _, err := parseServerStats("cmdstat_evalsha:calls=1,usec=x"); err == nil {
		t.Error("a malformed usec field of a script command was accepted")
	}
}

// Counted from the call, a grant the server made while this waiter's
// request was still on its way counts; counted from when the waiter
// learned it was queued, it does not. A wait whose lock does not say when
// it queued is left out of the second count.
func TestQueueStatsServedAfterQueueing(t *testing.T) {
	waits := []Wait{
		{Asked: at(0), Queued: Queueing{At: at(5)}, Got: at(30), Granted: true},
		{Asked: at(-10), Got: at(2), Granted: true}, // granted before the first was queued
		{Asked: at(1), Queued: Queueing{At: at(3)}, Got: at(10), Granted: true},
		{Asked: at(2), Got: at(20), Granted: true},
	}
	s := queueStats(waits, 10*time.Millisecond)
	if s.MaxServed != 3 {
		t.Errorf("most served from the call: %d, want 3 (at 2, 10 and 20 while the first waited)", s.MaxServed)
	}
	if s.MaxServedQueued != 2 {
		t.Errorf("most served after queueing: %d, want 2 (at 10 and 20; the grant at 2 came before it was queued)", s.MaxServedQueued)
	}
}

// A wait is served beyond its place when more others got the lock after it
// learned it was queued than its place: the waiters ahead of it and the
// holder then. Waits with no place (the lock did not say) are not checked.
func TestQueueStatsBeyondPlace(t *testing.T) {
	waits := []Wait{
		// Queued at 5 at place 1; granted at 30 after two others (10, 20).
		{Asked: at(0), Queued: Queueing{At: at(5), Place: 1}, Got: at(30), Granted: true},
		// Queued at 3 with none ahead; granted at 10, after nobody.
		{Asked: at(1), Queued: Queueing{At: at(3), Place: 1}, Got: at(10), Granted: true},
		// No place reported.
		{Asked: at(2), Queued: Queueing{At: at(4)}, Got: at(20), Granted: true},
	}
	s := queueStats(waits, 10*time.Millisecond)
	if s.Placed != 2 || s.BeyondPlace != 1 {
		t.Errorf("beyond their place: %d of %d, want 1 of 2 (the first wait saw 2 served at place 1)", s.BeyondPlace, s.Placed)
	}
	waits[0].Queued.Place = 2
	if s := queueStats(waits, 10*time.Millisecond); s.BeyondPlace != 0 {
		t.Errorf("at place 2 (one ahead, one holding), 2 served is within its place: beyond %d", s.BeyondPlace)
	}
}
