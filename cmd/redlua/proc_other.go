//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func inOwnGroup(*exec.Cmd) {}

// signalGroup can only stop the process itself where there are no
// process groups.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process == nil {
		return
	}
	if sig == sigKill || sig == sigTerm {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(sig)
}

var forwardedSignals = []os.Signal{os.Interrupt}

var sigTerm, sigKill os.Signal = os.Kill, os.Kill

func signalNumber(os.Signal) int { return 0 }

func signalName(sig os.Signal) string { return sig.String() }

func killedBy(*os.ProcessState) (int, bool) { return 0, false }
