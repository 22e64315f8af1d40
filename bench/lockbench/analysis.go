package lockbench

import (
	"sort"
	"time"
)

// Interval is one hold of the lock, from Lock returning to Unlock returning.
type Interval struct{ From, To time.Time }

// busyTime is the length of the union of the hold intervals clipped to
// [start, end]: a release's reply may arrive after the next holder already
// has the lock, and that overlap counts once.
func busyTime(intervals []Interval, start, end time.Time) time.Duration {
	busy, _ := busyAndIdle(intervals, start, end)
	return busy
}

// busyAndIdle is busyTime and the longest stretch within [start, end] in
// which nobody held the lock (before the first hold, between holds, or
// after the last).
func busyAndIdle(intervals []Interval, start, end time.Time) (busy, longestIdle time.Duration) {
	clipped := make([]Interval, 0, len(intervals))
	for _, iv := range intervals {
		if iv.From.Before(start) {
			iv.From = start
		}
		if iv.To.After(end) {
			iv.To = end
		}
		if iv.To.After(iv.From) {
			clipped = append(clipped, iv)
		}
	}
	sort.Slice(clipped, func(i, j int) bool { return clipped[i].From.Before(clipped[j].From) })
	if len(clipped) == 0 {
		return 0, end.Sub(start)
	}
	cur := clipped[0]
	longestIdle = cur.From.Sub(start)
	for _, iv := range clipped[1:] {
		switch {
		case iv.From.After(cur.To):
			busy += cur.To.Sub(cur.From)
			longestIdle = max(longestIdle, iv.From.Sub(cur.To))
			cur = iv
		case iv.To.After(cur.To):
			cur.To = iv.To
		}
	}
	return busy + cur.To.Sub(cur.From), max(longestIdle, end.Sub(cur.To))
}

// percentile returns the p-th percentile (0-100) of sorted, or 0 when empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// jain is Jain's fairness index over per-waiter acquisition counts: 1 when
// all got the same share, 1/n when one got everything.
func jain(counts []int) float64 {
	var sum, sq float64
	for _, c := range counts {
		sum += float64(c)
		sq += float64(c) * float64(c)
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(counts)) * sq)
}

// Wait is one call to Lock: when it was asked, and when it got the lock.
// Granted is false for a wait still in progress when the run ended; its Got
// is then the end of the run (a censored wait: it waited at least that long).
type Wait struct {
	Asked, Got time.Time
	Granted    bool
	// Queued is how the waiter was queued, when its lock says
	// (QueuedLocker); zero otherwise.
	Queued Queueing
}

// QueueStats says how far waits were from first-come, first-served.
type QueueStats struct {
	// Overtaken counts waits that some later arrival got the lock before;
	// a later arrival counts only when it asked at least OvertakeSlack after
	// the wait did, since requests sent within a few milliseconds of each
	// other from different processes may reach the server in either order.
	Overtaken int
	// MaxOvertakes is the most later arrivals served before one wait.
	MaxOvertakes int
	// MaxServed is the most acquisitions by others during one wait. In a
	// first-come, first-served queue it is below the number of waiters.
	MaxServed int
	// MaxServedQueued is MaxServed counted from when each waiter learned it
	// was queued, for locks that report it (QueuedLocker; 0 otherwise): a
	// request sent at the same moment as another reaches the server in
	// either order, so counting from the call also counts grants the
	// server made before this waiter was in the queue, and a waiter served
	// in that gap can be counted twice. A first-come, first-served queue
	// keeps this at or below the number of other waiters.
	MaxServedQueued int
	// BeyondPlace counts the waits in which more others got the lock after
	// the waiter learned it was queued than its place (as the server counted
	// it): zero in a first-come, first-served queue, wait by wait. The place
	// counts the place − 1 waiters ahead and the holder at that moment, whose
	// Lock may return after the waiter learned its place (its grant was still
	// on its way). Placed is the number of waits whose lock reported a place
	// (QueuedLocker), the only ones checked.
	BeyondPlace, Placed int
	// LongestWait is the longest wait, AheadOfLongest the waiters already
	// queued when it asked, and LongestPerAhead its wait divided by
	// (AheadOfLongest+1): the time per turn it waited for.
	LongestWait     time.Duration
	AheadOfLongest  int
	LongestPerAhead time.Duration
	// WorstTurnRatio is the largest wait / ((ahead+1) × mean turn) over all
	// waits, where the mean turn is the run's wall time / acquisitions: 1 or
	// less means no wait took longer than the queue ahead of it needed at the
	// run's own pace.
	WorstTurnRatio float64
}

// OvertakeSlack is how much later a later arrival must have asked to count
// as overtaking a wait.
const OvertakeSlack = 10 * time.Millisecond

// queueStats compares every wait with the queue ahead of it. ahead(w) is the
// number of waits asked before w and not yet granted when w asked; a later
// arrival overtakes w when it asked after w and was granted before w.
func queueStats(waits []Wait, meanTurn time.Duration) QueueStats {
	n := len(waits)
	var s QueueStats
	if n == 0 {
		return s
	}
	asks := make([]int64, n)
	var gots []int64
	for i, w := range waits {
		asks[i] = w.Asked.UnixNano()
		if w.Granted {
			gots = append(gots, w.Got.UnixNano())
		}
	}
	sort.Slice(asks, func(i, j int) bool { return asks[i] < asks[j] })
	sort.Slice(gots, func(i, j int) bool { return gots[i] < gots[j] })
	countBefore := func(sorted []int64, t int64) int {
		return sort.Search(len(sorted), func(i int) bool { return sorted[i] >= t })
	}
	for _, w := range waits {
		a := w.Asked.UnixNano()
		ahead := countBefore(asks, a) - countBefore(gots, a)
		// Grants strictly between asking and getting: this wait's own grant
		// is at Got, so it is not counted.
		served := max(0, countBefore(gots, w.Got.UnixNano())-countBefore(gots, a+1))
		s.MaxServed = max(s.MaxServed, served)
		if !w.Queued.At.IsZero() {
			q := w.Queued.At.UnixNano()
			afterQueueing := countBefore(gots, w.Got.UnixNano()) - countBefore(gots, q+1)
			s.MaxServedQueued = max(s.MaxServedQueued, afterQueueing)
			if w.Queued.Place > 0 && w.Granted {
				s.Placed++
				if int64(afterQueueing) > w.Queued.Place {
					s.BeyondPlace++
				}
			}
		}
		wait := w.Got.Sub(w.Asked)
		if wait > s.LongestWait {
			s.LongestWait, s.AheadOfLongest = wait, ahead
			s.LongestPerAhead = wait / time.Duration(ahead+1)
		}
		if meanTurn > 0 {
			if r := float64(wait) / (float64(ahead+1) * float64(meanTurn)); r > s.WorstTurnRatio {
				s.WorstTurnRatio = r
			}
		}
	}
	// Overtakes: walk the waits from the latest arrival back, keeping the
	// grant times of arrivals at least OvertakeSlack later in a Fenwick tree
	// over grant-time ranks.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return waits[order[i]].Asked.Before(waits[order[j]].Asked) })
	ranks := make([]int64, 0, n)
	for _, w := range waits {
		ranks = append(ranks, w.Got.UnixNano())
	}
	sort.Slice(ranks, func(i, j int) bool { return ranks[i] < ranks[j] })
	tree := make([]int, n+1)
	added := n // waits order[added:] are in the tree
	for k := n - 1; k >= 0; k-- {
		w := waits[order[k]]
		for added > k+1 && waits[order[added-1]].Asked.Sub(w.Asked) >= OvertakeSlack {
			added--
			if v := waits[order[added]]; v.Granted {
				for i := countBefore(ranks, v.Got.UnixNano()) + 1; i <= n; i += i & -i {
					tree[i]++
				}
			}
		}
		g := w.Got.UnixNano()
		// Later arrivals granted strictly before w's grant (or before the end,
		// for a wait still in progress).
		over := 0
		for i := countBefore(ranks, g); i > 0; i -= i & -i {
			over += tree[i]
		}
		if over > 0 {
			s.Overtaken++
			s.MaxOvertakes = max(s.MaxOvertakes, over)
		}
	}
	return s
}
