// Command servercost counts the instructions redis-server executes for one
// uncontended lock pair (acquire, then release) of raw SET NX, redsync,
// bsm/redislock and each redlua lock kind, by running the server under
// valgrind's callgrind. Instruction counts do not depend on the machine's
// load, so a run on a busy machine gives the same ratios as a quiet one.
//
//	apt-get install -y valgrind redis-server
//	cd bench && go run ./cmd/servercost
//
// -commands adds each contender's commands per pair by name; -keep DIR keeps
// each round's callgrind dump, so that callgrind_annotate --inclusive=yes
// shows where a script's instructions go.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/redlua/redlua/bench/lockbench"
)

func main() {
	pairs := flag.Int("pairs", 1000, "uncontended pairs per round")
	rounds := flag.Int("rounds", 3, "rounds per contender; the median is reported")
	only := flag.String("only", "", "comma-separated contenders to run (default: all)")
	quiet := flag.Bool("q", false, "no progress lines on stderr")
	keep := flag.String("keep", "", "keep each round's callgrind dump in this directory, for callgrind_annotate")
	commands := flag.Bool("commands", false, "also print each contender's commands per pair, by command")
	flag.Parse()
	if *keep != "" {
		if err := os.MkdirAll(*keep, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "servercost:", err)
			os.Exit(2)
		}
	}
	o := lockbench.CostOptions{Pairs: *pairs, Rounds: *rounds, Only: map[string]bool{}, KeepDumps: *keep}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			o.Only[n] = true
		}
	}
	if !*quiet {
		o.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	res, err := lockbench.PairInstructions(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "servercost:", err)
		os.Exit(1)
	}
	var raw float64
	for _, r := range res {
		if r.Name == "raw" {
			raw = r.Instructions
		}
	}
	fmt.Println("| contender | settings | server instructions per pair | rounds: lowest-highest | x raw | commands per pair |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, r := range res {
		ratio := "-"
		if raw > 0 {
			ratio = fmt.Sprintf("%.2f", r.Instructions/raw)
		}
		lo, hi := r.Rounds[0], r.Rounds[0]
		for _, v := range r.Rounds {
			lo, hi = min(lo, v), max(hi, v)
		}
		fmt.Printf("| %s | %s | %.1fk | %.1f-%.1fk | %s | %.1f |\n", r.Name, r.Settings, r.Instructions/1000, lo/1000, hi/1000, ratio, r.Commands)
	}
	if *commands {
		fmt.Println()
		fmt.Println("| contender | commands per pair, by command |")
		fmt.Println("|---|---|")
		for _, r := range res {
			var names []string
			for name := range r.PerCommand {
				names = append(names, name)
			}
			sort.Strings(names)
			var parts []string
			for _, name := range names {
				parts = append(parts, fmt.Sprintf("%s %.2f", name, r.PerCommand[name]))
			}
			fmt.Printf("| %s | %s |\n", r.Name, strings.Join(parts, ", "))
		}
	}
}
