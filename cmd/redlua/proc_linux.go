//go:build linux

package main

import "syscall"

// parentDeath makes the process get sig when its parent dies (see the
// guard in proc_unix.go for why the parent's thread must stay alive).
func parentDeath(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
