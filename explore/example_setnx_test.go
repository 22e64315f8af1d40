package explore_test

import (
	"fmt"
	"time"

	"github.com/redlua/redlua/explore"
)

// The first lock most people write: SET NX PX to take it, DEL to give it
// back. A holder whose lease ran out deletes the next holder's lock.
func Example_setNXThenDel() {
	const ttl = 100 * time.Millisecond
	client := func(name string) explore.Actor {
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "acquire", Command: []any{"SET", "lock", name, "NX", "PX", ttl.Milliseconds()}, Then: func(c *explore.Ctx) string {
				if c.OK() {
					c.Acquire(ttl)
					return "release"
				}
				return "acquire"
			}},
			{Label: "release", Command: []any{"DEL", "lock"}, Then: func(c *explore.Ctx) string {
				c.Release()
				return "acquire"
			}},
		}}
	}
	res, err := explore.Run(&explore.Model{
		Name:       "SET NX PX + DEL",
		Actors:     []explore.Actor{client("a"), client("b")},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 3, MaxTicks: 1},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Violation)
	// Output:
	// model "SET NX PX + DEL": mutual exclusion violated after 5 steps: a and b believe they hold the lock at once
	//   1  t=0ms    a    acquire: SET lock a NX PX 100 -> OK
	//                      a believes it holds the lock until t=100ms
	//                      + lock = "a" (expires t=100ms)
	//   2  t=100ms  env  tick: clock jumps t=0ms -> t=100ms
	//                      a's lease has run out
	//                      - lock
	//   3  t=100ms  b    acquire: SET lock b NX PX 100 -> OK
	//                      b believes it holds the lock until t=200ms
	//                      + lock = "b" (expires t=200ms)
	//   4  t=100ms  a    release: DEL lock -> 1
	//                      a no longer believes it holds the lock
	//                      - lock
	//   5  t=100ms  a    acquire: SET lock a NX PX 100 -> OK
	//                      a believes it holds the lock until t=200ms
	//                      + lock = "a" (expires t=200ms)
}
