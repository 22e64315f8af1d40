package faulttest

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Interval is one hold of a lock as its holder saw it: from the moment
// Lock returned to the moment the holder stopped relying on it (before
// Unlock, or when it learned the lease was lost).
type Interval struct {
	Owner      string
	Token      int64
	Start, End time.Time
}

// Overlap is two holds by different owners that overlapped in time.
type Overlap struct {
	A, B Interval
	By   time.Duration // how long both held
}

func (o Overlap) String() string {
	return fmt.Sprintf("%s (token %d) and %s (token %d) both held for %v", o.A.Owner, o.A.Token, o.B.Owner, o.B.Token, o.By)
}

// Detector collects hold intervals and reports the ones that overlap. It is
// safe for concurrent use. Intervals from different processes on one
// machine compare by wall clock, which they share.
type Detector struct {
	mu        sync.Mutex
	intervals []Interval
}

// Add records one hold.
func (d *Detector) Add(iv Interval) {
	d.mu.Lock()
	d.intervals = append(d.intervals, iv)
	d.mu.Unlock()
}

// Len reports how many holds were recorded.
func (d *Detector) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.intervals)
}

// Overlaps returns every pair of holds by different owners that overlap,
// sorted by start; holds by one owner (reentrancy, renewals) never count.
func (d *Detector) Overlaps() []Overlap {
	d.mu.Lock()
	ivs := append([]Interval(nil), d.intervals...)
	d.mu.Unlock()
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].Start.Before(ivs[j].Start) })
	var out []Overlap
	for i, a := range ivs {
		for _, b := range ivs[i+1:] {
			if !b.Start.Before(a.End) {
				break // sorted by start: no later interval overlaps a
			}
			if a.Owner == b.Owner {
				continue
			}
			out = append(out, Overlap{A: a, B: b, By: minTime(a.End, b.End).Sub(b.Start)})
		}
	}
	return out
}

// EqualTokens returns pairs of holds by different owners with the same
// fencing token: a resource cannot tell such holders apart.
func (d *Detector) EqualTokens() [][2]Interval {
	d.mu.Lock()
	defer d.mu.Unlock()
	first := map[int64]Interval{}
	var out [][2]Interval
	for _, iv := range d.intervals {
		if prev, ok := first[iv.Token]; ok && prev.Owner != iv.Owner {
			out = append(out, [2]Interval{prev, iv})
			continue
		}
		first[iv.Token] = iv
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
