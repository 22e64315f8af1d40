// Package faulttest holds what the fault-injection suite checks with: worker
// processes (the test binary run again as a worker, so each has its own
// clients and can be frozen with SIGSTOP), a fenced resource (a loopback
// server that accepts writes carrying fencing tokens) and an overlap
// detector (hold intervals that must not overlap).
package faulttest
