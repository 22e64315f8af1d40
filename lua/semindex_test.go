package lua_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// semHeld reports h's count of permits in use ("" without h).
func semHeld(e *pileEnv) string {
	h, _ := e.srv.Do(context.Background(), "HGET", pileLock, "h").Text()
	if h == "" {
		return ""
	}
	return h[strings.LastIndexByte(h, '\t')+1:]
}

// Records left by a hold whose time passed count for nothing once the
// count starts again: a sweep that finds them later takes nothing off the
// new count (the floor in u), so the permits are not granted twice.
func TestSemaphoreLeftoversDoNotCount(t *testing.T) {
	e := newPileEnv(t, scripts(t))
	for _, o := range []string{"p0", "p1"} {
		if tok, ok := e.semTake(o, 2).(int64); !ok || tok == 0 {
			t.Fatalf("%s was refused", o)
		}
	}
	e.clock.Advance((pileTTL + 1000) * time.Millisecond) // p0 and p1 died
	for _, o := range []string{"x", "y"} {
		if tok, ok := e.semTake(o, 2).(int64); !ok || tok == 0 {
			t.Fatalf("%s was refused beside dead holders", o)
		}
	}
	if got := semHeld(e); got != "2" {
		t.Fatalf("h counts %q permits, want 2", got)
	}
	if r := e.semTake("z", 2); r != int64(0) {
		t.Fatalf("a third holder of 2 permits: sem.take = %v, want 0", r)
	}
	if r, ok := e.semAcquireN("z", 1, 2, 0).([]any); !ok || r[0] != int64(0) {
		t.Fatalf("a third holder of 2 permits: sem.acquire = %v, want a refusal", r)
	}
	ctx := context.Background()
	if n := e.srv.Do(ctx, "HEXISTS", pileLock, "p:p0").Val(); n != int64(0) {
		t.Fatal("the dead p0 is still in the hash after two sweeps")
	}
	e.run("sem.release@11", pileSem, "x")
	e.run("sem.release@11", pileSem, "y")
	if got := semHeld(e); got != "" {
		t.Fatalf("h counts %q after the last release, want no h", got)
	}
}

// A record an older version wrote (not in the index: h's fresh_until is
// its expiry) is found by the one recount, filed in the index, and its
// permits come back by the sweep when it dies.
func TestSemaphoreOlderRecordIndexedByTheRecount(t *testing.T) {
	e := newPileEnv(t, scripts(t))
	ctx := context.Background()
	now := pileStart.UnixMilli()
	// What sem.take@3 wrote for "old": h with fresh_until at its expiry.
	e.srv.Do(ctx, "HSET", pileLock, "h", "semaphore\t"+itoa(now+pileTTL)+"\tp\t"+itoa(now+pileTTL)+"\t1",
		"f", "1", "p:old", itoa(now+pileTTL)+"\th\t1\tc1\told\t{}")
	if r, ok := e.semAcquireN("new", 1, 2, 0).(int64); !ok || r == 0 {
		t.Fatalf("new was refused beside one older holder of 2 permits: %v", r)
	}
	if s := e.srv.Do(ctx, "ZSCORE", pileSemIndex, "p:old").Val(); s == nil {
		t.Fatal("the older record is not in the index after the recount")
	}
	if h, _ := e.srv.Do(ctx, "HGET", pileLock, "h").Text(); !strings.Contains(h, "\t9999999999999\t2") {
		t.Fatalf("h = %q, want the index's fresh_until and 2 permits", h)
	}
	if r, ok := e.semAcquireN("third", 1, 2, 0).([]any); !ok || r[0] != int64(0) {
		t.Fatalf("a third holder of 2 permits = %v, want a refusal", r)
	}
	e.clock.Advance(pileTTL / 2 * time.Millisecond)
	e.run("sem.extend@4", []string{pileLock, pileSemIndex}, "new", pileTTL)
	e.clock.Advance((pileTTL/2 + 1) * time.Millisecond) // old died, new lives
	if r, ok := e.semAcquireN("third", 1, 2, 0).(int64); !ok || r == 0 {
		t.Fatalf("the older holder's permit did not come back: %v", r)
	}
	if got := semHeld(e); got != "2" {
		t.Fatalf("h counts %q permits, want 2", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
