package main

import (
	"fmt"
	"github.com/redlua/redlua/bench/lockbench"
	"io"
	"strings"
	"time"
)

func ms(d time.Duration) string {
	switch {
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
}

func us(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return ms(d)
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func ratio(v, base float64) string {
	if base == 0 || v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", v/base)
}

// spread is the per-round ratio of a to b: the median and the range over
// the rounds in which both ran, or "-" for a report without rounds.
func spread(a, b []float64) string {
	ratios := lockbench.RoundRatios(a, b)
	if len(ratios) == 0 {
		return "-"
	}
	median, lo, hi := lockbench.Spread(ratios)
	return fmt.Sprintf("%.2f× (%.2f–%.2f, %d rounds)", median, lo, hi, len(ratios))
}

func (rep report) print(w io.Writer) {
	fmt.Fprintf(w, "Run of %s.\n\n", rep.Date)
	shared := map[string]sharedRow{}
	for _, r := range rep.Shared {
		shared[r.Name] = r
	}
	if len(rep.Procs8) > 0 || len(rep.Shared) > 0 {
		fmt.Fprintln(w, "(ii) one lock, 8 waiters, each holding it 1 ms per acquisition. Left: separate processes, each with its own client (the headline). Right: in one process, goroutines sharing one client.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| contender | procs: busy | longest idle | p50 wait | p99 wait | max wait | Jain | acq/s | server cmds/acq | script runs/acq | server CPU/acq | never got it | shared client: busy | longest idle | p50 wait | p99 wait | max wait | Jain |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		names := rowNames(rep)
		p8 := byName(rep.Procs8)
		for _, name := range names {
			fmt.Fprintf(w, "| %s | %s | %s |\n", name, procCells(p8[name]), sharedCells(shared[name]))
		}
		fmt.Fprintln(w)
	}
	if len(rep.Procs32) > 0 {
		fmt.Fprintln(w, "32 separate processes on one lock, 1 ms holds:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| contender | busy | longest idle | p50 wait | p99 wait | max wait | Jain | acq/s | server cmds/acq | script runs/acq | server CPU/acq | never got it |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range rep.Procs32 {
			fmt.Fprintf(w, "| %s | %s |\n", r.Name, procCells(r))
		}
		fmt.Fprintln(w)
	}
	if len(rep.Waiters1000) > 0 {
		p8 := byName(rep.Procs8)
		fmt.Fprintln(w, "1,000 waiters (goroutines) over 16 separate processes on one lock, 1 ms holds. *Most served*: the most acquisitions by others during one wait, from the Lock call, and (*after queueing*, redlua only) from when the call learned it was queued (first-come, first-served keeps the second at or below 999; the first can exceed it by the waiters served while a request was on its way to the server); *beyond their place*: waits in which more others got the lock after the call learned it was queued than its place in the queue then (the place − 1 waiters ahead, and the holder, whose Lock may return after that moment), of the waits with a place (redlua only; first-come, first-served keeps it at 0); *overtaken*: waits that an arrival at least 10 ms later got the lock before; *CPU 1000/8*: server CPU per acquisition here over the 8-process run's. *Steady*: the same from a fifth of the way into the run until 100 ms before its end, without the arrival of all 1,000 waiters at the start and their cancelled waits at the end (one-off costs of about three script runs per waiter). *Script time*: the server's time inside scripts (INFO commandstats usec of EVALSHA and the other script commands, the commands a script calls included), without the reading, parsing and replying that its CPU also counts; the peers' SET commands are not in it.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| contender | acquisitions | waiters that got it | p50 wait | p99 wait | longest wait | most served during one wait | after queueing | beyond their place | overtaken waits | script runs/acq | server CPU/acq | CPU 1000/8 | steady: script runs/acq | steady: CPU/acq | steady: CPU 1000/8 | steady: script time/acq | steady: script time 1000/8 |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range rep.Waiters1000 {
			if r.Result == nil {
				fmt.Fprintf(w, "| %s | error: %s ||||||||||||||\n", r.Name, r.Err)
				continue
			}
			x := r.Result
			cpuRatio, steadyRatio, scriptTime, scriptRatio := "-", "-", "-", "-"
			if x.SteadyScriptTimePerAcq > 0 { // reports saved before it was measured have none
				scriptTime = us(x.SteadyScriptTimePerAcq)
			}
			if b := p8[r.Name].Result; b != nil { // the same contender's 8-process run
				if b.CPUPerAcq > 0 {
					cpuRatio = ratio(float64(x.CPUPerAcq), float64(b.CPUPerAcq))
				}
				if b.SteadyCPUPerAcq > 0 && x.SteadyCPUPerAcq > 0 {
					steadyRatio = ratio(float64(x.SteadyCPUPerAcq), float64(b.SteadyCPUPerAcq))
				}
				if b.SteadyScriptTimePerAcq > 0 && x.SteadyScriptTimePerAcq > 0 {
					scriptRatio = ratio(float64(x.SteadyScriptTimePerAcq), float64(b.SteadyScriptTimePerAcq))
				}
			}
			afterQueueing := "-"
			if x.Queue.MaxServedQueued > 0 {
				afterQueueing = fmt.Sprint(x.Queue.MaxServedQueued)
			}
			beyond := "-"
			if x.Queue.Placed > 0 {
				beyond = fmt.Sprintf("%d of %d", x.Queue.BeyondPlace, x.Queue.Placed)
			}
			fmt.Fprintf(w, "| %s | %d | %d of %d | %s | %s | %s | %d | %s | %s | %d of %d | %.2f | %s | %s | %.2f | %s | %s | %s | %s |\n", r.Name, x.Acquired,
				x.Waiters-x.NeverAcquired, x.Waiters, ms(x.P50), ms(x.P99), ms(x.Queue.LongestWait), x.Queue.MaxServed, afterQueueing, beyond,
				x.Queue.Overtaken, x.Acquired+x.CutOff, x.ScriptsPerAcq, us(x.CPUPerAcq), cpuRatio,
				x.SteadyScriptsPerAcq, us(x.SteadyCPUPerAcq), steadyRatio, scriptTime, scriptRatio)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Shared) > 0 {
		base := map[string]float64{}
		par := map[string]float64{}
		for _, r := range rep.Shared {
			if !r.failed("(i)") {
				base[r.Name] = r.Uncontended
			}
			if !r.failed("(iii)") {
				par[r.Name] = r.Parallel
			}
		}
		// A workload that failed part-way shows the rate of its completed
		// slices, marked, and is no baseline for ratios.
		rate := func(r sharedRow, workload string, v float64) string {
			if r.failed(workload) {
				return fmt.Sprintf("%.0f, then failed (below)", v)
			}
			return fmt.Sprintf("%.0f", v)
		}
		fmt.Fprintln(w, "(i) one goroutine, Lock+Unlock pairs/s; (iii) 64 goroutines each on its own lock, total pairs/s. In one process, goroutines sharing one client.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| contender | (i) pairs/s | vs raw | vs redsync | (iii) pairs/s | vs raw | vs rueidislock |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		for _, r := range rep.Shared {
			u, p := r.Uncontended, r.Parallel
			if r.failed("(i)") {
				u = 0 // no ratio
			}
			if r.failed("(iii)") {
				p = 0
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Name, rate(r, "(i)", r.Uncontended), ratio(u, base["raw"]),
				ratio(u, base["redsync"]), rate(r, "(iii)", r.Parallel), ratio(p, par["raw"]), ratio(p, par["rueidislock"]))
		}
		fmt.Fprintln(w)
		rounds := map[string]sharedRow{}
		for _, r := range rep.Shared {
			rounds[r.Name] = r
		}
		if raw, rueidis := rounds["raw"], rounds["rueidislock"]; len(raw.UncontendedRounds) > 0 || len(rueidis.ParallelRounds) > 0 {
			fmt.Fprintln(w, "Per round (each round runs every contender once, back to back, so a ratio within a round compares neighbours in time): median (lowest–highest).")
			fmt.Fprintln(w)
			fmt.Fprintln(w, "| contender | (i) vs raw, per round | (iii) vs rueidislock, per round |")
			fmt.Fprintln(w, "|---|---:|---:|")
			for _, r := range rep.Shared {
				if strings.HasPrefix(r.Name, "redlua") {
					fmt.Fprintf(w, "| %s | %s | %s |\n", r.Name, spread(r.UncontendedRounds, raw.UncontendedRounds), spread(r.ParallelRounds, rueidis.ParallelRounds))
				}
			}
			fmt.Fprintln(w)
		}
		for _, r := range rep.Shared {
			fmt.Fprintf(w, "- %s: %s\n", r.Name, r.Settings)
		}
	}
	for _, rows := range [][]procRow{rep.Procs8, rep.Procs32} {
		for _, r := range rows {
			if r.Err != "" {
				fmt.Fprintf(w, "- error, %s in %d processes: %s\n", r.Name, r.Processes, r.Err)
			}
		}
	}
	for _, r := range rep.Shared {
		for _, e := range r.Errs {
			fmt.Fprintf(w, "- error, %s in one process: %s\n", r.Name, e)
		}
	}
	if len(rep.Cost) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Cost of the safer modes, (i) uncontended Lock+Unlock pairs/s, interleaved with the baseline in one process:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| comparison | redlua mode | pairs/s | baseline | pairs/s | ratio | per round: median (lowest–highest) | target |")
		fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|")
		for _, r := range rep.Cost {
			if r.Err != "" {
				fmt.Fprintf(w, "| %s | %s | error: %s | %s | | | | ≥ %.1f× |\n", r.Comparison, r.Name, r.Err, r.Baseline, r.Target)
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %.0f | %s | %.0f | %s | %s | ≥ %.1f× |\n", r.Comparison, r.Name, r.Rate, r.Baseline, r.BaseRate, ratio(r.Rate, r.BaseRate), spread(r.RateRounds, r.BaseRounds), r.Target)
		}
	}
	if rep.RW != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "(iv) RWMutex, 8 readers holding 1 ms each, 1 writer every 20 ms, in one process (redlua only: the peers have no read-write lock):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| contender | reads/s | writes | writer p50 wait | writer p99 wait |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		fmt.Fprintf(w, "| redlua RWMutex | %.0f | %d | %s | %s |\n", rep.RW.ReadsPerSecond, rep.RW.Writes, ms(rep.RW.WriterP50), ms(rep.RW.WriterP99))
	}
}

func rowNames(rep report) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, r := range rep.Procs8 {
		add(r.Name)
	}
	for _, r := range rep.Shared {
		if r.Contended != nil {
			add(r.Name)
		}
	}
	return names
}

func byName(rows []procRow) map[string]procRow {
	m := map[string]procRow{}
	for _, r := range rows {
		m[r.Name] = r
	}
	return m
}

// procCells are the cells of one separate-process result.
func procCells(r procRow) string {
	if r.Result == nil {
		if r.Err != "" {
			return "error (below) | | | | | | | | | | "
		}
		return "- | - | - | - | - | - | - | - | - | - | -"
	}
	x := r.Result
	acqPerSec := float64(x.Acquired) / x.Wall.Seconds()
	return fmt.Sprintf("%s | %s | %s | %s | %s | %.3f | %.0f | %.1f | %.2f | %s | %d of %d", pct(x.Busy), ms(x.LongestIdle), ms(x.P50), ms(x.P99), ms(x.Queue.LongestWait), x.Jain, acqPerSec,
		x.CommandsPerAcq, x.ScriptsPerAcq, us(x.CPUPerAcq), x.NeverAcquired, x.Waiters)
}

func sharedCells(r sharedRow) string {
	if r.Contended == nil {
		return "- | - | - | - | - | -"
	}
	x := r.Contended
	return fmt.Sprintf("%s | %s | %s | %s | %s | %.3f", pct(x.Busy), ms(x.LongestIdle), ms(x.P50), ms(x.P99), ms(x.Queue.LongestWait), x.Jain)
}

// failed reports whether the workload ("(i)", "(ii)", "(iii)") had an error.
func (r sharedRow) failed(workload string) bool {
	for _, e := range r.Errs {
		if strings.HasPrefix(e, workload+":") {
			return true
		}
	}
	return false
}
