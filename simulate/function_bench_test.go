package simulate

import (
	"context"
	"testing"

	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// BenchmarkFunctionRunnerMutexAcquire runs the fixture mutex.acquire@1 on a
// held lock through FunctionRunner (FCALL of the library function), to
// compare with BenchmarkRunRedluaMutexAcquire/held (EVALSHA).
func BenchmarkFunctionRunnerMutexAcquire(b *testing.B) {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		b.Fatal(err)
	}
	acquire, _ := reg.Get("mutex.acquire")
	f, err := NewFunctionRunner(New(), reg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	keys := []string{"{lock}", "{lock}:fence"}
	if err := f.Run(ctx, acquire, keys, "holder", 3600000, "0", "").Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.Run(ctx, acquire, keys, "other", 30000, "0", "").Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}
