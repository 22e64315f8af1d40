package lua_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The Mutex's scripts remove what expired in batches of at most 100 a
// call, found through the queue (dead waiters) and the given-up index
// {N}:gone (given-up records), never by scanning the lock hash: a pile of
// dead records goes over several calls, each record once, and the calls
// in between stay correct.

// do runs a command on the pile's simulator.
func (e *pileEnv) do(args ...any) any {
	e.t.Helper()
	r, err := e.srv.Do(context.Background(), args...).Result()
	if err != nil {
		e.t.Fatalf("%v: %v", args, err)
	}
	return r
}

// fieldsWith counts the lock hash's fields that start with prefix.
func (e *pileEnv) fieldsWith(prefix string) int {
	e.t.Helper()
	n := 0
	for _, f := range e.do("HKEYS", pileLock).([]any) {
		if strings.HasPrefix(f.(string), prefix) {
			n++
		}
	}
	return n
}

func (e *pileEnv) hasQ() bool { return e.do("HEXISTS", pileLock, "q") == int64(1) }

func TestMutexDeadWaitersGoInBatches(t *testing.T) {
	e := newPileEnv(t, scripts(t))
	buildMutexWaiters(e, 250)
	afterWaiterTTL(e, 250)

	// The release frees the lock and drops the first 100 dead waiters;
	// q stays, so that the next calls sweep on.
	if r := e.mutexRelease("holder"); r != int64(1) {
		t.Fatalf("release = %v, want 1 (freed)", r)
	}
	if n, w := e.do("ZCARD", pileQueue), e.fieldsWith("w:"); n != int64(150) || w != 150 || !e.hasQ() {
		t.Fatalf("after one release: %v queued, %d entries, q %v; want 150, 150 and q", n, w, e.hasQ())
	}
	// An acquire over the stale q takes the free lock and sweeps 100 more.
	if r, ok := e.mutexAcquire("x").(int64); !ok || r == 0 {
		t.Fatalf("acquire over dead waiters = %v, want a token", r)
	}
	if n, w := e.do("ZCARD", pileQueue), e.fieldsWith("w:"); n != int64(50) || w != 50 || !e.hasQ() {
		t.Fatalf("after an acquire: %v queued, %d entries, q %v; want 50, 50 and q", n, w, e.hasQ())
	}
	// The next release sweeps the last 50, and q with them.
	if r := e.mutexRelease("x"); r != int64(1) {
		t.Fatalf("release = %v, want 1", r)
	}
	if n, w := e.do("EXISTS", pileQueue), e.fieldsWith("w:"); n != int64(0) || w != 0 || e.hasQ() {
		t.Fatalf("after the last sweep: queue %v, %d entries, q %v; want none", n, w, e.hasQ())
	}
	// The acquire after is the fast path again: an integer at once.
	e.srv.ResetWork()
	if _, ok := e.mutexAcquire("y").(int64); !ok {
		t.Fatal("acquire after the sweeps did not take the lock")
	}
	if cmds := e.srv.Work().Total.ByCommand; cmds["zrange"] != 0 || cmds["hdel"] != 0 {
		t.Fatalf("the acquire after the sweeps ran %v: not the fast path", cmds)
	}
}

// A release hands the lock to the oldest live waiter among the first 100
// of the queue, dropping the dead ones ahead of it; when all 100 are dead
// it drops them and frees the lock, q stays, and a live waiter behind
// them (told by its keeper that no one holds the lock) takes it.
func TestMutexHandOverPastDeadWaiters(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int64 // the release's reply
		left int64 // queued after it
	}{{n: 2, want: 3, left: 0}, {n: 100, want: 3, left: 0}, {n: 101, want: 1, left: 1}, {n: 150, want: 1, left: 50}} {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			e := newPileEnv(t, scripts(t))
			buildMutexWaiters(e, c.n)
			keepLastWaiter(e, c.n)
			last := member("w", c.n-1)
			if r := e.mutexRelease("holder"); r != c.want {
				t.Fatalf("release past %d dead waiters = %v, want %d", c.n-1, r, c.want)
			}
			if n := e.do("ZCARD", pileQueue); n != c.left {
				t.Fatalf("%v queued after the release, want %d", n, c.left)
			}
			if c.want == 3 {
				if h := e.do("HGET", pileLock, "h").(string); !strings.Contains(h, "\t"+last+"\t") {
					t.Fatalf("the lock went to %q, want %s", h, last)
				}
				return
			}
			kept := e.run("mutex.keepqueued@6", []string{pileLock, pileQueue}, last).([]any)
			if kept[0] != int64(0) || kept[2] != int64(1) {
				t.Fatalf("keepqueued = %v, want {0 (no holder), 0, 1 (still queued)}", kept)
			}
			// A fair acquire of another caller does not jump the live waiter.
			att := "a-fair/" + fmt.Sprint(pileWaiterTTL) + "/f"
			r := e.run("mutex.acquire@14", []string{pileLock, pileQueue}, pileTTL, "g:"+att, "c1\t"+attemptID(att)+"\tfair\t{}")
			if _, took := r.(int64); took {
				t.Fatalf("a fair newcomer took the lock ahead of %s: %v", last, r)
			}
			if r, ok := e.mutexAcquire(last).(int64); !ok || r == 0 {
				t.Fatalf("%s, woken, = %v; want the lock", last, r)
			}
		})
	}
}

// Given-up records are indexed by their end in {N}:gone; each undo removes
// at most 100 whose time passed, from the hash and the index, and the
// index lives as long as its latest record.
func TestMutexGivenUpRecordsGoInBatches(t *testing.T) {
	e := newPileEnv(t, scripts(t))
	e.mutexUndoFor("late", 4*pileGoneTTL) // outlives the others, and keeps the hash
	for i := range 150 {
		e.mutexUndo(member("u", i))
	}
	if n, g := e.do("ZCARD", pileGone), e.fieldsWith("g:"); n != int64(151) || g != 151 {
		t.Fatalf("%v indexed, %d records; want 151 of each", n, g)
	}
	if ttl := e.do("PTTL", pileGone).(int64); ttl < 3*pileGoneTTL {
		t.Fatalf("the index expires in %d ms, before the latest record (%d ms)", ttl, 4*pileGoneTTL)
	}
	// Another writer (not telling the index) moves u00000's record later:
	// the sweep leaves it, indexed by its new end.
	moved := "g:" + mutexAttempt("a-"+member("u", 0))
	movedEnd := pileStart.Add(10 * pileGoneTTL * time.Millisecond).UnixMilli()
	e.do("HSET", pileLock, moved, movedEnd)
	e.clock.Advance(2 * pileGoneTTL * time.Millisecond)
	e.mutexUndo("new1")
	if n, g := e.do("ZCARD", pileGone), e.fieldsWith("g:"); n != int64(53) || g != 53 {
		t.Fatalf("after one undo: %v indexed, %d records; want 53 (50 expired, late, u00000, new1)", n, g)
	}
	if score := fmt.Sprint(e.do("ZSCORE", pileGone, moved)); score != fmt.Sprint(movedEnd) && score != fmt.Sprint(float64(movedEnd)) {
		t.Fatalf("the moved record is indexed at %v, want its new end %d", score, movedEnd)
	}
	e.mutexUndo("new2")
	if n, g := e.do("ZCARD", pileGone), e.fieldsWith("g:"); n != int64(4) || g != 4 {
		t.Fatalf("after two undos: %v indexed, %d records; want 4 (late, u00000, new1, new2)", n, g)
	}
	// The records still refuse their attempts.
	if r := e.mutexAcquire("new1"); fmt.Sprint(r) != "[0 0 0]" {
		t.Fatalf("the given-up attempt new1 = %v, want {0, 0, 0}", r)
	}
}

func TestMutexKeepQueuedRefusesMoreThan100Owners(t *testing.T) {
	e := newPileEnv(t, scripts(t))
	s, err := e.reg.Lookup("mutex.keepqueued@6")
	if err != nil {
		t.Fatal(err)
	}
	owners := make([]any, 101)
	for i := range owners {
		owners[i] = member("w", i)
	}
	_, err = e.srv.Run(context.Background(), s, []string{pileLock, pileQueue}, owners...).Result()
	if err == nil || !strings.Contains(err.Error(), "at most 100 owners") {
		t.Fatalf("keepqueued of 101 owners = %v, want an error naming the limit", err)
	}
	if _, err := e.srv.Run(context.Background(), s, []string{pileLock, pileQueue}, owners[:100]...).Result(); err != nil {
		t.Fatalf("keepqueued of 100 owners: %v", err)
	}
}

// While q is in the lock hash, the queue lives at least as long as the
// hash, whichever script moves the hash's expiry: the queue is how the
// scripts find the entries of waiters that die, so it must not expire
// first and leave them unfound.
func TestMutexQueueLivesAsLongAsTheHash(t *testing.T) {
	e := newPileEnv(t, scripts(t))
	check := func(after string) {
		t.Helper()
		lock, queue := e.do("PTTL", pileLock).(int64), e.do("PTTL", pileQueue).(int64)
		if queue < lock {
			t.Fatalf("after %s the queue expires in %d ms, before the lock hash (%d ms)", after, queue, lock)
		}
	}
	buildMutexWaiters(e, 3)
	check("queueing")
	e.run("mutex.extend@6", []string{pileLock, pileQueue}, "holder", 10*pileTTL, mutexAttempt("a-holder"))
	check("the holder's extend")
	e.run("mutex.keepqueued@6", []string{pileLock, pileQueue}, member("w", 0), member("w", 1), member("w", 2))
	check("a keep")
	if r := e.mutexRelease("holder"); r != int64(3) {
		t.Fatalf("release = %v, want 3 (handed over)", r)
	}
	check("a hand-over")
	if _, ok := e.mutexAcquire(member("w", 0)).(int64); !ok {
		t.Fatal("the waiter handed the lock did not claim it")
	}
	check("the claim")
	e.run("mutex.extend@6", []string{pileLock, pileQueue}, member("w", 0), 20*pileTTL, mutexAttempt("a-"+member("w", 0)))
	check("the new holder's extend")
	e.mutexUndo(member("w", 1))
	check("an undo")
}
