package lint

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCheck lints every script in lua/ per iteration; the per-file
// cost is ns/op divided by the number of files (reported as files/op).
func BenchmarkCheck(b *testing.B) {
	paths, _ := filepath.Glob("../lua/*.lua")
	var srcs [][]byte
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	if len(srcs) == 0 {
		b.Skip("no scripts in ../lua")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, src := range srcs {
			Check(paths[j], src, nil)
		}
	}
	b.ReportMetric(float64(len(srcs)), "files/op")
}
