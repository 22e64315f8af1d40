package explore_test

import (
	"fmt"
	"time"

	"github.com/redlua/redlua/explore"
)

// The fix for SET NX PX + DEL (Example_setNXThenDel): release with a script
// that deletes the lock only while it still holds the caller's token. The
// walk-through in docs/modelcheck.md builds this model step by step.
func Example() {
	const ttl = 100 * time.Millisecond
	release := seed("owned.release@1")
	client := func(name string) explore.Actor {
		return explore.Actor{Name: name, Steps: []explore.Step{
			{Label: "acquire", Command: []any{"SET", "lock", name, "NX", "PX", ttl.Milliseconds()},
				Then: func(c *explore.Ctx) string {
					if !c.OK() {
						return "acquire" // taken: try again
					}
					c.Acquire(ttl)
					return "release"
				}},
			{Label: "release", Script: release, Keys: []string{"lock"}, Args: []any{name},
				Then: func(c *explore.Ctx) string {
					c.Release()
					return "acquire"
				}},
		}}
	}
	res, err := explore.Run(&explore.Model{
		Name:       "SET NX PX + compare-and-delete",
		Actors:     []explore.Actor{client("a"), client("b"), client("c")},
		Invariants: []explore.Invariant{explore.MutualExclusion()},
		Bounds:     explore.Bounds{MaxSteps: 4, MaxTicks: 2, MaxPauses: 1},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("violation:", res.Violation != nil, "states:", res.States)
	// Output:
	// violation: false states: 10219
}
