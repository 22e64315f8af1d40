package lockbench_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redlua/redlua/bench/lockbench"
)

// The contenders every workload runs, by name.
func ExampleContenders() {
	for _, c := range lockbench.Contenders() {
		fmt.Println(c.Name)
	}
	// Output:
	// raw
	// redlua
	// redlua-fair
	// redsync
	// redislock
	// rueidislock
}

// Eight separate processes contend for one lock for a second. The program
// must call lockbench.RunWorkerIfAsked first thing in main (or TestMain),
// since the workers are copies of it.
func ExampleRunProcesses() {
	addr, stop, err := lockbench.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	r, err := lockbench.RunProcesses(context.Background(), lockbench.ProcessRun{
		Contender: "redlua-fair", Addr: addr, Lock: "example",
		Processes: 8, Hold: time.Millisecond, Duration: time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("busy %.0f%%, p99 wait %v, %.2f script runs per acquisition\n", 100*r.Busy, r.P99, r.ScriptsPerAcq)
}
