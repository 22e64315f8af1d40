package faulttest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WorkerEnv names the environment variable that makes the test binary run
// as a worker: its value is the worker's role.
const WorkerEnv = "REDLUA_FAULTTEST_WORKER"

// reportPrefix marks report lines on a worker's stdout; the test binary
// prints other lines there too (PASS, ok).
const reportPrefix = "FAULTTEST "

// Report is one line a worker sends back: what happened, to whom, when.
type Report struct {
	Kind  string    `json:"kind"`
	Owner string    `json:"owner,omitempty"`
	Token int64     `json:"token,omitempty"`
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	Err   string    `json:"err,omitempty"`
	Note  string    `json:"note,omitempty"`
	N     int64     `json:"n,omitempty"`
}

// Role returns the worker role this process runs as, or "" when it is the
// test itself.
func Role() string { return os.Getenv(WorkerEnv) }

// Worker is a copy of the test binary running one test function as a worker
// process, with its own Redis clients. It is killed when the test ends, and
// by the kernel if the test binary dies (Pdeathsig).
type Worker struct {
	Pid int

	t       testing.TB
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	reports chan Report
	exited  chan struct{}
	stderr  *lockedBuffer
	mu      sync.Mutex
	frozen  bool
}

// StartWorker runs the test function named test (a func TestX that calls
// RunWorker first thing) in a new process with role and the extra
// environment ("KEY=value"). Reports arrive on Reports.
func StartWorker(t testing.TB, test, role string, env ...string) *Worker {
	t.Helper()
	if role == "" || test == "" {
		t.Fatal("faulttest: StartWorker needs the worker test's name and a role")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("faulttest: finding the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(append(os.Environ(), WorkerEnv+"="+role), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w := &Worker{t: t, cmd: cmd, reports: make(chan Report, 4096), exited: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = w.stderr
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("faulttest: starting worker %s: %v", role, err)
	}
	w.Pid = cmd.Process.Pid
	go w.read(stdout)
	t.Cleanup(w.Kill)
	return w
}

func (w *Worker) read(stdout io.Reader) {
	defer close(w.exited)
	defer close(w.reports)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), reportPrefix)
		if !ok {
			continue
		}
		var r Report
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			r = Report{Kind: "garbled", Err: err.Error(), Note: line}
		}
		w.reports <- r
	}
	_ = w.cmd.Wait()
}

// Reports delivers the worker's reports; it is closed when the worker exits.
func (w *Worker) Reports() <-chan Report { return w.reports }

// Next waits up to timeout for the next report of kind (others are
// skipped) and fails the test when none comes.
func (w *Worker) Next(kind string, timeout time.Duration) Report {
	w.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case r, ok := <-w.reports:
			if !ok {
				w.t.Fatalf("faulttest: worker %d exited before reporting %q; stderr:\n%s", w.Pid, kind, w.stderr.String())
			}
			if r.Kind == kind {
				return r
			}
			if r.Kind == "fatal" {
				w.t.Fatalf("faulttest: worker %d failed: %s", w.Pid, r.Err)
			}
		case <-deadline:
			w.t.Fatalf("faulttest: worker %d sent no %q report within %v", w.Pid, kind, timeout)
		}
	}
}

// Send writes one command line to the worker's stdin.
func (w *Worker) Send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		w.t.Fatalf("faulttest: sending %q to worker %d: %v", line, w.Pid, err)
	}
}

// Freeze stops the worker (SIGSTOP), as a long GC pause or a stopped VM
// would, and returns once every thread of it has stopped (the kernel stops
// the threads of a process one by one, after kill returned).
func (w *Worker) Freeze() {
	w.signal(syscall.SIGSTOP, true)
	if err := WaitStopped(w.Pid, 5*time.Second); err != nil {
		w.t.Errorf("faulttest: %v", err)
	}
}

// WaitStopped waits until every thread of process pid is stopped (state T
// in /proc), or fails after timeout.
func WaitStopped(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		running, err := runningThreads(pid)
		if err != nil || running == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d: %d threads still running %v after SIGSTOP", pid, running, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

func runningThreads(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", dir, err)
	}
	running := 0
	for _, task := range tasks {
		stat, err := os.ReadFile(dir + "/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread exited
		}
		// The state follows the command name, which is in parentheses and may hold spaces.
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
			if state := stat[i+2]; state != 'T' && state != 't' && state != 'Z' && state != 'X' {
				running++
			}
		}
	}
	return running, nil
}

// Thaw continues a frozen worker (SIGCONT).
func (w *Worker) Thaw() { w.signal(syscall.SIGCONT, false) }

func (w *Worker) signal(sig syscall.Signal, frozen bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		w.t.Errorf("faulttest: signal %v to worker %d: %v", sig, w.Pid, err)
	}
	w.frozen = frozen
}

// Stop closes the worker's stdin (workers end on it) and waits up to
// timeout for it to exit, then kills it.
func (w *Worker) Stop(timeout time.Duration) {
	_ = w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(timeout):
		w.Kill()
	}
}

// Kill ends the worker at once and waits for it; safe to call twice.
func (w *Worker) Kill() {
	_ = w.cmd.Process.Kill()
	w.mu.Lock()
	if w.frozen {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		w.frozen = false
	}
	w.mu.Unlock()
	for range w.reports { // drain so the reader reaches Wait
	}
	<-w.exited
}

// Stderr returns what the worker printed on stderr so far.
func (w *Worker) Stderr() string { return w.stderr.String() }

type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() < 1<<20 {
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WorkerIO is the worker's side: the command lines the test sends, and a
// way to report back. A worker ends when Lines closes (the test closed
// stdin or died).
type WorkerIO struct {
	Lines <-chan string
	mu    sync.Mutex
	out   io.Writer
}

// RunWorker returns the worker's IO when this process is a worker, and nil
// when it is the test itself (then the worker test function returns at once).
func RunWorker() *WorkerIO {
	if Role() == "" {
		return nil
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return &WorkerIO{Lines: lines, out: os.Stdout}
}

// Emit sends one report to the test.
func (io *WorkerIO) Emit(r Report) {
	data, err := json.Marshal(r)
	if err != nil {
		data = []byte(fmt.Sprintf(`{"kind":"garbled","err":%q}`, err.Error()))
	}
	io.mu.Lock()
	defer io.mu.Unlock()
	fmt.Fprintf(io.out, "%s%s\n", reportPrefix, data)
}

// Fatal reports a failure the test should stop on, then exits the worker.
func (io *WorkerIO) Fatal(format string, args ...any) {
	io.Emit(Report{Kind: "fatal", Err: fmt.Sprintf(format, args...)})
	os.Exit(3)
}
