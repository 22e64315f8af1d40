// Command scalebench measures what a pile of callers on one lock name
// costs the server: per workload, the server time per script run with a
// small and a large pile (their ratio from one run), the slowest script
// SLOWLOG kept, and the longest PING wait on another connection; and the
// server memory per held lock of each kind against a raw SET NX PX,
// redsync and bsm/redislock.
//
//	cd bench && go run ./cmd/scalebench                # 100 and 10,000 callers, 20,000 held locks
//	cd bench && go run ./cmd/scalebench -large 4000 -only mutex-giveup -held 0
//
// On Linux with two CPUs or more, the scratch server runs on CPU 0 alone
// and this program (the callers and the PING watcher) on the others
// (-pin=false turns that off), so that SLOWLOG's times are the scripts'
// work and not the callers' scheduling on the server's CPU.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redlua/redlua/bench/lockbench"
)

func main() {
	lockbench.RunWorkerIfAsked() // the PING watcher is a copy of this program
	small := flag.Int("small", 100, "callers on one name in the first round")
	large := flag.Int("large", 10000, "callers on one name in the second round")
	held := flag.Int("held", 20000, "locks held (each on its own name) for the memory table; 0 skips it")
	only := flag.String("only", "", "comma-separated workloads (default all: "+strings.Join(lockbench.ScaleWorkloads, ", ")+")")
	addr := flag.String("addr", "", "Redis server to use, flushed by every run (default: start a scratch redis-server on a free loopback port)")
	pin := flag.Bool("pin", runtime.NumCPU() >= 2, "run the scratch server on CPU 0 alone and this program on the other CPUs (Linux, taskset)")
	flag.Parse()
	serverCPUs := ""
	if *pin && *addr == "" {
		if err := pinAwayFromServer(); err != nil {
			fmt.Fprintln(os.Stderr, "scalebench:", err)
			os.Exit(1)
		}
		serverCPUs = "0"
	}
	if err := run(*addr, serverCPUs, *only, *small, *large, *held); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

// pinnedEnv marks the copy of this program that pinAwayFromServer started.
const pinnedEnv = "SCALEBENCH_PINNED"

// pinAwayFromServer runs this program again under taskset on CPUs 1 and up,
// and exits with its status; in that copy it returns at once.
func pinAwayFromServer() error {
	if os.Getenv(pinnedEnv) != "" {
		return nil
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return fmt.Errorf("-pin needs taskset (apt-get install -y util-linux), or pass -pin=false: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	argv := append([]string{taskset, "-c", fmt.Sprintf("1-%d", runtime.NumCPU()-1), exe}, os.Args[1:]...)
	return syscall.Exec(taskset, argv, append(os.Environ(), pinnedEnv+"=1"))
}

func run(addr, serverCPUs, only string, small, large, held int) error {
	if small < 1 || large < small {
		return fmt.Errorf("-small %d -large %d: want 1 <= small <= large", small, large)
	}
	if held < 0 {
		return fmt.Errorf("-held %d: want 0 (no memory table) or more", held)
	}
	workloads := lockbench.ScaleWorkloads
	if only != "" {
		workloads = strings.Split(only, ",")
		for _, w := range workloads {
			if !slices.Contains(lockbench.ScaleWorkloads, w) {
				return fmt.Errorf("-only: unknown workload %q: want some of %s", w, strings.Join(lockbench.ScaleWorkloads, ", "))
			}
		}
	}
	if addr == "" {
		start := lockbench.StartServer
		if serverCPUs != "" {
			start = func() (string, func(), error) { return lockbench.StartServerOnCPUs(serverCPUs) }
		}
		a, stop, err := start()
		if err != nil {
			return err
		}
		defer stop()
		addr = a
	}
	ctx := context.Background()
	fmt.Printf("| workload on one name | server time per call, %d → %d callers | ratio | longest call (SLOWLOG) | longest PING wait | calls |\n", small, large)
	fmt.Println("|---|---|---|---|---|---|")
	for _, w := range workloads {
		a, err := lockbench.RunScale(ctx, addr, w, small)
		if err != nil {
			return err
		}
		b, err := lockbench.RunScale(ctx, addr, w, large)
		if err != nil {
			return err
		}
		longest := a
		if b.LongestScript > a.LongestScript {
			longest = b
		}
		script := "none over 0.5 ms"
		if longest.LongestScript > 0 {
			script = fmt.Sprintf("%v `%s`", longest.LongestScript.Round(time.Microsecond), longest.LongestScriptName)
		}
		fmt.Printf("| %s | %.1f → %.1f µs | %.2fx | %s | %v → %v | %d → %d |\n", w,
			us(a.PerCall()), us(b.PerCall()), us(b.PerCall())/max(us(a.PerCall()), 0.001), script,
			a.LongestPing.Round(time.Microsecond), b.LongestPing.Round(time.Microsecond), a.ScriptRuns, b.ScriptRuns)
	}
	if held == 0 {
		return nil
	}
	fmt.Printf("\n| %d held locks | bytes per held lock | x raw |\n|---|---|---|\n", held)
	var raw float64
	for _, kind := range lockbench.HoldKinds {
		b, err := lockbench.BytesPerHeld(ctx, addr, kind, held)
		if err != nil {
			return err
		}
		if kind == "raw SET NX PX" {
			raw = b
		}
		fmt.Printf("| %s | %.0f | %.2fx |\n", kind, b, b/raw)
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
