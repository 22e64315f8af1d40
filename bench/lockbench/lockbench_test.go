package lockbench

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Each workload runs briefly against a scratch server for every contender,
// and the harness's numbers are sane: no errors, busy and fairness in [0, 1].
func TestWorkloads(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("REDLUA_REQUIRE_SERVER") == "1" {
			t.Fatal("redis-server not found: apt-get install -y redis-server")
		}
		t.Skip("redis-server not found: apt-get install -y redis-server, or run bash .ci/run")
	}
	addr, stop, err := StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	for _, c := range Contenders() {
		t.Run(c.Name, func(t *testing.T) {
			l, err := c.New(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if rate, err := Uncontended(ctx, l, "t:u:"+c.Name, 100*time.Millisecond); err != nil || rate <= 0 {
				t.Fatalf("uncontended: %v, %v", rate, err)
			}
			if rate, err := Parallel(ctx, l, "t:p:"+c.Name, 8, 100*time.Millisecond); err != nil || rate <= 0 {
				t.Fatalf("parallel: %v, %v", rate, err)
			}
			if !c.Waits {
				return
			}
			r, err := Contended(ctx, l, "t:c:"+c.Name, 4, time.Millisecond, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if r.Acquired == 0 || r.Busy <= 0 || r.Busy > 1 || r.Jain <= 0 || r.Jain > 1 || r.P99 < r.P50 {
				t.Fatalf("contended result out of range: %+v", r)
			}
		})
	}
}

func TestJain(t *testing.T) {
	if j := jain([]int{5, 5, 5, 5}); j != 1 {
		t.Errorf("even counts: %v", j)
	}
	if j := jain([]int{20, 0, 0, 0}); j != 0.25 {
		t.Errorf("one of four: %v, want 0.25", j)
	}
}

func TestReadWrite(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not found: apt-get install -y redis-server, or run bash .ci/run")
	}
	addr, stop, err := StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r, err := ReadWrite(context.Background(), addr, 4, time.Millisecond, 10*time.Millisecond, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReadsPerSecond <= 0 || r.Writes == 0 || r.WriterP99 < r.WriterP50 {
		t.Fatalf("result out of range: %+v", r)
	}
}
