//go:build !unix

package explore_test

import "time"

// cpuTime is not available here; benchmarks report wall-clock figures only.
func cpuTime() (time.Duration, bool) { return 0, false }
