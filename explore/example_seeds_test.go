package explore_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redlua/redlua/explore"
)

// report prints what an exploration found: the counterexample, or that
// every property held.
func report(m *explore.Model) {
	res, err := explore.Run(m)
	switch {
	case err != nil:
		fmt.Println(err)
	case res.Violation != nil:
		fmt.Print(res.Violation)
	default:
		fmt.Printf("model %q: no violation in %d states\n", m.Name, res.States)
	}
}

// The owner check done in the client: GET the lock, compare it with our
// name, then DEL. Between the GET and the DEL the lease can run out and
// another client take the lock, which the DEL then deletes.
func Example_getCompareThenDel() {
	const ttl = 100 * time.Millisecond
	client := func(name string) explore.Actor {
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "acquire", Command: []any{"SET", "lock", name, "NX", "PX", ttl.Milliseconds()}, Then: func(c *explore.Ctx) string {
				if c.OK() {
					c.Acquire(ttl)
					return "check"
				}
				return "acquire"
			}},
			{Label: "check", Command: []any{"GET", "lock"}, Then: func(c *explore.Ctx) string {
				if c.Str() == name {
					return "delete"
				}
				c.Release()
				return "acquire"
			}},
			{Label: "delete", Command: []any{"DEL", "lock"}, Then: func(c *explore.Ctx) string {
				c.Release()
				return "acquire"
			}},
		}}
	}
	report(&explore.Model{
		Name:       "GET, compare, DEL",
		Actors:     []explore.Actor{client("a"), client("b")},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 1},
	})
	// Output:
	// model "GET, compare, DEL": mutual exclusion violated after 6 steps: a and b believe they hold the lock at once
	//   1  t=0ms    a    acquire: SET lock a NX PX 100 -> OK
	//                      a believes it holds the lock until t=100ms
	//                      + lock = "a" (expires t=100ms)
	//   2  t=0ms    a    check: GET lock -> "a"
	//   3  t=100ms  env  tick: clock jumps t=0ms -> t=100ms
	//                      a's lease has run out
	//                      - lock
	//   4  t=100ms  b    acquire: SET lock b NX PX 100 -> OK
	//                      b believes it holds the lock until t=200ms
	//                      + lock = "b" (expires t=200ms)
	//   5  t=100ms  a    delete: DEL lock -> 1
	//                      a no longer believes it holds the lock
	//                      - lock
	//   6  t=100ms  a    acquire: SET lock a NX PX 100 -> OK
	//                      a believes it holds the lock until t=200ms
	//                      + lock = "a" (expires t=200ms)
}

// The SETNX + GETSET lock of the early Redis documentation: the value is
// the instant the lease ends, by the client's clock; a client that finds
// it past GETSETs its own and holds the lock if the old value was still
// past. Unlock is a plain DEL, which deletes whatever lock is there.
func Example_setnxGetset() {
	const ttl = 100 * time.Millisecond
	client := func(name string) explore.Actor {
		expiry := func(c *explore.Ctx) int64 { return c.UnixMilli() + ttl.Milliseconds() + 1 }
		stale := func(c *explore.Ctx) bool {
			v, err := strconv.ParseInt(c.Str(), 10, 64)
			return err == nil && v < c.UnixMilli()
		}
		// The lock is valid up to and including its timestamp.
		lease := ttl + 2*time.Millisecond
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "setnx", Command: []any{"SETNX"}, Call: func(c *explore.Ctx) []any {
				return []any{"SETNX", "lock", expiry(c)}
			}, Then: func(c *explore.Ctx) string {
				if c.Int() == 1 {
					c.Acquire(lease)
					return "unlock"
				}
				return "get"
			}},
			{Label: "get", Command: []any{"GET", "lock"}, Then: func(c *explore.Ctx) string {
				if stale(c) {
					return "getset"
				}
				return "setnx"
			}},
			{Label: "getset", Command: []any{"GETSET"}, Call: func(c *explore.Ctx) []any {
				return []any{"GETSET", "lock", expiry(c)}
			}, Then: func(c *explore.Ctx) string {
				if c.IsNil() || stale(c) {
					c.Acquire(lease)
					return "unlock"
				}
				return "setnx"
			}},
			{Label: "unlock", Command: []any{"DEL", "lock"}, Then: func(c *explore.Ctx) string {
				c.Release()
				return "setnx"
			}},
		}}
	}
	report(&explore.Model{
		Name:       "SETNX + GETSET",
		Actors:     []explore.Actor{client("a"), client("b")},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 5, MaxTicks: 1},
	})
	// Output:
	// model "SETNX + GETSET": mutual exclusion violated after 7 steps: a and b believe they hold the lock at once
	//   1  t=0ms    a    setnx: SETNX lock 1700000000101 -> 1
	//                      a believes it holds the lock until t=102ms
	//                      + lock = "1700000000101"
	//   2  t=0ms    b    setnx: SETNX lock 1700000000101 -> 0
	//   3  t=102ms  env  tick: clock jumps t=0ms -> t=102ms
	//                      a's lease has run out
	//   4  t=102ms  b    get: GET lock -> "1700000000101"
	//   5  t=102ms  b    getset: GETSET lock 1700000000203 -> "1700000000101"
	//                      b believes it holds the lock until t=204ms
	//                      ~ lock = "1700000000203"
	//   6  t=102ms  a    unlock: DEL lock -> 1
	//                      a no longer believes it holds the lock
	//                      - lock
	//   7  t=102ms  a    setnx: SETNX lock 1700000000203 -> 1
	//                      a believes it holds the lock until t=204ms
	//                      + lock = "1700000000203"
}

// A read-write lock on one shared reader counter, with no owner records
// and no expiry. A reader that gives back a hold it never got frees a
// reader still at work; and a reader that dies blocks writers for ever.
func Example_readerCounter() {
	keys := []string{"{rw}:writer", "{rw}:readers"}
	reader := func(name string) explore.Actor {
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "rlock", Script: seed("counter.rlock@1"), Keys: keys, Then: func(c *explore.Ctx) string {
				if c.Int() == 1 {
					c.Acquire(0)
				}
				return "" // unlock on the way out, whatever happened ("defer unlock")
			}},
			{Label: "runlock", Script: seed("counter.runlock@1"), Keys: keys[1:], Then: func(c *explore.Ctx) string {
				c.Release()
				return "rlock"
			}},
		}}
	}
	writer := func(name string) explore.Actor {
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "lock", Script: seed("counter.lock@1"), Keys: keys, Args: []any{name}, Then: func(c *explore.Ctx) string {
				if c.Int() == 1 {
					c.Acquire(0)
					return "unlock"
				}
				return "lock"
			}},
			{Label: "unlock", Script: seed("counter.unlock@1"), Keys: keys[:1], Args: []any{name}, Then: func(c *explore.Ctx) string {
				c.Release()
				return "lock"
			}},
		}}
	}
	noWriterWithReaders := explore.Invariant{Name: "no writer with readers", Check: func(v *explore.View) error {
		if v.Holds("w") && (v.Holds("r1") || v.Holds("r2")) {
			return fmt.Errorf("the writer and a reader hold the lock at once (holders: %v)", v.Holders())
		}
		return nil
	}}
	report(&explore.Model{
		Name:       "reader counter",
		Actors:     []explore.Actor{reader("r1"), reader("r2"), writer("w")},
		Invariants: []explore.Invariant{noWriterWithReaders},
		Bounds:     explore.Bounds{MaxSteps: 3},
	})
	report(&explore.Model{
		Name:     "reader counter, crashed reader",
		Actors:   []explore.Actor{reader("r1")},
		Progress: []explore.Progress{{Name: "a writer gets in", Actor: writer("w"), Within: 4}},
		Bounds:   explore.Bounds{MaxSteps: 2},
	})
	// Output:
	// model "reader counter": no writer with readers violated after 6 steps: the writer and a reader hold the lock at once (holders: [r1 w])
	//   1  t=0ms  w   lock: counter.lock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[w] -> 1
	//                   w believes it holds the lock (no deadline)
	//                   + {rw}:writer = "w"
	//   2  t=0ms  r1  rlock: counter.rlock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[] -> 0
	//   3  t=0ms  r1  runlock: counter.runlock@1 KEYS["{rw}:readers"] ARGV[] -> -1
	//                   + {rw}:readers = "-1"
	//   4  t=0ms  w   unlock: counter.unlock@1 KEYS["{rw}:writer"] ARGV[w] -> 1
	//                   w no longer believes it holds the lock
	//                   - {rw}:writer
	//   5  t=0ms  r1  rlock: counter.rlock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[] -> 1
	//                   r1 believes it holds the lock (no deadline)
	//                   ~ {rw}:readers = "0"
	//   6  t=0ms  w   lock: counter.lock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[w] -> 1
	//                   w believes it holds the lock (no deadline)
	//                   + {rw}:writer = "w"
	// model "reader counter, crashed reader": a writer gets in violated after 1 step: if every actor stops here, w cannot take the lock within 4 steps (the clock may pass every deadline)
	//   1  t=0ms  r1  rlock: counter.rlock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[] -> 1
	//                   r1 believes it holds the lock (no deadline)
	//                   + {rw}:readers = "1"
	// then, with every actor stopped, one try of w:
	//  +1  t=0ms  w   lock: counter.lock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[w] -> 0
	//  +2  t=0ms  w   lock: counter.lock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[w] -> 0
	//  +3  t=0ms  w   lock: counter.lock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[w] -> 0
	//  +4  t=0ms  w   lock: counter.lock@1 KEYS["{rw}:writer" "{rw}:readers"] ARGV[w] -> 0
}

// A reentrant hash lock on a primary with an asynchronous replica: the
// grant is acknowledged before the replica has it, the primary dies, the
// replica is promoted without the lock, and a second client is granted it
// too. Waiting for the replica (WAIT 1 after the acquire) before believing
// the grant closes that window.
func Example_hashLockFailover() {
	const ttl = 100 * time.Millisecond
	client := func(name string, waitForReplica bool) explore.Actor {
		acquire := explore.Step{Label: "acquire", Script: seed("hashlock.acquire@1"), Keys: []string{"{lock}"}, Args: []any{name, ttl.Milliseconds()},
			Then: func(c *explore.Ctx) string {
				// The lease runs from the request, not from WAIT's answer.
				c.SetVar("sent", c.Now().Milliseconds())
				switch {
				case !c.IsNil():
					return explore.End // held by another: give up
				case waitForReplica:
					return "wait"
				}
				c.Acquire(ttl)
				return explore.End
			}}
		wait := explore.Step{Label: "wait", Command: []any{"WAIT", 1, 50}, Then: func(c *explore.Ctx) string {
			if c.Int() >= 1 {
				c.AcquireUntil(time.Duration(c.Var("sent"))*time.Millisecond + ttl)
				return explore.End
			}
			return "release" // not on a replica: give it back, do not use it
		}}
		release := explore.Step{Label: "release", Script: seed("hashlock.release@1"), Keys: []string{"{lock}"}, Args: []any{name}}
		return explore.Actor{Name: name, Steps: []explore.Step{acquire, wait, release}, Vars: []string{"sent"}}
	}
	for _, acked := range []bool{false, true} {
		name := "hash lock, async replica"
		if acked {
			name = "hash lock, replica-acknowledged"
		}
		report(&explore.Model{
			Name:       name,
			Replica:    true,
			Actors:     []explore.Actor{client("a", acked), client("b", acked)},
			Invariants: []explore.Invariant{explore.MutualExclusion()},
			Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 1, MaxFailovers: 1},
		})
	}
	// Output:
	// model "hash lock, async replica": mutual exclusion violated after 4 steps: a and b believe they hold the lock at once
	//   1  t=0ms  a    acquire: hashlock.acquire@1 KEYS["{lock}"] ARGV[a 100] -> (nil)
	//                    a believes it holds the lock until t=100ms
	//                    + {lock} = {a: 1} (expires t=100ms)
	//   2  t=0ms  env  crash: primary crashes (1 undelivered write lost)
	//   3  t=0ms  env  promote: replica promoted to primary
	//                    the primary's keyspace is now the replica's
	//                    - {lock}
	//   4  t=0ms  b    acquire: hashlock.acquire@1 KEYS["{lock}"] ARGV[b 100] -> (nil)
	//                    b believes it holds the lock until t=100ms
	//                    + {lock} = {b: 1} (expires t=100ms)
	// model "hash lock, replica-acknowledged": no violation in 261 states
}
