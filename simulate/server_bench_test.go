package simulate_test

import (
	"context"
	"testing"

	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// BenchmarkRunMutexAcquire measures the example's mutex acquire script, the
// hot path of the locks package on the simulator backend: the lock is
// held, so every run after the first takes the SET NX miss and PTTL path.
func BenchmarkRunMutexAcquire(b *testing.B) {
	script, err := registry.ParseScript("mutex.acquire.v1.lua", []byte(acquireSrc))
	if err != nil {
		b.Fatal(err)
	}
	s := simulate.New() // defaults, trace on
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

// BenchmarkRunRedluaMutexAcquire runs the fixture mutex.acquire@1 (internal/testscripts)
// on a held lock (the contended path: HGET, compare, PTTL) and on a free one
// (acquire then release each round: HGET, INCR, HSET, PEXPIRE, then the
// release script).
func BenchmarkRunRedluaMutexAcquire(b *testing.B) {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		b.Fatal(err)
	}
	acquire, _ := reg.Lookup("mutex.acquire@1")
	release, _ := reg.Lookup("mutex.release@1")
	ctx := context.Background()
	keys := []string{"{lock}", "{lock}:fence"}
	b.Run("held", func(b *testing.B) {
		s := simulate.New()
		s.Run(ctx, acquire, keys, "holder", 30000, "0", "")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := s.Run(ctx, acquire, keys, "other", 30000, "0", "").Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
	})
	b.Run("acquire+release", func(b *testing.B) {
		s := simulate.New()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := s.Run(ctx, acquire, keys, "owner", 30000, "0", "").Err(); err != nil {
				b.Fatal(err)
			}
			if err := s.Run(ctx, release, keys[:1], "owner", "{lock}:released").Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "runs/s")
	})
}
