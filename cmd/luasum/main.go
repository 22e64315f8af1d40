// Command luasum records and verifies the sum file, the ledger of every
// script version ever recorded.
//
//	luasum verify [-sum FILE] DIR    # fail when a recorded version changed, a released one vanished, or one is unrecorded
//	luasum record [-sum FILE] DIR    # add every unrecorded version; refuses when history changed
//	luasum release [-sum FILE] DIR   # mark every version in DIR released (when tagging a release)
//
// The sum file defaults to DIR/scripts.sum. A recorded version is never
// edited: copy the script to a new version (bump "-- version:"), change the
// copy, then record it. A version recorded but never released may be
// retired by removing its file; its line stays, so its name@version never
// returns with other content. A released version's file must stay.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/redlua/redlua/registry"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: luasum verify|record|release [-sum FILE] DIR")
		return 2
	}
	if len(args) < 1 || (args[0] != "verify" && args[0] != "record" && args[0] != "release") {
		return usage()
	}
	fs := flag.NewFlagSet("luasum "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	sumPath := fs.String("sum", "", "sum file (default DIR/scripts.sum)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 1 {
		return usage()
	}
	dir := fs.Arg(0)
	if *sumPath == "" {
		*sumPath = filepath.Join(dir, "scripts.sum")
	}
	reg, err := registry.New(os.DirFS(dir))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	sum := registry.Sum{}
	if data, err := os.ReadFile(*sumPath); err == nil {
		if sum, err = registry.ReadSum(bytes.NewReader(data)); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", *sumPath, err)
			return 1
		}
	} else if !errors.Is(err, os.ErrNotExist) || args[0] != "record" {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if args[0] == "verify" {
		if err := registry.VerifySum(reg, sum); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: %d script versions match %s\n", dir, len(reg.Scripts()), *sumPath)
		return 0
	}
	var added []string
	var updated registry.Sum
	if args[0] == "release" {
		updated, err = registry.Release(reg, sum)
	} else {
		updated, added, err = registry.Record(reg, sum)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var buf bytes.Buffer
	if err := updated.Write(&buf); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := os.WriteFile(*sumPath, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if args[0] == "release" {
		fmt.Fprintf(stdout, "%s: %d versions marked released\n", *sumPath, len(reg.Scripts()))
		return 0
	}
	for _, id := range added {
		fmt.Fprintf(stdout, "recorded %s\n", id)
	}
	fmt.Fprintf(stdout, "%s: %d new, %d recorded in all\n", *sumPath, len(added), len(updated))
	return 0
}
