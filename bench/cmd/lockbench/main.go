// Command lockbench measures redlua's locks against redsync, bsm/redislock,
// rueidislock and the raw SET NX floor, on one Redis server in one run, and
// prints a markdown table with absolute numbers and ratios.
//
//	cd bench && go run ./cmd/lockbench
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redlua/redlua/bench/lockbench"
)

type row struct {
	Name, Settings           string
	Uncontended, Parallel    float64
	Busy, Jain               float64
	P50, P99                 time.Duration
	ContendedAcquisitions    int
	HasContended, HasPairs   bool
	UncontendedErr, OtherErr string
}

func main() {
	addr := flag.String("addr", "", "Redis server to use (default: start a scratch redis-server on a free loopback port)")
	dur := flag.Duration("duration", 3*time.Second, "length of workloads (i) and (iii)")
	contended := flag.Duration("contended", 5*time.Second, "length of workload (ii)")
	only := flag.String("only", "", "comma-separated contenders to run (default: all)")
	asJSON := flag.Bool("json", false, "print JSON instead of a markdown table")
	flag.Parse()

	if *addr == "" {
		a, stop, err := lockbench.StartServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer stop()
		*addr = a
	}
	ctx := context.Background()
	var rows []row
	for _, c := range lockbench.Contenders() {
		if *only != "" && !strings.Contains(","+*only+",", ","+c.Name+",") {
			continue
		}
		fmt.Fprintf(os.Stderr, "running %s...\n", c.Name)
		l, err := c.New(*addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", c.Name, err)
			os.Exit(1)
		}
		r := row{Name: c.Name, Settings: c.Settings}
		if r.Uncontended, err = lockbench.Uncontended(ctx, l, "bench:u:"+c.Name, *dur); err != nil {
			r.UncontendedErr = err.Error()
		}
		if c.Waits {
			res, err := lockbench.Contended(ctx, l, "bench:c:"+c.Name, 8, time.Millisecond, *contended)
			if err != nil {
				r.OtherErr = err.Error()
			}
			r.HasContended = err == nil
			r.Busy, r.Jain, r.P50, r.P99, r.ContendedAcquisitions = res.Busy, res.Jain, res.P50, res.P99, res.Acquired
		}
		if r.Parallel, err = lockbench.Parallel(ctx, l, "bench:p:"+c.Name, 64, *dur); err != nil {
			r.OtherErr = err.Error()
		}
		l.Close()
		rows = append(rows, r)
	}
	var rw *lockbench.ReadWriteResult
	if *only == "" || strings.Contains(","+*only+",", ",redlua,") {
		fmt.Fprintln(os.Stderr, "running redlua RWMutex...")
		r, err := lockbench.ReadWrite(ctx, *addr, 8, time.Millisecond, 20*time.Millisecond, *contended)
		if err != nil {
			fmt.Fprintln(os.Stderr, "RWMutex:", err)
			os.Exit(1)
		}
		rw = &r
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(map[string]any{"locks": rows, "rwmutex": rw})
		return
	}
	printTable(rows)
	if rw != nil {
		fmt.Println()
		fmt.Println("(iv) RWMutex, 8 readers holding 1 ms each, 1 writer every 20 ms (redlua only: redsync, redislock and rueidislock have no read-write lock):")
		fmt.Println()
		fmt.Println("| contender | reads/s | writes | writer p50 wait | writer p99 wait |")
		fmt.Println("|---|---:|---:|---:|---:|")
		fmt.Printf("| redlua RWMutex | %.0f | %d | %s | %s |\n", rw.ReadsPerSecond, rw.Writes, rw.WriterP50.Round(10*time.Microsecond), rw.WriterP99.Round(10*time.Microsecond))
	}
}

func printTable(rows []row) {
	base := map[string]float64{}
	for _, r := range rows {
		base[r.Name] = r.Uncontended
	}
	ratio := func(v float64, name string) string {
		if base[name] == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", v/base[name])
	}
	fmt.Println("| contender | (i) pairs/s | vs redsync | vs raw | (ii) busy | (ii) p50 wait | (ii) p99 wait | (ii) Jain | (iii) pairs/s |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		busy, p50, p99, jain := "-", "-", "-", "-"
		if r.HasContended {
			busy = fmt.Sprintf("%.1f%%", 100*r.Busy)
			p50 = r.P50.Round(10 * time.Microsecond).String()
			p99 = r.P99.Round(10 * time.Microsecond).String()
			jain = fmt.Sprintf("%.3f", r.Jain)
		}
		fmt.Printf("| %s | %.0f | %s | %s | %s | %s | %s | %s | %.0f |\n", r.Name, r.Uncontended,
			ratio(r.Uncontended, "redsync"), ratio(r.Uncontended, "raw"), busy, p50, p99, jain, r.Parallel)
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("- %s: %s", r.Name, r.Settings)
		if r.UncontendedErr != "" || r.OtherErr != "" {
			fmt.Printf(" (errors: %s %s)", r.UncontendedErr, r.OtherErr)
		}
		fmt.Println()
	}
}
