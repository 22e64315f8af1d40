package evalsha_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
)

// concurrentContract runs many concurrent calls through one Runner (cold
// script cache, so batches take the NOSCRIPT fallback) and checks that
// every one counted exactly once.
func concurrentContract(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	r := newRunner(t, client)
	incr := script(t, testRegistry(t), "counter.incr")
	const goroutines, runs, keys = 32, 50, 8
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < runs; i++ {
				key := fmt.Sprintf("{k%d}n", (g+i)%keys)
				if err := r.Run(ctx, incr, []string{key}, 1).Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total int64
	for k := 0; k < keys; k++ {
		n, err := client.Get(ctx, fmt.Sprintf("{k%d}n", k)).Int64()
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != goroutines*runs {
		t.Fatalf("counters sum to %d, want %d", total, goroutines*runs)
	}
	if s := r.Stats(); s.Calls != goroutines*runs || s.Failures != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestAutoPipeliningRealServer(t *testing.T) {
	concurrentContract(t, redistest.Standalone(t).Client())
}

func TestAutoPipeliningCluster(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3})
	concurrentContract(t, cl.Client())
}
