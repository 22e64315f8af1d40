package simulate_test

import (
	"fmt"
	"time"

	"github.com/redlua/redlua/simulate"
)

// Stream IDs from "*" take their milliseconds from the call's instant, so a
// script's entries are reproducible under a virtual clock.
func ExampleKeyspace_Exec_stream() {
	ks := simulate.NewKeyspace()
	cc := &simulate.CallContext{Now: time.UnixMilli(1_700_000_000_000), RESP: 3}
	fmt.Println(ks.Exec(cc, []string{"XADD", "events", "*", "kind", "acquired"}).Str)
	fmt.Println(ks.Exec(cc, []string{"XADD", "events", "MAXLEN", "1", "*", "kind", "released"}).Str)
	v, _ := simulate.ToGo(ks.Exec(cc, []string{"XRANGE", "events", "-", "+"}))
	fmt.Println(v)
	// Output:
	// 1700000000000-0
	// 1700000000000-1
	// [[1700000000000-1 [kind released]]]
}
