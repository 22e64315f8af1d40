package faulttest_test

import (
	"fmt"
	"time"

	"github.com/redlua/redlua/internal/faulttest"
)

// The detector reports two holders whose holds overlapped, and a fenced
// resource refuses the stale one's write.
func ExampleDetector() {
	var d faulttest.Detector
	t0 := time.Unix(0, 0)
	d.Add(faulttest.Interval{Owner: "a", Token: 7, Start: t0, End: t0.Add(30 * time.Millisecond)})
	d.Add(faulttest.Interval{Owner: "b", Token: 8, Start: t0.Add(20 * time.Millisecond), End: t0.Add(40 * time.Millisecond)})
	for _, o := range d.Overlaps() {
		fmt.Println(o)
	}
	// Output: a (token 7) and b (token 8) both held for 10ms
}
