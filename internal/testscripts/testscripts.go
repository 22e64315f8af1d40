// Package testscripts holds small lock scripts for the tests of the
// simulator, the model checker, the runners and the registry: the first
// drafts of redlua's mutex scripts (mutex.acquire@1, mutex.release@1,
// mutex.extend@1, mutex.inspect@1), unchanged from how lua/scripts.sum
// recorded them before they were retired from lua/. The locks run the
// scripts in lua/; these are fixtures, short enough to read in a failing
// test's trace.
package testscripts

import "embed"

// FS holds the fixture scripts.
//
//go:embed *.lua
var FS embed.FS
