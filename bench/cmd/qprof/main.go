package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/redlua/redlua/bench/lockbench"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	which := flag.String("c", "redlua", "contender")
	quorum := flag.Bool("q", false, "quorum")
	prof := flag.String("prof", "", "")
	flag.Parse()
	ports := []string{"46371", "46372", "46373"}
	var addrs []string
	for _, p := range ports {
		cmd := exec.Command("redis-server", "--port", p, "--save", "", "--appendonly", "no")
		cmd.Start()
		defer cmd.Process.Kill()
		addrs = append(addrs, "127.0.0.1:"+p)
	}
	time.Sleep(300 * time.Millisecond)
	var l lockbench.Locker
	var err error
	if *quorum {
		for _, q := range lockbench.QuorumContenders() {
			if q.Name == *which {
				l, err = q.New(addrs)
			}
		}
	} else {
		for _, c := range lockbench.Contenders() {
			if c.Name == *which {
				l, err = c.New(addrs[0])
			}
		}
	}
	if *which != "inter" && (err != nil || l == nil) {
		fmt.Println("no contender", err)
		os.Exit(1)
	}
	ctx := context.Background()
	if *which == "inter" {
		var ls []lockbench.Locker
		for _, c := range lockbench.Contenders() {
			if c.Name == "raw" || c.Name == "redlua" {
				x, _ := c.New(addrs[0])
				ls = append(ls, x)
			}
		}
		rates, errs, _ := lockbench.Interleaved(ctx, ls, "bench:u", 12, 250*time.Millisecond)
		fmt.Println("interleaved raw, redlua:", rates, errs, rates[1]/rates[0])
		return
	}
	lockbench.Uncontended(ctx, l, "warm", time.Second)
	if *prof != "" {
		f, _ := os.Create(*prof)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	c0 := cpu()
	t0 := time.Now()
	rate, err := lockbench.Uncontended(ctx, l, "x", 3*time.Second)
	el := time.Since(t0)
	c1 := cpu()
	n := rate * el.Seconds()
	fmt.Printf("%s: %.0f pairs/s, client CPU %.1f µs/pair %s\n", *which, rate, float64((c1-c0).Microseconds())/n, strings.TrimSpace(fmt.Sprint(err)))
}
