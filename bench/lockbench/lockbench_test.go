package lockbench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	RunWorkerIfAsked()
	os.Exit(m.Run())
}

// needServer skips (or, with REDLUA_REQUIRE_SERVER=1, fails) without redis-server.
func needServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("REDLUA_REQUIRE_SERVER") == "1" {
			t.Fatal("redis-server not found: apt-get install -y redis-server")
		}
		t.Skip("redis-server not found: apt-get install -y redis-server, or run bash .ci/run")
	}
}

// Each workload runs briefly against a scratch server for every contender,
// and the harness's numbers are sane: no errors, busy and fairness in [0, 1].
func TestWorkloads(t *testing.T) {
	needServer(t)
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
			// A peer that stalls on a busy machine (rueidislock's 20 ms
			// attempt timeout) is measured, not tested: the harness reported
			// the stall as it should.
			skipPeerStall := func(err error) {
				if errors.Is(err, ErrStalled) && c.Name != "raw" && !strings.HasPrefix(c.Name, "redlua") {
					t.Skipf("%s stalled, reported as it should be: %v", c.Name, err)
				}
			}
			if rate, err := Uncontended(ctx, l, "t:u:"+c.Name, 100*time.Millisecond); err != nil || rate <= 0 {
				skipPeerStall(err)
				t.Fatalf("uncontended: %v, %v", rate, err)
			}
			if rate, err := Parallel(ctx, l, "t:p:"+c.Name, 8, 100*time.Millisecond); err != nil || rate <= 0 {
				skipPeerStall(err)
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

func TestReadWrite(t *testing.T) {
	needServer(t)
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

// A run in separate processes: the workers start, contend, report, and the
// merged figures are sane, with the server's cost charged per acquisition.
func TestRunProcesses(t *testing.T) {
	needServer(t)
	addr, stop, err := StartServer()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, name := range []string{"redlua", "redlua-fair", "raw"} {
		t.Run(name, func(t *testing.T) {
			r, err := RunProcesses(context.Background(), ProcessRun{
				Contender: name, Addr: addr, Lock: "t:procs:" + name,
				Processes: 2, Waiters: 6, Hold: time.Millisecond, Duration: 300 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", r)
			if r.Waiters != 6 || r.Acquired == 0 || r.Busy <= 0 || r.Busy > 1 || r.Jain <= 0 || r.Jain > 1 || r.P99 < r.P50 {
				t.Fatalf("result out of range: %+v", r)
			}
			if r.Cost.Commands < int64(r.Acquired) || r.ScriptsPerAcq <= 0 || r.CommandsPerAcq < r.ScriptsPerAcq {
				t.Fatalf("server cost out of range: %+v", r)
			}
		})
	}
}

func TestProcessRunValidation(t *testing.T) {
	good := ProcessRun{Contender: "redlua", Addr: "127.0.0.1:1", Lock: "x", Processes: 2, Hold: time.Millisecond, Duration: time.Second}
	for name, mutate := range map[string]func(*ProcessRun){
		"no processes":      func(r *ProcessRun) { r.Processes = 0 },
		"fewer waiters":     func(r *ProcessRun) { r.Waiters = 1 },
		"unknown contender": func(r *ProcessRun) { r.Contender = "nope" },
		"no duration":       func(r *ProcessRun) { r.Duration = 0 },
		"no lock name":      func(r *ProcessRun) { r.Lock = "" },
	} {
		r := good
		mutate(&r)
		if _, err := RunProcesses(context.Background(), r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A call that outlives its workload by stuckGrace ends as ErrStalled, and a
// call that failed for another reason keeps its own error.
func TestStalledCallIsReported(t *testing.T) {
	ctx, cancel := boundedCtx(context.Background(), -stuckGrace+10*time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if err := stuck(ctx, ctx.Err()); !errors.Is(err, ErrStalled) {
		t.Errorf("a call past the bound: %v, want ErrStalled", err)
	}
	live, cancelLive := boundedCtx(context.Background(), time.Minute)
	defer cancelLive()
	other := errors.New("connection refused")
	if err := stuck(live, other); err != other {
		t.Errorf("an unrelated error became %v", err)
	}
}
