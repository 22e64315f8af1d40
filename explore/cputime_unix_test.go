//go:build unix

package explore_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used (user + system), so
// a benchmark on a shared machine can report work per CPU-second.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
