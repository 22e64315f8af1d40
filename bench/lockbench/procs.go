package lockbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ProcessRun describes a contended run in separate OS processes: each worker
// process is this program started again (see RunWorkerIfAsked) with its own
// go-redis client and its own lock client, the way separate services contend.
type ProcessRun struct {
	Contender string // a name from Contenders
	Addr      string // the Redis server
	Lock      string // the lock name all waiters contend for
	Processes int
	// Waiters is the number of goroutines in all, spread evenly over the
	// processes (those of one process share its client); 0 means one per process.
	Waiters  int
	Hold     time.Duration // how long each acquisition holds the lock
	Duration time.Duration
}

// ProcessResult is what a run in separate processes measures.
type ProcessResult struct {
	ContendedResult
	// Cost is what the server spent during the run, from INFO deltas.
	Cost                          ServerCost
	CommandsPerAcq, ScriptsPerAcq float64
	CPUPerAcq                     time.Duration
	ScriptTimePerAcq              time.Duration // the server's time in scripts per acquisition
	// Steady is the same from a fifth of the way into the run until just
	// before its end, with the acquisitions made in that window: it leaves
	// out the arrival of every waiter at the start and the cancelled waits
	// at the end, one-off costs that, spread over a short run's
	// acquisitions, hide how the cost of a hand-over grows with the queue.
	Steady                 ServerCost
	SteadyAcquired         int
	SteadyScriptsPerAcq    float64
	SteadyCPUPerAcq        time.Duration
	SteadyScriptTimePerAcq time.Duration
}

func (r ProcessRun) validate() error {
	switch {
	case r.Processes <= 0:
		return fmt.Errorf("lockbench: ProcessRun.Processes is %d: give at least 1", r.Processes)
	case r.Waiters < 0:
		return fmt.Errorf("lockbench: ProcessRun.Waiters is %d: give 0 (one per process) or more", r.Waiters)
	case r.Waiters > 0 && r.Waiters < r.Processes:
		return fmt.Errorf("lockbench: ProcessRun.Waiters (%d) is fewer than Processes (%d): every process needs a waiter", r.Waiters, r.Processes)
	case r.Hold < 0 || r.Duration <= 0:
		return fmt.Errorf("lockbench: ProcessRun needs Hold >= 0 and Duration > 0 (got %v, %v)", r.Hold, r.Duration)
	case r.Addr == "" || r.Lock == "":
		return errors.New("lockbench: ProcessRun needs Addr and Lock")
	}
	_, err := ContenderByName(r.Contender)
	return err
}

// A worker's warm-up acquisition, which nobody contends, gets warmUpTries
// attempts of warmUpLimit each, on fresh names: when 32 processes start at
// once on 2 busy cores, a client with a short internal timeout (rueidislock's
// 20 ms TryNextAfter) can stall its first attempt until the lock's validity
// ends, which says nothing about how it contends once running.
const (
	warmUpLimit = 10 * time.Second
	warmUpTries = 3
)

// warmUp dials connections and loads scripts with one acquisition on a lock
// of this process's own, as in a service that has been running a while.
func warmUp(ctx context.Context, l Locker, prefix string) error {
	var errs []error
	for try := range warmUpTries {
		warmCtx, cancel := context.WithTimeout(ctx, warmUpLimit)
		unlock, err := l.Lock(warmCtx, fmt.Sprintf("%s:warm:%d:%d", prefix, os.Getpid(), try))
		if err == nil {
			err = unlock(warmCtx)
		}
		cancel()
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("warm-up (Lock+Unlock of a lock nobody else uses) failed %d times, %v each: %w", warmUpTries, warmUpLimit, errors.Join(errs...))
}

// workerEnv marks a process as a worker; its stdin carries the protocol.
const workerEnv = "LOCKBENCH_WORKER"

// workerSpec is the first line a worker reads.
type workerSpec struct {
	Contender, Addr, Lock string
	Waiters               int
	Hold                  time.Duration
}

// workerGo is the second line: the run's wall-clock window, in Unix
// nanoseconds (all processes share the machine's clock).
type workerGo struct{ Start, End int64 }

// workerHold is a Hold on the wire, in Unix nanoseconds.
type workerHold struct {
	W       int
	A, G, R int64
	Q       int64 `json:",omitempty"` // Hold.Queued.At, 0 when unknown
	P       int64 `json:",omitempty"` // Hold.Queued.Place, 0 when unknown
}

// workerReport is the worker's last line.
type workerReport struct {
	Holds   []workerHold
	Pending []int64
	Counts  []int
	Err     string
}

// RunProcesses runs r: it starts the worker processes, waits until each has
// connected and warmed up (one acquisition on a lock of its own), snapshots the
// server's counters, lets all of them contend for the same window, and merges
// their reports. The program must call RunWorkerIfAsked first thing in main
// (or TestMain) for its copies to act as workers.
func RunProcesses(ctx context.Context, r ProcessRun) (ProcessResult, error) {
	if err := r.validate(); err != nil {
		return ProcessResult{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return ProcessResult{}, fmt.Errorf("lockbench: finding this program to start workers: %w", err)
	}
	waiters := r.Waiters
	if waiters == 0 {
		waiters = r.Processes
	}
	workers := make([]*worker, 0, r.Processes)
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for p := range r.Processes {
		// Spread the waiters evenly: the first waiters%Processes get one more.
		n := waiters / r.Processes
		if p < waiters%r.Processes {
			n++
		}
		w, err := startWorker(exe, workerSpec{Contender: r.Contender, Addr: r.Addr, Lock: r.Lock, Waiters: n, Hold: r.Hold})
		if err != nil {
			return ProcessResult{}, fmt.Errorf("lockbench: worker %d: %w", p, err)
		}
		workers = append(workers, w)
	}
	for p, w := range workers {
		if err := w.awaitReady(60 * time.Second); err != nil {
			return ProcessResult{}, fmt.Errorf("lockbench: worker %d: %w", p, err)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	before, err := ReadServerStats(ctx, rc)
	if err != nil {
		return ProcessResult{}, fmt.Errorf("lockbench: %w", err)
	}
	// The start lies a little ahead so every worker has it before it comes.
	start := time.Now().Add(100 * time.Millisecond)
	end := start.Add(r.Duration)
	for p, w := range workers {
		if err := w.send(workerGo{Start: start.UnixNano(), End: end.UnixNano()}); err != nil {
			return ProcessResult{}, fmt.Errorf("lockbench: worker %d: %w", p, err)
		}
	}
	// The steady window's stats are read while the workers run.
	steadyFrom, steadyTo := start.Add(r.Duration/5), end.Add(-100*time.Millisecond)
	type statsAt struct {
		from, to ServerStats
		err      error
	}
	steady := make(chan statsAt, 1)
	go func() {
		var s statsAt
		time.Sleep(time.Until(steadyFrom))
		if s.from, s.err = ReadServerStats(ctx, rc); s.err == nil {
			time.Sleep(time.Until(steadyTo))
			s.to, s.err = ReadServerStats(ctx, rc)
		}
		steady <- s
	}()
	var tr Trace
	for p, w := range workers {
		rep, err := w.awaitReport(time.Until(end) + 60*time.Second)
		if err != nil {
			return ProcessResult{}, fmt.Errorf("lockbench: worker %d: %w", p, err)
		}
		if rep.Err != "" {
			return ProcessResult{}, fmt.Errorf("lockbench: worker %d (%s): %s", p, r.Contender, rep.Err)
		}
		base := len(tr.Counts)
		for _, h := range rep.Holds {
			hold := Hold{Waiter: base + h.W, Asked: time.Unix(0, h.A), Got: time.Unix(0, h.G), Released: time.Unix(0, h.R)}
			hold.Queued.Place = h.P
			if h.Q != 0 {
				hold.Queued.At = time.Unix(0, h.Q)
			}
			tr.Holds = append(tr.Holds, hold)
		}
		for _, a := range rep.Pending {
			tr.Pending = append(tr.Pending, time.Unix(0, a))
		}
		tr.Counts = append(tr.Counts, rep.Counts...)
	}
	after, err := ReadServerStats(ctx, rc)
	if err != nil {
		return ProcessResult{}, fmt.Errorf("lockbench: %w", err)
	}
	res := ProcessResult{ContendedResult: summarize(tr, start, end), Cost: costBetween(before, after)}
	if res.Acquired > 0 {
		acq := float64(res.Acquired)
		res.CommandsPerAcq = float64(res.Cost.Commands) / acq
		res.ScriptsPerAcq = float64(res.Cost.ScriptRuns) / acq
		res.CPUPerAcq = res.Cost.CPU / time.Duration(res.Acquired)
		res.ScriptTimePerAcq = res.Cost.ScriptTime / time.Duration(res.Acquired)
	}
	st := <-steady
	if st.err != nil {
		return ProcessResult{}, fmt.Errorf("lockbench: steady window: %w", st.err)
	}
	res.Steady = costBetween(st.from, st.to)
	for _, h := range tr.Holds {
		if !h.Got.Before(steadyFrom) && h.Got.Before(steadyTo) {
			res.SteadyAcquired++
		}
	}
	if res.SteadyAcquired > 0 {
		res.SteadyScriptsPerAcq = float64(res.Steady.ScriptRuns) / float64(res.SteadyAcquired)
		res.SteadyCPUPerAcq = res.Steady.CPU / time.Duration(res.SteadyAcquired)
		res.SteadyScriptTimePerAcq = res.Steady.ScriptTime / time.Duration(res.SteadyAcquired)
	}
	return res, nil
}

// worker is the parent's handle on one worker process.
type worker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // the worker's stdout, line by line; closed at EOF
}

func startWorker(exe string, spec workerSpec) (*worker, error) {
	cmd, stdin, stdout, err := startCopy(exe, workerEnv+"=1")
	if err != nil {
		return nil, err
	}
	w := &worker{cmd: cmd, stdin: stdin, lines: make(chan string, 4)}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	if err := w.send(spec); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

func (w *worker) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.stdin.Write(append(b, '\n'))
	return err
}

func (w *worker) next(timeout time.Duration) (string, error) {
	select {
	case line, ok := <-w.lines:
		if !ok {
			return "", errors.New("exited before reporting (see its stderr above)")
		}
		return line, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("no answer within %v", timeout)
	}
}

func (w *worker) awaitReady(timeout time.Duration) error {
	line, err := w.next(timeout)
	if err != nil {
		return err
	}
	if line != "ready" {
		return fmt.Errorf("expected \"ready\", got %q", line)
	}
	return nil
}

func (w *worker) awaitReport(timeout time.Duration) (workerReport, error) {
	var rep workerReport
	line, err := w.next(timeout)
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		return rep, fmt.Errorf("reading its report: %w", err)
	}
	return rep, nil
}

// stop ends the worker if it still runs and reaps it.
func (w *worker) stop() {
	w.stdin.Close()
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		w.cmd.Process.Kill()
		<-done
	}
}

// startCopy starts exe (a copy of this program) with env added to its
// environment, its stdin and stdout piped to the caller and its stderr
// this program's. A copy must not outlive the benchmark, even if this
// process is killed.
func startCopy(exe, env string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return cmd, stdin, stdout, nil
}

// RunWorkerIfAsked turns this process into a RunProcesses worker or
// RunScale's PING watcher when it was started as one, and then exits;
// otherwise it returns at once. Call it first thing in main (and in
// TestMain of tests that use RunProcesses or RunScale).
func RunWorkerIfAsked() {
	if addr := os.Getenv(pingEnv); addr != "" {
		if err := runPingWatcher(addr, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench PING watcher:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(workerEnv) == "" {
		return
	}
	if err := runWorker(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runWorker(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	var spec workerSpec
	if err := dec.Decode(&spec); err != nil {
		return fmt.Errorf("reading the spec: %w", err)
	}
	c, err := ContenderByName(spec.Contender)
	if err != nil {
		return err
	}
	l, err := c.New(spec.Addr)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := warmUp(ctx, l, spec.Lock); err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	if _, err := fmt.Fprintln(out, "ready"); err != nil {
		return err
	}
	var window workerGo
	if err := dec.Decode(&window); err != nil {
		return fmt.Errorf("reading the start signal: %w", err)
	}
	tr := contend(ctx, l, spec.Lock, spec.Waiters, spec.Hold, time.Unix(0, window.Start), time.Unix(0, window.End))
	rep := workerReport{Counts: tr.Counts, Pending: make([]int64, len(tr.Pending))}
	for _, h := range tr.Holds {
		wh := workerHold{W: h.Waiter, A: h.Asked.UnixNano(), G: h.Got.UnixNano(), R: h.Released.UnixNano(), P: h.Queued.Place}
		if !h.Queued.At.IsZero() {
			wh.Q = h.Queued.At.UnixNano()
		}
		rep.Holds = append(rep.Holds, wh)
	}
	for i, a := range tr.Pending {
		rep.Pending[i] = a.UnixNano()
	}
	if tr.Err != nil {
		rep.Err = tr.Err.Error()
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}
