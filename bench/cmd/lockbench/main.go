// Command lockbench measures redlua's locks against redsync, bsm/redislock,
// rueidislock and the raw SET NX floor, on one Redis server in one run, and
// prints markdown tables with absolute numbers and ratios.
//
// The contended workloads run twice: in one process, where goroutines share
// one client, and in separate OS processes that lockbench starts itself (it
// runs its own binary again as workers), each with its own client, the way
// separate services contend.
//
//	cd bench && go run ./cmd/lockbench
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redlua/redlua/bench/lockbench"
)

// config is what the flags choose.
type config struct {
	addr                      string
	dur, contended, procsDur  time.Duration
	only                      map[string]bool
	shared, procs, many, cost bool
	asJSON                    bool
}

func main() {
	// A copy started by RunProcesses is a worker, not the benchmark.
	lockbench.RunWorkerIfAsked()

	var cfg config
	only := flag.String("only", "", "comma-separated contenders to run (default: all)")
	flag.StringVar(&cfg.addr, "addr", "", "Redis server to use (default: start a scratch redis-server on a free loopback port)")
	flag.DurationVar(&cfg.dur, "duration", 3*time.Second, "time per contender in workloads (i) and (iii), run in interleaved slices")
	flag.DurationVar(&cfg.contended, "contended", 5*time.Second, "length of workload (ii) in one process, and of (iv)")
	flag.DurationVar(&cfg.procsDur, "procs-duration", 5*time.Second, "length of each run in separate processes")
	flag.BoolVar(&cfg.shared, "shared", true, "run workloads (i)-(iv) in this process (goroutines sharing one client)")
	flag.BoolVar(&cfg.procs, "procs", true, "run the contended workloads in separate processes (8 and 32 processes on one lock)")
	flag.BoolVar(&cfg.many, "waiters", true, "run 1,000 waiters over 16 processes on one lock")
	flag.BoolVar(&cfg.cost, "cost", true, "compare uncontended cost: replica-acknowledged vs plain (primary + 1 replica started here), quorum vs redsync (3 servers started here)")
	flag.BoolVar(&cfg.asJSON, "json", false, "print JSON instead of markdown tables")
	render := flag.String("render", "", "print the markdown tables of a report saved with -json, and run nothing")
	flag.Parse()
	if *render != "" {
		if err := renderSaved(*render); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(cfg, *only); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench:", err)
		os.Exit(1)
	}
}

func run(cfg config, only string) error {
	if only != "" {
		cfg.only = map[string]bool{}
		for _, name := range strings.Split(only, ",") {
			if _, err := lockbench.ContenderByName(name); err != nil {
				return fmt.Errorf("-only: %w", err)
			}
			cfg.only[name] = true
		}
	}
	if cfg.addr == "" {
		a, stop, err := lockbench.StartServer()
		if err != nil {
			return err
		}
		defer stop()
		cfg.addr = a
	}
	ctx := context.Background()
	var rep report
	rep.Date = time.Now().UTC().Format("2006-01-02 15:04 UTC")
	var contenders []lockbench.Contender
	for _, c := range lockbench.Contenders() {
		if cfg.only == nil || cfg.only[c.Name] {
			contenders = append(contenders, c)
		}
	}
	if cfg.shared {
		rep.Shared = runShared(ctx, cfg, contenders)
	}
	for _, c := range contenders {
		if !c.Waits {
			continue
		}
		if cfg.procs {
			rep.Procs8 = append(rep.Procs8, runProcs(ctx, cfg, c, 8, 0))
			rep.Procs32 = append(rep.Procs32, runProcs(ctx, cfg, c, 32, 0))
		}
		// The raw floor polls every millisecond: with 1,000 waiters that is a
		// flood of SET NX, not a lock anyone would run, so it sits this one out.
		if cfg.many && c.Name != "raw" {
			rep.Waiters1000 = append(rep.Waiters1000, runProcs(ctx, cfg, c, 16, 1000))
		}
	}
	if cfg.cost {
		rep.Cost = runCost(ctx, cfg)
	}
	if cfg.shared && (cfg.only == nil || cfg.only["redlua"]) {
		fmt.Fprintln(os.Stderr, "running redlua RWMutex...")
		r, err := lockbench.ReadWrite(ctx, cfg.addr, 8, time.Millisecond, 20*time.Millisecond, cfg.contended)
		if err != nil {
			return fmt.Errorf("RWMutex: %w", err)
		}
		rep.RW = &r
	}
	if cfg.asJSON {
		return json.NewEncoder(os.Stdout).Encode(rep)
	}
	rep.print(os.Stdout)
	return nil
}

// sharedRow is one contender in one process, goroutines sharing one client.
type sharedRow struct {
	Name, Settings        string
	Uncontended, Parallel float64
	// The same rates per interleaved round, for the per-round ratios.
	UncontendedRounds, ParallelRounds []float64 `json:",omitempty"`
	Contended                         *lockbench.ContendedResult
	Errs                              []string
}

// procRow is one contender in separate processes.
type procRow struct {
	Name               string
	Processes, Waiters int
	Result             *lockbench.ProcessResult
	Err                string
}

// report is everything one run measured.
type report struct {
	Date                         string
	Shared                       []sharedRow
	Procs8, Procs32, Waiters1000 []procRow
	RW                           *lockbench.ReadWriteResult
	Cost                         []costRow
}

// Slices of the interleaved workloads (i) and (iii): every contender runs
// one slice in turn, so load from other processes falls on all alike.
const (
	uncontendedSlice = 250 * time.Millisecond
	parallelSlice    = 500 * time.Millisecond
)

// runShared runs workloads (i)-(iii) in this process: (i) and (iii)
// interleaved across the contenders, then (ii) one contender after another.
func runShared(ctx context.Context, cfg config, contenders []lockbench.Contender) []sharedRow {
	rows := make([]sharedRow, len(contenders))
	var lockers []lockbench.Locker
	var idx []int // rows[idx[k]] belongs to lockers[k]
	for i, c := range contenders {
		rows[i] = sharedRow{Name: c.Name, Settings: c.Settings}
		l, err := c.New(cfg.addr)
		if err != nil {
			rows[i].Errs = append(rows[i].Errs, err.Error())
			continue
		}
		defer l.Close()
		lockers = append(lockers, l)
		idx = append(idx, i)
	}
	fmt.Fprintf(os.Stderr, "running (i) uncontended, interleaved, %v in all per contender...\n", cfg.dur)
	got, err := lockbench.Interleaved(ctx, lockers, "bench:u", max(1, int(cfg.dur/uncontendedSlice)), uncontendedSlice)
	for k, i := range idx {
		if err != nil {
			rows[i].Errs = append(rows[i].Errs, "(i): "+err.Error())
			continue
		}
		rows[i].Uncontended, rows[i].UncontendedRounds = got.Rates[k], got.Rounds[k]
		if got.Errs[k] != nil {
			rows[i].Errs = append(rows[i].Errs, "(i): "+got.Errs[k].Error())
		}
	}
	fmt.Fprintf(os.Stderr, "running (iii) 64 goroutines on 64 locks, interleaved, %v in all per contender...\n", cfg.dur)
	got, err = lockbench.InterleavedParallel(ctx, lockers, "bench:p", 64, max(1, int(cfg.dur/parallelSlice)), parallelSlice)
	for k, i := range idx {
		if err != nil {
			rows[i].Errs = append(rows[i].Errs, "(iii): "+err.Error())
			continue
		}
		rows[i].Parallel, rows[i].ParallelRounds = got.Rates[k], got.Rounds[k]
		if got.Errs[k] != nil {
			rows[i].Errs = append(rows[i].Errs, "(iii): "+got.Errs[k].Error())
		}
	}
	for k, i := range idx {
		c, r := contenders[i], &rows[i]
		if c.Waits {
			fmt.Fprintf(os.Stderr, "running (ii) %s in one process...\n", c.Name)
			res, err := lockbench.Contended(ctx, lockers[k], "bench:c:"+c.Name, 8, time.Millisecond, cfg.contended)
			if err != nil {
				r.Errs = append(r.Errs, "(ii): "+err.Error())
			} else {
				r.Contended = &res
			}
		}
		fmt.Fprintf(os.Stderr, "  %s: (i) %.0f pairs/s, (iii) %.0f pairs/s", c.Name, r.Uncontended, r.Parallel)
		if x := r.Contended; x != nil {
			fmt.Fprintf(os.Stderr, ", (ii) busy %.1f%%, p50 %v, p99 %v, Jain %.3f", 100*x.Busy, x.P50.Round(10*time.Microsecond), x.P99.Round(10*time.Microsecond), x.Jain)
		}
		fmt.Fprintln(os.Stderr)
		for _, e := range r.Errs {
			fmt.Fprintln(os.Stderr, "  error:", e)
		}
	}
	return rows
}

func runProcs(ctx context.Context, cfg config, c lockbench.Contender, processes, waiters int) procRow {
	fmt.Fprintf(os.Stderr, "running %s in %d processes (%d waiters)...\n", c.Name, processes, max(waiters, processes))
	row := procRow{Name: c.Name, Processes: processes, Waiters: max(waiters, processes)}
	r, err := lockbench.RunProcesses(ctx, lockbench.ProcessRun{
		Contender: c.Name, Addr: cfg.addr, Lock: fmt.Sprintf("bench:x%d:%s", row.Waiters, c.Name),
		Processes: processes, Waiters: waiters, Hold: time.Millisecond, Duration: cfg.procsDur,
	})
	if err != nil {
		row.Err = err.Error()
		fmt.Fprintf(os.Stderr, "  error: %v\n", err)
		return row
	}
	row.Result = &r
	fmt.Fprintf(os.Stderr, "  busy %.1f%%, p50 %v, p99 %v, Jain %.3f, %d acquisitions, %d of %d waiters never got it, %.2f script runs/acq, server CPU %v/acq, script time %v/acq (steady: %.2f, %v, %v)\n",
		100*r.Busy, r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), r.Jain, r.Acquired, r.NeverAcquired, r.Waiters, r.ScriptsPerAcq, r.CPUPerAcq.Round(time.Microsecond), r.ScriptTimePerAcq.Round(time.Microsecond),
		r.SteadyScriptsPerAcq, r.SteadyCPUPerAcq.Round(time.Microsecond), r.SteadyScriptTimePerAcq.Round(time.Microsecond))
	return row
}

// renderSaved prints the tables of a report saved with -json.
func renderSaved(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s is not a lockbench -json report: %w", path, err)
	}
	rep.print(os.Stdout)
	return nil
}

// costRow compares redlua's uncontended pairs/s in one mode with a baseline
// measured in the same run, interleaved.
type costRow struct {
	Comparison, Name, Baseline string
	Rate, BaseRate, Target     float64
	// The same rates per interleaved round, for the per-round ratios.
	RateRounds, BaseRounds []float64 `json:",omitempty"`
	Err                    string
}

// runCost measures the cost rows of issue 10 on servers started here: a
// primary with one replica, and three independent primaries.
func runCost(ctx context.Context, cfg config) []costRow {
	rounds := max(1, int(cfg.dur/uncontendedSlice))
	compare := func(row costRow, newLockers func() ([]lockbench.Locker, error)) costRow {
		fmt.Fprintf(os.Stderr, "running cost: %s...\n", row.Comparison)
		lockers, err := newLockers()
		if err != nil {
			row.Err = err.Error()
			fmt.Fprintln(os.Stderr, "  error:", err)
			return row
		}
		defer func() {
			for _, l := range lockers {
				l.Close()
			}
		}()
		got, err := lockbench.Interleaved(ctx, lockers, "bench:cost", rounds, uncontendedSlice)
		if err == nil {
			err = errors.Join(got.Errs...)
		}
		if err != nil {
			row.Err = err.Error()
			fmt.Fprintln(os.Stderr, "  error:", err)
			return row
		}
		row.BaseRate, row.Rate = got.Rates[0], got.Rates[1]
		row.BaseRounds, row.RateRounds = got.Rounds[0], got.Rounds[1]
		fmt.Fprintf(os.Stderr, "  %s %.0f pairs/s, %s %.0f pairs/s: %.2f× (per round %s; target ≥ %.1f×)\n", row.Name, row.Rate, row.Baseline, row.BaseRate, row.Rate/row.BaseRate, spread(row.RateRounds, row.BaseRounds), row.Target)
		return row
	}
	var rows []costRow
	replica := costRow{Comparison: "replica-acknowledged vs plain, primary + 1 replica on loopback", Name: "redlua WithReplicas(1, 1s)", Baseline: "redlua plain", Target: 0.8}
	if primary, stop, err := lockbench.StartPrimaryReplica(); err != nil {
		replica.Err = err.Error()
		rows = append(rows, replica)
	} else {
		rows = append(rows, compare(replica, func() ([]lockbench.Locker, error) {
			return newAll(primary, lockbench.ReplicaContenders())
		}))
		stop()
	}
	quorum := costRow{Comparison: "quorum over 3 independent servers vs redsync over the same 3", Name: "redlua NewQuorum", Baseline: "redsync, 3 pools", Target: 1.0}
	if addrs, stop, err := lockbench.StartServers(3); err != nil {
		quorum.Err = err.Error()
		rows = append(rows, quorum)
	} else {
		rows = append(rows, compare(quorum, func() ([]lockbench.Locker, error) {
			var ls []lockbench.Locker
			for _, c := range lockbench.QuorumContenders() {
				l, err := c.New(addrs)
				if err != nil {
					for _, l := range ls {
						l.Close()
					}
					return nil, fmt.Errorf("%s: %w", c.Name, err)
				}
				ls = append(ls, l)
			}
			return ls, nil
		}))
		stop()
	}
	return rows
}

// newAll makes a Locker of each contender on addr.
func newAll(addr string, cs []lockbench.Contender) ([]lockbench.Locker, error) {
	var ls []lockbench.Locker
	for _, c := range cs {
		l, err := c.New(addr)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}
