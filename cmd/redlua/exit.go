package main

import (
	"errors"
	"fmt"
)

// Exit codes; the package comment documents them.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitUnavailable = 69  // sysexits EX_UNAVAILABLE
	exitNotAcquired = 75  // sysexits EX_TEMPFAIL: try again later
	exitLost        = 124 // as timeout(1) for a command it stopped
	exitCannotRun   = 126 // as shells do
	exitNotFound    = 127 // as shells do
	exitSignalBase  = 128 // 128+N: signal N
)

// exitError carries the exit code a failure maps to.
type exitError struct {
	code  int
	err   error
	usage bool // a usage error: report points to the command's --help
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errQuiet marks an exit whose reason was already printed (or needs none,
// as when lock passes on CMD's status).
var errQuiet = errors.New("quiet")

func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// usageErrorf is a usage error (exit 2); report adds where the command's
// help is.
func usageErrorf(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...), usage: true}
}

// unavailable wraps a connection or server error.
func unavailable(err error) error { return exitWith(exitUnavailable, err) }
