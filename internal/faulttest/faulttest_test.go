package faulttest_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/faulttest"
)

func TestFencedResourceCounts(t *testing.T) {
	r := faulttest.NewFencedResource(t)
	holder := "a"
	r.SetIsHolder(func(owner string) bool { return owner == holder })
	f, err := faulttest.DialFence(r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	must := func(token int64, owner string, wantOK bool) {
		t.Helper()
		err := f.Write(token, owner)
		if wantOK && err != nil || !wantOK && !errors.Is(err, faulttest.ErrStale) {
			t.Fatalf("Write(%d, %s) = %v, want ok=%v", token, owner, err, wantOK)
		}
	}
	must(5, "a", true)
	must(5, "a", true)  // the same hold writes again
	must(5, "b", false) // equal token, other owner: a duplicate
	must(4, "b", false) // a regression
	holder = "c"
	must(3, "c", false) // the holder refused: tokens went backwards
	must(6, "a", true)  // accepted from a non-holder: stale
	got := r.Stats()
	want := faulttest.FenceStats{Writes: 6, Accepted: 3, Rejected: 3, StaleAccepted: 1, LegitRefused: 1, DuplicateTokens: 1, Regressions: 2, Highest: 6}
	if got != want {
		t.Fatalf("stats\n got %v\nwant %v", got, want)
	}
}

func TestDetectorOverlapsAndEqualTokens(t *testing.T) {
	var d faulttest.Detector
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	d.Add(faulttest.Interval{Owner: "a", Token: 1, Start: at(0), End: at(10)})
	d.Add(faulttest.Interval{Owner: "b", Token: 2, Start: at(10), End: at(20)}) // touches, no overlap
	d.Add(faulttest.Interval{Owner: "c", Token: 2, Start: at(15), End: at(30)}) // overlaps b by 5ms
	d.Add(faulttest.Interval{Owner: "c", Token: 3, Start: at(25), End: at(26)}) // same owner: ignored
	ov := d.Overlaps()
	if len(ov) != 1 || ov[0].A.Owner != "b" || ov[0].B.Owner != "c" || ov[0].By != 5*time.Millisecond {
		t.Fatalf("overlaps = %v, want b and c by 5ms", ov)
	}
	if eq := d.EqualTokens(); len(eq) != 1 || eq[0][0].Owner != "b" || eq[0][1].Owner != "c" {
		t.Fatalf("equal tokens = %v, want b and c", eq)
	}
}

// TestHelperWorker is the worker process of TestWorkerFreezeAndReports: it
// echoes each command line back as a report with the time it read it.
func TestHelperWorker(t *testing.T) {
	io := faulttest.RunWorker()
	if io == nil {
		return // not a worker
	}
	io.Emit(faulttest.Report{Kind: "ready"})
	n := int64(0)
	for line := range io.Lines {
		n++
		io.Emit(faulttest.Report{Kind: "echo", Note: line, N: n, Start: time.Now()})
	}
}

func TestWorkerFreezeAndReports(t *testing.T) {
	w := faulttest.StartWorker(t, "TestHelperWorker", "echo")
	w.Next("ready", 30*time.Second)
	w.Send("one")
	if r := w.Next("echo", 10*time.Second); r.Note != "one" || r.N != 1 {
		t.Fatalf("report %+v, want echo of one", r)
	}
	w.Freeze()
	sent := time.Now()
	w.Send("two")
	select {
	case r := <-w.Reports():
		t.Fatalf("a frozen worker answered: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	w.Thaw()
	r := w.Next("echo", 10*time.Second)
	if r.Note != "two" || r.Start.Sub(sent) < 300*time.Millisecond {
		t.Fatalf("report %+v read %v after sending, want two after the 300ms freeze", r, r.Start.Sub(sent))
	}
	w.Stop(10 * time.Second)
	if _, open := <-w.Reports(); open {
		t.Fatal("reports still open after Stop")
	}
	t.Logf("worker pid %d: froze and resumed; read the command %v after it was sent", w.Pid, r.Start.Sub(sent).Round(time.Millisecond))
	_ = strconv.Itoa
}
