//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a process group of its own, so stopping it on a
// lost lease reaches every process it started (a shell's children too).
func inOwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

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
