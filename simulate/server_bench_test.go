package simulate

import (
	"context"
	"testing"

	"github.com/redlua/redlua/registry"
)

const mutexAcquireSrc = `-- name: bench.acquire
-- version: 1
-- description: Take a lock if it is free, else report its PTTL.
-- keys: lock
-- args: owner ttl_ms
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return redis.call('PTTL', KEYS[1])
`

// BenchmarkRunMutexAcquire measures the mutex acquire script, the hot path
// of the locks package on the simulator backend: the lock is held, so
// every run after the first takes the SET NX miss and PTTL path.
func BenchmarkRunMutexAcquire(b *testing.B) {
	script, err := registry.ParseScript("bench.acquire.v1.lua", []byte(mutexAcquireSrc))
	if err != nil {
		b.Fatal(err)
	}
	s := New() // defaults, trace on
	ctx := context.Background()
	keys := []string{"{lock}"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Run(ctx, script, keys, "owner-1", 30000).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}
