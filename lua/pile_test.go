package lua_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// The pile test (issue 45, item 3): what other callers pile on one name
// (waiters, readers, permit holders, given-up attempts) must not make a
// script call do more work. Each path below runs once on a pile of
// pileSmall and once on a pile of pileBig, built by running the real
// scripts in the simulator, and the simulator's work meter (elements each
// command touched, by Redis's documented complexity; simulate.Work)
// compares the two.

const (
	pileSmall = 10
	pileBig   = 10_000
	// pileLock is the name's hash and its queues, as the locks package names them.
	pileLock     = "{pile}"
	pileQueue    = "{pile}:queue"
	pileSQueue   = "{pile}:squeue"
	pileSemIndex = "{pile}:sem"   // a Semaphore's index
	pileGone     = "{pile}:gone"  // the Mutex's given-up records by their end
	pileOther    = "{pile}:other" // a second Mutex in the slot, for multi.acquire
	pileIndex    = "{pile}:rw"    // an RWMutex's index
	// The locks package's defaults: TTL, waiter TTL, and the given-up
	// records' TTL (2 * max of both).
	pileTTL       = 30_000
	pileWaiterTTL = 5_000
	pileGoneTTL   = 60_000
)

// pileGrows is how much more work at pileBig than at pileSmall makes a
// path grow with the pile: more than twice, plus 20 elements. A logarithmic
// term (a sorted set's descent: 4 elements at 10, 14 at 10,000) stays
// within it.
func pileGrows(small, big int64) bool { return big > 2*small+20 }

// pileBatchCost is what each expired record a path sweeps may add to its
// work: the record is read and its hash field and sorted-set member go (a
// few elements). A path that sweeps up to batch records a call (each
// once: the amortised cost of removing them) may do pileBatchCost*batch
// more at pileBig than pileGrows allows; a scan of the pile still shows.
const pileBatchCost = 5

// grows reports whether f's path grows with the pile.
func (f pileFigure) grows() bool {
	return f.big > 2*f.small+20+pileBatchCost*f.batch
}

// pileKnownGrowth holds the paths whose work grows with the pile today,
// each with its work at pileSmall and pileBig (elements), as measured. The
// test fails when a path not listed grows, when a listed path no longer
// grows (take it out: the table only shrinks), and when a listed path
// does more work at pileBig than recorded here.
var pileKnownGrowth = map[string][2]int64{
	// One page of count pileSmall (a listpack answers whole at pileSmall):
	// a ZRANK (log N) per waiter of the page, so count * log N, which the
	// growth rule counts as growing; the page's count bounds it.
	"lock.inspect, n waiting": {62, 159},
}

// pileSem are the Semaphore scripts' keys: the lock hash, the queue and the index.
var pileSem = []string{pileLock, pileSQueue, pileSemIndex}

// pileRW are the RWMutex scripts' keys: the lock hash and its index.
var pileRW = []string{pileLock, pileIndex}

// pileEnv runs scripts and commands on one simulator with a virtual clock.
type pileEnv struct {
	t     testing.TB
	srv   *simulate.Server
	clock *simulate.VirtualClock
	reg   *registry.Registry
	// swap replaces a script by ID (a broken copy, to show the check fails).
	swap map[string]*registry.Script
}

var pileStart = time.Unix(1_800_000_000, 0)

func newPileEnv(t testing.TB, reg *registry.Registry) *pileEnv {
	clock := simulate.NewVirtualClock(pileStart)
	return &pileEnv{t: t, srv: simulate.New(simulate.WithClock(clock)), clock: clock, reg: reg, swap: map[string]*registry.Script{}}
}

// run runs script id and fails the test on an error reply.
func (e *pileEnv) run(id string, keys []string, args ...any) any {
	e.t.Helper()
	s := e.swap[id]
	if s == nil {
		var err error
		if s, err = e.reg.Lookup(id); err != nil {
			e.t.Fatal(err)
		}
	}
	r, err := e.srv.Run(context.Background(), s, keys, args...).Result()
	if err != nil && err != redis.Nil {
		e.t.Fatalf("%s %v: %v", id, args, err)
	}
	return r
}

// The calls, with the arguments the locks package passes (locks/scripts.go).

// mutexAttempt is an attempt id as the locks package makes one: "<id>/<waiter_ttl_ms>/<flags>".
func mutexAttempt(id string) string { return id + "/" + fmt.Sprint(pileWaiterTTL) + "/-" }

func (e *pileEnv) mutexAcquire(owner string) any {
	att := mutexAttempt("a-" + owner)
	return e.run("mutex.acquire@14", []string{pileLock, pileQueue}, pileTTL, "g:"+att, "c1\t"+attemptID(att)+"\t"+owner+"\t")
}

func (e *pileEnv) mutexRelease(owner string) any {
	return e.run("mutex.release@11", []string{pileLock, pileQueue}, "\t"+"a-"+owner+"\t"+owner+"\t")
}

func (e *pileEnv) mutexUndo(owner string) any {
	return e.mutexUndoFor(owner, pileGoneTTL)
}

// mutexUndoFor is mutexUndo with the given-up record's TTL.
func (e *pileEnv) mutexUndoFor(owner string, goneTTL int) any {
	return e.run("mutex.undo@6", []string{pileLock, pileQueue, pileGone}, owner, mutexAttempt("a-"+owner), goneTTL, "PUBLISH")
}

func (e *pileEnv) multiAcquire(owner string) any {
	return e.run("multi.acquire@6", []string{pileLock, pileOther}, owner, pileTTL, "a-"+owner, "c1", "{}")
}

// rwSpec is rw.rlock's and rw.lock's spec: writer preference, waits when
// refused, not reentrant, PUBLISH; for a writer the waiter TTL and its token.
func rwSpec(owner string, writer bool) string {
	if writer {
		return fmt.Sprintf("wq--%08d", pileWaiterTTL) + "c1\ta-" + owner + "\t" + owner + "\t{}"
	}
	return "wq--c1\ta-" + owner + "\t{}"
}

func (e *pileEnv) rlock(owner string) any {
	return e.run("rw.rlock@7", pileRW, "r:"+owner, pileTTL, "g:a-"+owner, rwSpec(owner, false))
}

func (e *pileEnv) wlock(owner string) any {
	return e.run("rw.lock@7", pileRW, owner, pileTTL, "g:a-"+owner, rwSpec(owner, true))
}

func (e *pileEnv) rwLeave(owner, hold string) any {
	return e.run("rw.leave@6", pileRW, owner, "a-"+owner, pileGoneTTL, hold, "PUBLISH")
}

// semTake takes 1 permit of limit permits.
func (e *pileEnv) semTake(owner string, limit int) any {
	return e.run("sem.take@5", []string{pileLock, pileSemIndex}, owner, fmt.Sprintf("1 %d %d", pileTTL, limit), "c1\t"+owner+"\t{}")
}

// semAcquire asks for 1 permit of limit, queueing when none is free.
func (e *pileEnv) semAcquire(owner string, limit int) any {
	return e.run("sem.acquire@11", pileSem, owner, 1, pileTTL, limit, "c1\t"+owner+"\t{}", fmt.Sprint(pileWaiterTTL)+" PUBLISH")
}

// semAcquireN asks for count permits of limit, queueing for waiterTTL ms.
func (e *pileEnv) semAcquireN(owner string, count, limit, waiterTTL int) any {
	return e.run("sem.acquire@11", pileSem, owner, count, pileTTL, limit, "c1\t"+owner+"\t{}", fmt.Sprint(waiterTTL)+" PUBLISH")
}

func (e *pileEnv) forceUnlock(graceMs int) any {
	return e.run("lock.forceunlock@4", []string{pileLock}, graceMs, "PUBLISH", pileLock+":released", "redlua:revoke:", "0", pileSmall)
}

// member is the i-th of a pile's owners.
func member(prefix string, i int) string { return fmt.Sprintf("%s%05d", prefix, i) }

// buildMutexWaiters makes a Mutex held by "holder" with n queued waiters.
func buildMutexWaiters(e *pileEnv, n int) {
	if _, ok := e.mutexAcquire("holder").(int64); !ok {
		e.t.Fatal("holder did not take the mutex")
	}
	for i := 0; i < n; i++ {
		if r, ok := e.mutexAcquire(member("w", i)).([]any); !ok || r[2] == int64(0) {
			e.t.Fatalf("waiter %d was not queued: %v", i, r)
		}
	}
}

// buildReaders makes n readers of an RWMutex.
func buildReaders(e *pileEnv, n int) {
	for i := 0; i < n; i++ {
		if _, ok := e.rlock(member("r", i)).(int64); !ok {
			e.t.Fatalf("reader %d was refused", i)
		}
	}
}

// pileScripted make the piles on one name, n callers each, through the
// scripts.
var pileScripted = map[string]func(e *pileEnv, n int){
	// A Mutex held by "holder" with n queued waiters.
	"mutex waiters": buildMutexWaiters,
	// The same, after every waiter gave up (n given-up records).
	"mutex given up": buildMutexGivenUp,
	// n readers of an RWMutex.
	"rw readers": buildReaders,
	// n readers and a writer waiting for them.
	"rw readers, writer waiting": func(e *pileEnv, n int) {
		buildReaders(e, n)
		if _, ok := e.wlock("writer").([]any); !ok {
			e.t.Fatal("the writer was not made to wait")
		}
	},
	// An RWMutex written by "writer" with n writers waiting.
	"rw writers": func(e *pileEnv, n int) {
		if _, ok := e.wlock("writer").(int64); !ok {
			e.t.Fatal("writer did not take the write hold")
		}
		for i := 0; i < n; i++ {
			if _, ok := e.wlock(member("W", i)).([]any); !ok {
				e.t.Fatalf("writer %d did not wait", i)
			}
		}
	},
	// A Semaphore of 1,000,000 permits with n holders of 1.
	"sem holders": buildSemHolders,
	// A Semaphore of 1 permit, held, with n calls queued.
	"sem waiters": buildSemWaiters,
	// n Semaphore calls that gave up (sem.undo), none holding or queued.
	"sem given up": buildSemGivenUp,
	// A Semaphore of 2 permits, 1 held, with n calls queued for 2 each.
	"sem oversized waiters": buildSemOversized,
}

// pileBuilders are the builders the measurement uses: the scripted ones,
// but where building 10,000 through the scripts takes too long (minutes:
// the simulator sorts a sorted set at every range read, so those builds
// are quadratic), a copy of
// the scripts' records for a pile of 1, one per caller (replicated).
// TestScriptWorkPileBuildersMatchTheScripts shows that they write what
// the scripts write, byte for byte.
var pileBuilders = func() map[string]func(e *pileEnv, n int) {
	m := map[string]func(e *pileEnv, n int){}
	for k, v := range pileScripted {
		m[k] = v
	}
	m["mutex waiters"] = replicated(buildMutexWaiters, "w")
	m["mutex given up"] = replicated(buildMutexGivenUp, "w")
	m["sem waiters"] = replicated(buildSemWaiters, "w")
	m["sem holders"] = buildSemHoldersDirect
	m["sem given up"] = replicated(buildSemGivenUp, "g")
	m["sem oversized waiters"] = replicated(buildSemOversized, "w")
	return m
}()

func buildMutexGivenUp(e *pileEnv, n int) {
	buildMutexWaiters(e, n)
	for i := 0; i < n; i++ {
		e.mutexUndo(member("w", i))
	}
}

func buildSemHolders(e *pileEnv, n int) {
	for i := 0; i < n; i++ {
		if t, ok := e.semTake(member("p", i), 1_000_000).(int64); !ok || t == 0 {
			e.t.Fatalf("holder %d did not take a permit", i)
		}
	}
}

// buildSemHoldersDirect builds the pile of buildSemHolders from the
// scripts' pile of 2 (the lone holder and the one that joined, both in the
// index): the second holder's record and index member again for holders 2
// to n-1, and h's count of permits in use set to n.
func buildSemHoldersDirect(e *pileEnv, n int) {
	e.t.Helper()
	buildSemHolders(e, min(n, 2))
	if n <= 2 {
		return
	}
	ctx := context.Background()
	second := member("p", 1)
	rec := e.srv.Do(ctx, "HGET", pileLock, "p:"+second).Val().(string)
	score := e.srv.Do(ctx, "ZSCORE", pileSemIndex, "p:"+second).Val()
	h := e.srv.Do(ctx, "HGET", pileLock, "h").Val().(string)
	hargs, zargs := []any{"HSET", pileLock}, []any{"ZADD", pileSemIndex}
	for i := 2; i < n; i++ {
		who := member("p", i)
		hargs = append(hargs, "p:"+who, strings.ReplaceAll(rec, second, who))
		zargs = append(zargs, score, "p:"+who)
	}
	// f: each holder's token is the last plus 1 (the virtual clock stands still).
	f := e.srv.Do(ctx, "HGET", pileLock, "f").Val().(string)
	var last int64
	fmt.Sscan(f, &last)
	hargs = append(hargs, "h", strings.TrimSuffix(h, "\t2")+fmt.Sprintf("\t%d", n), "f", fmt.Sprint(last+int64(n-2)))
	for _, args := range [][]any{hargs, zargs} {
		if err := e.srv.Do(ctx, args...).Err(); err != nil {
			e.t.Fatal(err)
		}
	}
}

func buildSemGivenUp(e *pileEnv, n int) {
	for i := 0; i < n; i++ {
		e.run("sem.undo@5", pileSem, member("g", i), pileGoneTTL)
	}
}

func buildSemWaiters(e *pileEnv, n int) {
	if t, ok := e.semTake("holder", 1).(int64); !ok || t == 0 {
		e.t.Fatal("holder did not take the permit")
	}
	for i := 0; i < n; i++ {
		if r, ok := e.semAcquire(member("w", i), 1).([]any); !ok || len(r) < 4 || r[3] == int64(0) {
			e.t.Fatalf("waiter %d was not queued: %v", i, r)
		}
	}
}

// buildSemOversized makes a Semaphore of 2 permits held by "holder" (1)
// with n calls queued for 2 permits each: once the count is lowered to 1
// (lowerSemLimit) none of them can ever be served.
func buildSemOversized(e *pileEnv, n int) {
	if t, ok := e.semTake("holder", 2).(int64); !ok || t == 0 {
		e.t.Fatal("holder did not take the permit")
	}
	for i := 0; i < n; i++ {
		if r, ok := e.semAcquireN(member("w", i), 2, 2, pileWaiterTTL).([]any); !ok || len(r) < 4 || r[3] == int64(0) {
			e.t.Fatalf("waiter %d was not queued: %v", i, r)
		}
	}
}

// replicated builds a pile of n from the pile of 1 that seed builds
// through the scripts: every hash field that names the first caller
// (member(prefix, 0)) is written again for callers 1 to n-1 with the
// caller's name in place of the first's, in its name and its value, and
// every sorted-set member of that name again with its score plus i (a
// place in a queue; a member that only contains the name, as the Mutex's
// given-up index holds, keeps its score: a time). The
// virtual clock stands still, so the scripts would write the same times.
func replicated(seed func(e *pileEnv, n int), prefix string) func(e *pileEnv, n int) {
	return func(e *pileEnv, n int) {
		e.t.Helper()
		seed(e, 1)
		first := member(prefix, 0)
		ctx := context.Background()
		flush := func(args []any) []any {
			if len(args) > 2 {
				if err := e.srv.Do(ctx, args...).Err(); err != nil {
					e.t.Fatal(err)
				}
			}
			return args[:2]
		}
		for _, d := range e.srv.Dump() {
			switch d.Type {
			case "hash":
				var names []string
				for f := range d.Value.(map[string]string) {
					if strings.Contains(f, first) {
						names = append(names, f)
					}
				}
				sort.Strings(names)
				args := []any{"HSET", d.Key}
				for i := 1; i < n; i++ {
					for _, f := range names {
						v := d.Value.(map[string]string)[f]
						args = append(args, strings.ReplaceAll(f, first, member(prefix, i)), strings.ReplaceAll(v, first, member(prefix, i)))
					}
					if len(args) >= 2000 {
						args = flush(args)
					}
				}
				flush(args)
			case "zset":
				for _, z := range d.Value.([]simulate.ZMember) {
					if !strings.Contains(z.Member, first) {
						continue
					}
					args := []any{"ZADD", d.Key}
					for i := 1; i < n; i++ {
						score := z.Score // a time, as in the given-up index
						if z.Member == first {
							score += float64(i) // the caller's place in a queue
						}
						args = append(args, score, strings.ReplaceAll(z.Member, first, member(prefix, i)))
						if len(args) >= 2000 {
							args = flush(args)
						}
					}
					flush(args)
				}
			}
		}
	}
}

// pilePath is one script call on a pile: prep runs first, unmetered; act
// is the call whose work is compared.
type pilePath struct {
	name string
	pile string
	// batch is how many expired records (or, for mutex.keepqueued, owners)
	// the call may handle at most, when it handles a bounded batch.
	batch int64
	prep  func(e *pileEnv, n int)
	act   func(e *pileEnv, n int)
}

// afterWaiterTTL lets the waiters' deadlines (q) pass while the given-up
// records and holds stay live.
func afterWaiterTTL(e *pileEnv, n int) { e.clock.Advance(2 * pileWaiterTTL * time.Millisecond) }

// afterReadersTTL lets every reader's time pass (their holders died)
// while a given-up attempt, recorded first, keeps the keys: their records
// wait for a sweep.
func afterReadersTTL(e *pileEnv, n int) {
	e.rwLeave("gone", "r")
	e.clock.Advance((pileTTL + 1000) * time.Millisecond)
}

// oneLiveReader adds a reader halfway through the pile's TTL, then lets
// the pile's time pass: n dead readers beside one live, which keeps h.
func oneLiveReader(e *pileEnv, n int) {
	e.clock.Advance(pileTTL / 2 * time.Millisecond)
	if _, ok := e.rlock("late").(int64); !ok {
		e.t.Fatal("the late reader was refused")
	}
	e.clock.Advance((pileTTL/2 + 1000) * time.Millisecond)
}

// keepLastWaiter lets the waiters' deadlines pass, but the last one's,
// which its keeper moves on: a release walks past the others to reach it.
func keepLastWaiter(e *pileEnv, n int) {
	afterWaiterTTL(e, n)
	e.run("mutex.keepqueued@6", []string{pileLock, pileQueue}, member("w", n-1))
}

// afterSemHoldersTTL lets every permit holder's time pass (they died).
func afterSemHoldersTTL(e *pileEnv, n int) { e.clock.Advance((pileTTL + 1000) * time.Millisecond) }

// oneLiveSemHolder adds a holder ("late") halfway through the pile's TTL,
// then lets the pile's time pass: n dead holders beside one live, which
// keeps h (and its count of n+1 permits, n of them run out).
func oneLiveSemHolder(e *pileEnv, n int) {
	e.clock.Advance(pileTTL / 2 * time.Millisecond)
	if t, ok := e.semTake("late", 1_000_000).(int64); !ok || t == 0 {
		e.t.Fatal("the late holder was refused")
	}
	e.clock.Advance((pileTTL/2 + 1000) * time.Millisecond)
}

// semWaiterBehindTheDead is oneLiveSemHolder with a call ("w") queued
// (for a minute) before the pile's time passed, for more permits than
// were free then and fewer than are free once the dead are counted out:
// whoever serves it must first take some of the dead off the count.
func semWaiterBehindTheDead(e *pileEnv, n int) {
	e.clock.Advance(pileTTL / 2 * time.Millisecond)
	if t, ok := e.semTake("late", 1_000_000).(int64); !ok || t == 0 {
		e.t.Fatal("the late holder was refused")
	}
	if r, ok := e.semAcquireN("w", 1_000_000-n+1, 1_000_000, 60_000).([]any); !ok || len(r) < 4 || r[3] != int64(1) {
		e.t.Fatalf("w was not queued: %v", r)
	}
	e.clock.Advance((pileTTL/2 + 1000) * time.Millisecond)
}

// lowerSemLimit stores a count of 1 as sem.setlimit does (field l, the
// hash and the index kept for good) but without serving the queue: every
// call of the "sem oversized waiters" pile asks for more than the count,
// none of them woken yet.
func lowerSemLimit(e *pileEnv, n int) {
	ctx := context.Background()
	for _, args := range [][]any{{"HSET", pileLock, "l", "1"}, {"PERSIST", pileLock}, {"PERSIST", pileSemIndex}} {
		if err := e.srv.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			e.t.Fatal(err)
		}
	}
}

// semKeepLastWaiter keeps the last of the queued calls (its deadline and
// the queue's life move on) and lets the others' deadlines pass.
func semKeepLastWaiter(e *pileEnv, n int) {
	e.clock.Advance(pileWaiterTTL * 4 / 5 * time.Millisecond)
	e.run("sem.keepqueued@6", pileSem, member("w", n-1))
	e.clock.Advance(pileWaiterTTL * 2 / 5 * time.Millisecond)
}

var pilePaths = []pilePath{
	// Mutex.
	{name: "mutex.acquire fast, n given up", pile: "mutex given up",
		prep: func(e *pileEnv, n int) { e.mutexRelease("holder"); afterWaiterTTL(e, n) },
		act:  func(e *pileEnv, n int) { e.mutexAcquire("new") }},
	{name: "mutex.acquire queued, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) { e.mutexAcquire("new") }},
	{name: "mutex.release hand-over, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) { e.mutexRelease("holder") }},
	{name: "mutex.release no hand-over, n given up", pile: "mutex given up",
		act: func(e *pileEnv, n int) { e.mutexRelease("holder") }},
	{name: "mutex.undo, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) { e.mutexUndo(member("w", n-1)) }},
	{name: "mutex.undo, n given up", pile: "mutex given up",
		prep: func(e *pileEnv, n int) { e.mutexAcquire("new") },
		act:  func(e *pileEnv, n int) { e.mutexUndo("new") }},
	// A Mutex's sweeps: at most 100 expired records a call, each once.
	{name: "mutex.acquire queued, n dead waiters", pile: "mutex waiters", batch: 100,
		prep: afterWaiterTTL,
		act:  func(e *pileEnv, n int) { e.mutexAcquire("new") }},
	{name: "mutex.release no hand-over, n dead waiters", pile: "mutex waiters", batch: 100,
		prep: afterWaiterTTL,
		act:  func(e *pileEnv, n int) { e.mutexRelease("holder") }},
	{name: "mutex.release hand-over past n dead waiters", pile: "mutex waiters", batch: 100,
		prep: keepLastWaiter,
		act:  func(e *pileEnv, n int) { e.mutexRelease("holder") }},
	{name: "mutex.acquire fair past n dead waiters", pile: "mutex waiters", batch: 100,
		prep: func(e *pileEnv, n int) {
			// The last waiter's keeper keeps it until after the holder's
			// lease ends: the lock is free, and that waiter is behind the
			// dead ones.
			afterWaiterTTL(e, n)
			e.clock.Set(pileStart.Add((pileTTL - pileWaiterTTL/2) * time.Millisecond))
			e.run("mutex.keepqueued@6", []string{pileLock, pileQueue}, member("w", n-1))
			e.clock.Set(pileStart.Add((pileTTL + 1) * time.Millisecond))
		},
		act: func(e *pileEnv, n int) {
			att := "a-new/" + fmt.Sprint(pileWaiterTTL) + "/f"
			e.run("mutex.acquire@14", []string{pileLock, pileQueue}, pileTTL, "g:"+att, "c1\t"+attemptID(att)+"\tnew\t{}")
		}},
	{name: "mutex.undo holder, hand-over past n dead waiters", pile: "mutex waiters", batch: 100,
		prep: keepLastWaiter,
		act:  func(e *pileEnv, n int) { e.mutexUndo("holder") }},
	{name: "mutex.undo, n expired given up", pile: "mutex given up", batch: 100,
		prep: func(e *pileEnv, n int) {
			// One record outlives the others, and the hash and the index
			// with it: the others' time passes while both live.
			e.mutexUndoFor("late", 4*pileGoneTTL)
			e.clock.Advance(2 * pileGoneTTL * time.Millisecond)
		},
		act: func(e *pileEnv, n int) { e.mutexUndo("new") }},
	{name: "mutex.keepqueued 100 owners, n waiting", pile: "mutex waiters", batch: 100,
		act: func(e *pileEnv, n int) {
			owners := make([]any, 100)
			for i := range owners {
				owners[i] = member("w", i)
			}
			e.run("mutex.keepqueued@6", []string{pileLock, pileQueue}, owners...)
		}},
	{name: "mutex.extend, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) {
			e.run("mutex.extend@6", []string{pileLock, pileQueue}, "holder", pileTTL, mutexAttempt("a-holder"))
		}},
	{name: "mutex.keepqueued, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) {
			e.run("mutex.keepqueued@6", []string{pileLock, pileQueue}, member("w", n-1))
		}},
	{name: "multi.acquire held, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) { e.multiAcquire("new") }},
	{name: "multi.acquire free, n given up", pile: "mutex given up",
		prep: func(e *pileEnv, n int) { e.mutexRelease("holder"); afterWaiterTTL(e, n) },
		act:  func(e *pileEnv, n int) { e.multiAcquire("new") }},
	{name: "lock.inspect, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) {
			e.run("lock.inspect@3", []string{pileLock, pileQueue, pileSQueue}, "0", pileSmall)
		}},
	{name: "lock.forceunlock mutex, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) { e.forceUnlock(0) }},
	{name: "lock.forceunlock mutex grace, n waiting", pile: "mutex waiters",
		act: func(e *pileEnv, n int) { e.forceUnlock(1000) }},

	// RWMutex.
	{name: "rw.rlock, n readers", pile: "rw readers",
		act: func(e *pileEnv, n int) { e.rlock("new") }},
	{name: "rw.runlock, n readers", pile: "rw readers",
		act: func(e *pileEnv, n int) { e.run("rw.runlock@8", pileRW, "r:"+member("r", n-1)) }},
	{name: "rw.runlock, n readers, writer waiting", pile: "rw readers, writer waiting",
		act: func(e *pileEnv, n int) { e.run("rw.runlock@8", pileRW, "r:"+member("r", n-1)) }},
	{name: "rw.rextend reader, n readers", pile: "rw readers",
		act: func(e *pileEnv, n int) { e.run("rw.rextend@4", pileRW, member("r", n-1), pileTTL, "r") }},
	{name: "rw.lock waits, n readers", pile: "rw readers",
		act: func(e *pileEnv, n int) { e.wlock("new") }},
	{name: "rw.leave reader, n readers", pile: "rw readers",
		act: func(e *pileEnv, n int) { e.rwLeave(member("r", n-1), "r") }},
	{name: "rw.leave writer, n readers, writer waiting", pile: "rw readers, writer waiting",
		act: func(e *pileEnv, n int) { e.rwLeave("writer", "w") }},
	{name: "rw.rlock refused, n writers waiting", pile: "rw writers",
		act: func(e *pileEnv, n int) { e.rlock("new") }},
	{name: "rw.lock waits, n writers waiting", pile: "rw writers",
		act: func(e *pileEnv, n int) { e.wlock("new") }},
	{name: "rw.unlock wakes a writer, n writers waiting", pile: "rw writers",
		act: func(e *pileEnv, n int) { e.run("rw.unlock@4", pileRW, "writer") }},
	{name: "rw.rextend writer, n writers waiting", pile: "rw writers",
		act: func(e *pileEnv, n int) { e.run("rw.rextend@4", pileRW, "writer", pileTTL, "w") }},
	{name: "mutex.extend writer, n writers waiting", pile: "rw writers",
		act: func(e *pileEnv, n int) {
			e.run("mutex.extend@6", []string{pileLock, pileQueue}, "writer", pileTTL, "a-writer")
		}},
	{name: "rw.leave writer, n writers waiting", pile: "rw writers",
		act: func(e *pileEnv, n int) { e.rwLeave(member("W", n-1), "w") }},
	// Readers that died: their time passed, their records wait for a sweep.
	{name: "rw.lock, n readers whose time passed", pile: "rw readers",
		prep: afterReadersTTL,
		act:  func(e *pileEnv, n int) { e.wlock("new") }},
	{name: "rw.rlock, n readers whose time passed", pile: "rw readers",
		prep: afterReadersTTL,
		act:  func(e *pileEnv, n int) { e.rlock("new") }},
	{name: "rw.lock waits, n dead readers, one live", pile: "rw readers",
		prep: oneLiveReader,
		act:  func(e *pileEnv, n int) { e.wlock("new") }},
	{name: "rw.runlock last live, n dead readers, writer waiting", pile: "rw readers",
		prep: func(e *pileEnv, n int) { oneLiveReader(e, n); e.wlock("writer") },
		act:  func(e *pileEnv, n int) { e.run("rw.runlock@8", pileRW, "r:late") }},
	{name: "lock.forceunlock rw, n readers", pile: "rw readers",
		act: func(e *pileEnv, n int) { e.forceUnlock(0) }},

	// Semaphore.
	{name: "sem.take, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) { e.semTake("new", 1_000_000) }},
	{name: "sem.acquire, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) { e.semAcquire("new", 1_000_000) }},
	{name: "sem.release, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) { e.run("sem.release@11", pileSem, member("p", n-1)) }},
	{name: "sem.extend, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) {
			e.run("sem.extend@4", []string{pileLock, pileSemIndex}, member("p", n-1), pileTTL)
		}},
	{name: "sem.undo holder, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) {
			e.run("sem.undo@5", pileSem, member("p", n-1), pileGoneTTL)
		}},
	{name: "sem.setlimit, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) { e.run("sem.setlimit@8", pileSem, 2_000_000) }},
	{name: "lock.forceunlock sem, n holders", pile: "sem holders",
		act: func(e *pileEnv, n int) { e.forceUnlock(0) }},
	{name: "sem.take refused, n waiting", pile: "sem waiters",
		act: func(e *pileEnv, n int) { e.semTake("new", 1) }},
	{name: "sem.acquire queued, n waiting", pile: "sem waiters",
		act: func(e *pileEnv, n int) { e.semAcquire("new", 1) }},
	{name: "sem.release hand-over, n waiting", pile: "sem waiters",
		act: func(e *pileEnv, n int) { e.run("sem.release@11", pileSem, "holder") }},
	{name: "sem.undo waiter, n waiting", pile: "sem waiters",
		act: func(e *pileEnv, n int) {
			e.run("sem.undo@5", pileSem, member("w", n-1), pileGoneTTL)
		}},
	{name: "sem.keepqueued, n waiting", pile: "sem waiters",
		act: func(e *pileEnv, n int) { e.run("sem.keepqueued@6", pileSem, member("w", n-1)) }},
	{name: "sem.setlimit serves one, n waiting", pile: "sem waiters",
		act: func(e *pileEnv, n int) { e.run("sem.setlimit@8", pileSem, 2) }},
	// Permit holders that died: their time passed, their records wait for
	// a sweep (at most 8 a call) or, once h's time passed too, count for
	// nothing (the count starts again).
	{name: "sem.take, n holders whose time passed", pile: "sem holders",
		prep: afterSemHoldersTTL,
		act:  func(e *pileEnv, n int) { e.semTake("new", 1) }},
	{name: "sem.acquire, n holders whose time passed", pile: "sem holders",
		prep: afterSemHoldersTTL,
		act:  func(e *pileEnv, n int) { e.semAcquire("new", 1) }},
	{name: "sem.release, n holders whose time passed", pile: "sem holders",
		prep: afterSemHoldersTTL,
		act:  func(e *pileEnv, n int) { e.run("sem.release@11", pileSem, member("p", n-1)) }},
	{name: "sem.take joins, n dead holders, one live", pile: "sem holders", batch: 8,
		prep: oneLiveSemHolder,
		act:  func(e *pileEnv, n int) { e.semTake("new", 1_000_000) }},
	{name: "sem.acquire past n dead holders, one live", pile: "sem holders", batch: 8,
		prep: oneLiveSemHolder,
		act:  func(e *pileEnv, n int) { e.semAcquireN("new", 1, n+1, pileWaiterTTL) }},
	{name: "sem.extend, n dead holders, one live", pile: "sem holders",
		prep: oneLiveSemHolder,
		act:  func(e *pileEnv, n int) { e.run("sem.extend@4", []string{pileLock, pileSemIndex}, "late", pileTTL) }},
	{name: "sem.acquire turn, waiter behind n dead holders", pile: "sem holders", batch: 8,
		prep: semWaiterBehindTheDead,
		act:  func(e *pileEnv, n int) { e.semAcquireN("w", 1_000_000-n+1, 1_000_000, 60_000) }},
	{name: "sem.keepqueued serves past n dead holders", pile: "sem holders", batch: 8,
		prep: semWaiterBehindTheDead,
		act:  func(e *pileEnv, n int) { e.run("sem.keepqueued@6", pileSem, "w") }},
	{name: "sem.release serves past n dead holders", pile: "sem holders", batch: 8,
		prep: semWaiterBehindTheDead,
		act:  func(e *pileEnv, n int) { e.run("sem.release@11", pileSem, "late") }},
	{name: "sem.undo serves past n dead holders", pile: "sem holders", batch: 8,
		prep: semWaiterBehindTheDead,
		act:  func(e *pileEnv, n int) { e.run("sem.undo@5", pileSem, "late", pileGoneTTL) }},
	{name: "sem.setlimit serves past n dead holders", pile: "sem holders", batch: 8,
		prep: semWaiterBehindTheDead,
		act:  func(e *pileEnv, n int) { e.run("sem.setlimit@8", pileSem, 1_000_000) }},
	// Dead waiters (their deadlines passed) at the head of a queue that
	// lives (its last waiter is kept): at most 100 dropped a call.
	{name: "sem.acquire queued, n dead waiters", pile: "sem waiters", batch: 100,
		prep: semKeepLastWaiter,
		act:  func(e *pileEnv, n int) { e.semAcquire("new", 1) }},
	{name: "sem.release hand-over past n dead waiters", pile: "sem waiters", batch: 100,
		prep: semKeepLastWaiter,
		act:  func(e *pileEnv, n int) { e.run("sem.release@11", pileSem, "holder") }},
	{name: "sem.keepqueued past n dead waiters", pile: "sem waiters", batch: 100,
		prep: semKeepLastWaiter,
		act:  func(e *pileEnv, n int) { e.run("sem.keepqueued@6", pileSem, member("w", n-1)) }},
	// Queued calls that ask for more than a lowered count: each is woken to
	// give up and its entry goes, at most 8 (with the dead dropped along
	// the way) a call; the rest wait for the next call.
	{name: "sem.setlimit lowered below n waiting", pile: "sem oversized waiters", batch: 8,
		act: func(e *pileEnv, n int) { e.run("sem.setlimit@8", pileSem, 1) }},
	{name: "sem.release, n waiting ask more than the count", pile: "sem oversized waiters", batch: 8,
		prep: lowerSemLimit,
		act:  func(e *pileEnv, n int) { e.run("sem.release@11", pileSem, "holder") }},
	{name: "sem.keepqueued, n waiting ask more than the count", pile: "sem oversized waiters", batch: 8,
		prep: lowerSemLimit,
		act:  func(e *pileEnv, n int) { e.run("sem.keepqueued@6", pileSem, member("w", n-1)) }},
	{name: "sem.acquire queued, n waiting ask more than the count", pile: "sem oversized waiters", batch: 8,
		prep: lowerSemLimit,
		act:  func(e *pileEnv, n int) { e.semAcquireN("new", 1, 2, pileWaiterTTL) }},
	{name: "sem.undo waiter, n waiting ask more than the count", pile: "sem oversized waiters", batch: 8,
		prep: lowerSemLimit,
		act:  func(e *pileEnv, n int) { e.run("sem.undo@5", pileSem, member("w", n-1), pileGoneTTL) }},
	// Given-up records whose time passed: at most 8 swept a call.
	{name: "sem.undo, n expired given up", pile: "sem given up", batch: 8,
		prep: func(e *pileEnv, n int) {
			// One record outlives the others, and the keys with it.
			e.run("sem.undo@5", pileSem, "late", 4*pileGoneTTL)
			e.clock.Advance(2 * pileGoneTTL * time.Millisecond)
		},
		act: func(e *pileEnv, n int) { e.run("sem.undo@5", pileSem, "new", pileGoneTTL) }},
}

// pileFigure is one path's work at both sizes.
type pileFigure struct {
	name       string
	batch      int64 // the path's batch (pilePath)
	small, big int64
	top        string // the commands that touched most at pileBig
}

// measurePiles runs every path at both sizes and returns the figures.
// Each pile is built once per size through the scripts and restored
// before each path.
func measurePiles(t *testing.T, reg *registry.Registry, swap map[string]*registry.Script, paths []pilePath) []pileFigure {
	figures := make([]pileFigure, len(paths))
	for i, p := range paths {
		figures[i].name, figures[i].batch = p.name, p.batch
	}
	for _, n := range []int{pileSmall, pileBig} {
		e := newPileEnv(t, reg)
		built := map[string]*simulate.Snapshot{}
		for i, p := range paths {
			sn, ok := built[p.pile]
			if !ok {
				start := time.Now()
				e.srv.Restore(nil)
				e.clock.Set(pileStart)
				pileBuilders[p.pile](e, n)
				sn = e.srv.Snapshot()
				built[p.pile] = sn
				t.Logf("pile %q of %d built in %v", p.pile, n, time.Since(start).Round(time.Millisecond))
			}
			e.srv.Restore(sn)
			e.clock.Set(pileStart)
			e.swap = swap
			if p.prep != nil {
				p.prep(e, n)
			}
			e.srv.ResetWork()
			p.act(e, n)
			e.swap = nil
			w := e.srv.Work()
			if n == pileSmall {
				figures[i].small = w.Total.Elements
			} else {
				figures[i].big = w.Total.Elements
				figures[i].top = topCommands(w.Total.ByCommand)
			}
		}
	}
	return figures
}

// topCommands names the three commands that touched most elements.
func topCommands(by map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var all []kv
	for k, v := range by {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var parts []string
	for i, x := range all {
		if i == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", x.k, x.v))
	}
	return strings.Join(parts, ", ")
}

// pileProblems is what the ratchet reports of the figures.
func pileProblems(figures []pileFigure, known map[string][2]int64) []string {
	var out []string
	for _, f := range figures {
		rec, listed := known[f.name]
		grows := f.grows()
		switch {
		case grows && !listed:
			out = append(out, fmt.Sprintf("%s: %d elements at %d, %d at %d: its work grows with the pile (%s)",
				f.name, f.small, pileSmall, f.big, pileBig, f.top))
		case !grows && listed:
			out = append(out, fmt.Sprintf("%s: %d elements at %d, %d at %d: it no longer grows with the pile; take it out of pileKnownGrowth",
				f.name, f.small, pileSmall, f.big, pileBig))
		case listed && f.big > rec[1]:
			out = append(out, fmt.Sprintf("%s: %d elements at %d, more than the %d recorded in pileKnownGrowth (%s)",
				f.name, f.big, pileBig, rec[1], f.top))
		}
	}
	return out
}

func logFigures(t *testing.T, figures []pileFigure) {
	var b strings.Builder
	fmt.Fprintf(&b, "work per call (elements touched), pile of %d -> %d:\n", pileSmall, pileBig)
	for _, f := range figures {
		mark := ""
		if f.grows() {
			mark = "  GROWS"
		}
		fmt.Fprintf(&b, "  %-48s %7d %9d%s  [%s]\n", f.name, f.small, f.big, mark, f.top)
	}
	t.Log(b.String())
}

// TestScriptWorkDoesNotGrowWithThePile runs every lock script's paths on a
// pile of 10 and of 10,000 callers on one name and fails when a path's
// work grows with the pile, but for the paths pileKnownGrowth lists.
func TestScriptWorkDoesNotGrowWithThePile(t *testing.T) {
	reg := scripts(t)
	figures := measurePiles(t, reg, nil, pilePaths)
	logFigures(t, figures)
	for _, p := range pileProblems(figures, pileKnownGrowth) {
		t.Error(p)
	}
	for name := range pileKnownGrowth {
		found := false
		for _, p := range pilePaths {
			found = found || p.name == name
		}
		if !found {
			t.Errorf("pileKnownGrowth lists %q, which is no path", name)
		}
	}
}

// The piles written directly (replicated) hold what the scripts write for
// the same callers, byte for byte (keys, fields, values, expiry), at two
// small sizes.
func TestScriptWorkPileBuildersMatchTheScripts(t *testing.T) {
	reg := scripts(t)
	for name, build := range pileBuilders {
		for _, n := range []int{pileSmall, 37} {
			direct, scripted := newPileEnv(t, reg), newPileEnv(t, reg)
			build(direct, n)
			pileScripted[name](scripted, n)
			a := direct.srv.Snapshot().AppendCanonical(nil)
			b := scripted.srv.Snapshot().AppendCanonical(nil)
			if string(a) != string(b) {
				t.Errorf("pile %q of %d: the builder writes\n%v\nthe scripts\n%v", name, n, direct.srv.Dump(), scripted.srv.Dump())
			}
		}
	}
}

// The check catches a scan: mutex.extend given back an HGETALL of the lock
// hash (a copy of the script, changed as locks/model_test.go's mcBreak
// changes one) makes both of its paths grow, and the ratchet says so.
func TestScriptWorkPileCatchesAScan(t *testing.T) {
	reg := scripts(t)
	extend, err := reg.Lookup("mutex.extend@6")
	if err != nil {
		t.Fatal(err)
	}
	const from = "local v = redis.call('HMGET', lock, 'h', 'q')"
	if !strings.Contains(extend.Source, from) {
		t.Fatalf("%s no longer contains %q; update the mutation", extend.ID(), from)
	}
	broken, err := registry.ParseScript(extend.File, []byte(strings.Replace(extend.Source, from,
		"local v = redis.call('HGETALL', lock) and redis.call('HMGET', lock, 'h', 'q')", 1)))
	if err != nil || broken.SHA1 == extend.SHA1 {
		t.Fatalf("could not break %s: %v", extend.ID(), err)
	}
	var paths []pilePath
	for _, p := range pilePaths {
		if strings.HasPrefix(p.name, "mutex.extend") {
			paths = append(paths, p)
		}
	}
	if len(paths) != 2 {
		t.Fatalf("%d mutex.extend paths, want 2", len(paths))
	}
	clean := measurePiles(t, reg, nil, paths)
	if problems := pileProblems(clean, pileKnownGrowth); len(problems) > 0 {
		t.Fatalf("the unbroken script fails the check: %v", problems)
	}
	figures := measurePiles(t, reg, map[string]*registry.Script{"mutex.extend@6": broken}, paths)
	logFigures(t, figures)
	problems := pileProblems(figures, pileKnownGrowth)
	if len(problems) != 2 {
		t.Fatalf("the broken copy: %d problems, want one per path: %v", len(problems), problems)
	}
	for _, p := range problems {
		if !strings.Contains(p, "grows with the pile") || !strings.Contains(p, "hgetall") {
			t.Errorf("the broken copy's problem %q does not name the growth and the HGETALL", p)
		}
		t.Logf("the broken copy fails as it should: %s", p)
	}
}

// The ratchet's three refusals: a path that grows and is not listed, a
// listed path that no longer grows, a listed path that grew further.
func TestScriptWorkPileRatchet(t *testing.T) {
	known := map[string][2]int64{"listed": {20, 10010}, "fixed": {20, 10010}}
	got := pileProblems([]pileFigure{
		{name: "flat", small: 8, big: 36},       // within 2x + 20
		{name: "new scan", small: 8, big: 37},   // just past it
		{name: "listed", small: 20, big: 10010}, // as recorded
		{name: "fixed", small: 20, big: 30},
	}, known)
	want := []string{"new scan: 8 elements", "fixed: 20 elements"}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %q, want it to start %q", got[i], want[i])
		}
	}
	worse := pileProblems([]pileFigure{{name: "listed", small: 20, big: 10011}}, known)
	if len(worse) != 1 || !strings.Contains(worse[0], "more than the 10010 recorded") {
		t.Errorf("a listed path that grew further: %q", worse)
	}
}

// The Semaphore's recount by scan, given back: sem.release with its
// settle always taking the whole-hash branch (an HGETALL, as every sem
// script did before the index) makes its path past dead holders grow, and
// the ratchet says so.
func TestScriptWorkPileCatchesASemScan(t *testing.T) {
	reg := scripts(t)
	release, err := reg.Lookup("sem.release@11")
	if err != nil {
		t.Fatal(err)
	}
	const from = "  if fresh < indexed then\n    -- The whole hash, once"
	if !strings.Contains(release.Source, from) {
		t.Fatalf("%s no longer contains %q; update the mutation", release.ID(), from)
	}
	broken, err := registry.ParseScript(release.File, []byte(strings.Replace(release.Source, from,
		"  if fresh <= indexed then\n    -- The whole hash, once", 1)))
	if err != nil || broken.SHA1 == release.SHA1 {
		t.Fatalf("could not break %s: %v", release.ID(), err)
	}
	var paths []pilePath
	for _, p := range pilePaths {
		if p.name == "sem.release serves past n dead holders" {
			paths = append(paths, p)
		}
	}
	if len(paths) != 1 {
		t.Fatalf("%d paths, want 1", len(paths))
	}
	clean := measurePiles(t, reg, nil, paths)
	if problems := pileProblems(clean, pileKnownGrowth); len(problems) > 0 {
		t.Fatalf("the unbroken script fails the check: %v", problems)
	}
	figures := measurePiles(t, reg, map[string]*registry.Script{"sem.release@11": broken}, paths)
	logFigures(t, figures)
	problems := pileProblems(figures, pileKnownGrowth)
	if len(problems) != 1 || !strings.Contains(problems[0], "grows with the pile") || !strings.Contains(problems[0], "hgetall") {
		t.Fatalf("the broken copy: problems %q, want one that names the growth and the HGETALL", problems)
	}
	t.Logf("the broken copy fails as it should: %s", problems[0])
}

// The released versions walked and woke every queued call that asks for
// more than the count, leaving its entry: sem.release@10 and
// sem.setlimit@7 (of the five released scripts with that loop) in place of
// the current ones make their paths past such calls grow with the pile,
// and the ratchet says so.
func TestScriptWorkPileCatchesTheOversizedWalk(t *testing.T) {
	reg := scripts(t)
	swap := map[string]*registry.Script{}
	for now, old := range map[string]string{
		"sem.release@11": "sem.release@10", "sem.keepqueued@6": "sem.keepqueued@5",
		"sem.setlimit@8": "sem.setlimit@7", "sem.acquire@11": "sem.acquire@10", "sem.undo@5": "sem.undo@4",
	} {
		s, err := reg.Lookup(old)
		if err != nil {
			t.Fatal(err)
		}
		swap[now] = s
	}
	// The five scripts share the serving loop; two of its callers show it,
	// since each released version at 10,000 takes seconds in the simulator.
	var paths []pilePath
	for _, p := range pilePaths {
		if p.pile == "sem oversized waiters" && (strings.HasPrefix(p.name, "sem.release,") || strings.HasPrefix(p.name, "sem.setlimit ")) {
			paths = append(paths, p)
		}
	}
	if len(paths) != 2 {
		t.Fatalf("%d paths named on the oversized pile, want sem.release's and sem.setlimit's", len(paths))
	}
	clean := measurePiles(t, reg, nil, paths)
	logFigures(t, clean)
	if problems := pileProblems(clean, pileKnownGrowth); len(problems) > 0 {
		t.Fatalf("the current scripts fail the check: %v", problems)
	}
	figures := measurePiles(t, reg, swap, paths)
	logFigures(t, figures)
	problems := pileProblems(figures, pileKnownGrowth)
	if len(problems) != len(paths) {
		t.Fatalf("the released versions: %d problems, want one per path: %v", len(problems), problems)
	}
	for _, p := range problems {
		if !strings.Contains(p, "grows with the pile") || !strings.Contains(p, "publish") {
			t.Errorf("the released versions' problem %q does not name the growth and the PUBLISHes", p)
		}
		t.Logf("the released versions fail as they should: %s", p)
	}
}
