//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// inOwnGroup starts cmd in a process group of its own, so stopping it on a
// lost lease reaches every process it started (a shell's children too).
// On Linux the process also gets a signal when redlua dies (parentDeath):
// the guard's own, or SIGKILL for a CMD that runs without a guard.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sig := syscall.SIGKILL
	if slices.ContainsFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, envGuard+"=") }) {
		sig = guardParentDied
	}
	parentDeath(cmd.SysProcAttr, sig)
}

// signalGroup sends sig to cmd's process group.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, s) // the group may be gone already
	}
}

// forwardedSignals are passed on to CMD's group: being in its own group,
// it no longer gets the terminal's signals by itself.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

const sigTerm, sigKill = syscall.SIGTERM, syscall.SIGKILL

// signalNumber is N for the exit status 128+N.
func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 0
}

// signalName is "SIGINT" for syscall.SIGINT, as operators know the
// signals redlua catches.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return sig.String()
}

// killedBy returns the signal that ended a process.
func killedBy(st *os.ProcessState) (int, bool) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return int(ws.Signal()), true
}

// The guard keeps CMD from outliving redlua. `redlua lock` does not start
// CMD itself but a copy of its own executable in guard mode (envGuard
// names redlua's pid), as the leader of a new process group; the guard
// starts CMD in that group and waits for it. When redlua dies, even by
// SIGKILL, the guard learns it (on Linux at once, by the parent-death
// signal; on every unix within guardPoll, when its parent process id
// changes) and kills the whole group with SIGKILL: CMD and everything CMD
// started, which a parent-death signal on CMD alone would not reach (a
// shell's children). Signals redlua passes on reach the group, the guard
// included, which ignores them (CMD gets them itself), and the guard exits
// as CMD did (its status, or killed by its signal), so redlua reports
// CMD's status.
//
// A parent-death signal is sent when the *thread* that started the child
// exits, not the process: a Go program runs goroutines on threads it may
// end (one whose goroutine exited while locked to it). So redlua starts
// the guard from a goroutine locked to its thread that stays alive, and
// locked, until the guard exited (startLocked); the guard does the same
// for CMD. The guard also checks, on the signal and on every poll, that
// its parent really changed before it kills anything.
const (
	envGuard = "REDLUA_GUARD_PARENT_PID"
	// guardPoll is how often the guard looks at its parent process id,
	// the only sign of redlua's death where there is no parent-death
	// signal, and a second one where there is.
	guardPoll = 250 * time.Millisecond
	// guardParentDied is the parent-death signal (Linux): not one redlua
	// passes on to the group.
	guardParentDied = syscall.SIGUSR1
)

// guarded returns the command that runs argv (argv[0] found at path) under
// a guard; plainly when redlua cannot find its own executable.
func guarded(path string, argv []string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		cmd := exec.Command(path, argv[1:]...)
		cmd.Args[0] = argv[0]
		return cmd
	}
	cmd := exec.Command(self, append([]string{path}, argv...)...)
	cmd.Args[0] = "redlua-guard"
	cmd.Env = append(os.Environ(), envGuard+"="+strconv.Itoa(os.Getpid()))
	return cmd
}

// startLocked starts cmd from a goroutine locked to its OS thread, which
// stays alive until cmd exits (see the guard), and returns cmd.Wait's
// result on exited.
func startLocked(cmd *exec.Cmd) (exited <-chan error, err error) {
	started, done := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// guardMain is the guard (see envGuard) when redlua was started as one,
// and returns its exit status; ok is false otherwise.
func guardMain() (code int, ok bool) {
	parent, err := strconv.Atoi(os.Getenv(envGuard))
	if err != nil || len(os.Args) < 3 {
		return 0, false
	}
	return runGuard(parent, os.Args[1], os.Args[2:]), true
}

func runGuard(parent int, path string, argv []string) int {
	sigs := make(chan os.Signal, 8)
	// Notify, not Ignore: an ignored signal stays ignored in CMD after
	// exec, a caught one is reset to its default.
	signal.Notify(sigs, append(slices.Clone(forwardedSignals), guardParentDied)...)
	if os.Getppid() != parent {
		return exitSignalBase + int(syscall.SIGKILL) // redlua died before CMD started
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envGuard+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// CMD dies with the guard too, should the guard be killed alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	parentDeath(cmd.SysProcAttr, syscall.SIGKILL)
	exited, err := startLocked(cmd)
	if err != nil {
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		fmt.Fprintf(os.Stderr, "redlua lock: cannot run %s: %v\n", argv[0], err)
		return code
	}
	poll := time.NewTicker(guardPoll)
	defer poll.Stop()
	for {
		select {
		case <-exited:
			return guardExit(cmd.ProcessState)
		case s := <-sigs:
			if s == guardParentDied && os.Getppid() != parent {
				killGroup()
			}
			// A signal redlua passed on: the group, CMD included, got it.
		case <-poll.C:
			if os.Getppid() != parent {
				killGroup()
			}
		}
	}
}

// killGroup kills the guard's process group, the guard included.
func killGroup() {
	_ = syscall.Kill(0, syscall.SIGKILL)
	select {} // SIGKILL is on its way
}

// guardExit ends the guard as CMD ended: by the signal that killed it, or
// with its exit status.
func guardExit(st *os.ProcessState) int {
	if n, ok := killedBy(st); ok {
		sig := syscall.Signal(n)
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // a signal whose default is to end the process does so meanwhile
		return exitSignalBase + n
	}
	return st.ExitCode()
}
