package simulate

import (
	"context"
	"fmt"
	"testing"
)

// Benchmarks for the set algebra, HyperLogLog and geo commands over
// collections of 1,000 members.
func benchServer(b *testing.B, setup func(ctx context.Context, s *Server)) *Server {
	b.Helper()
	s := New()
	setup(context.Background(), s)
	b.ReportAllocs()
	b.ResetTimer()
	return s
}

func BenchmarkZUnionStore(b *testing.B) {
	s := benchServer(b, func(ctx context.Context, s *Server) {
		for i := 0; i < 1000; i++ {
			s.Do(ctx, "ZADD", "a", i, fmt.Sprint("m", i))
			s.Do(ctx, "ZADD", "b", 2*i, fmt.Sprint("m", 2*i))
		}
	})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if err := s.Do(ctx, "ZUNIONSTORE", "d", 2, "a", "b", "WEIGHTS", 1, 2).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSInter(b *testing.B) {
	s := benchServer(b, func(ctx context.Context, s *Server) {
		for i := 0; i < 1000; i++ {
			s.Do(ctx, "SADD", "a", fmt.Sprint("m", i))
			s.Do(ctx, "SADD", "b", fmt.Sprint("m", 2*i))
		}
	})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if err := s.Do(ctx, "SINTER", "a", "b").Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPFAdd(b *testing.B) {
	for _, n := range []int{100, 5000} {
		b.Run(fmt.Sprint(n, "-elements"), func(b *testing.B) {
			s := benchServer(b, func(ctx context.Context, s *Server) {
				for i := 0; i < n; i++ {
					s.Do(ctx, "PFADD", "h", fmt.Sprint("e", i))
				}
			})
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				if err := s.Do(ctx, "PFADD", "h", fmt.Sprint("x", i)).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGeoSearch(b *testing.B) {
	s := benchServer(b, func(ctx context.Context, s *Server) {
		for i := 0; i < 1000; i++ {
			s.Do(ctx, "GEOADD", "g", 10+float64(i%40)*0.05, 45+float64(i/40)*0.05, fmt.Sprint("p", i))
		}
	})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if err := s.Do(ctx, "GEOSEARCH", "g", "FROMLONLAT", 11, 45.6, "BYRADIUS", 50, "km", "ASC", "WITHDIST").Err(); err != nil {
			b.Fatal(err)
		}
	}
}
