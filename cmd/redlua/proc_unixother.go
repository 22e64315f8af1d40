//go:build unix && !linux

package main

import "syscall"

// parentDeath does nothing where there is no parent-death signal: the
// guard polls its parent process id instead (see proc_unix.go).
func parentDeath(*syscall.SysProcAttr, syscall.Signal) {}
