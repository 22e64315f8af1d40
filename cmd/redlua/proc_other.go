//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func inOwnGroup(*exec.Cmd) {}

// guarded is argv as it is: without process groups and a parent-death
// signal there is no guard (docs/cli.md says what protects CMD then).
func guarded(path string, argv []string) *exec.Cmd {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	return cmd
}

// startLocked starts cmd and returns cmd.Wait's result on exited.
func startLocked(cmd *exec.Cmd) (exited <-chan error, err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done, nil
}

// guardMain: there is no guard here.
func guardMain() (int, bool) { return 0, false }

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
