package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand's flag set, with its help text.
type command struct {
	fs   *flag.FlagSet
	name string // as in "redlua NAME", for messages: "lock", "scripts list"
	help string // synopsis, what the command does, examples
	conn *connFlags

	// maxArgs, when positive, is how many positional arguments flags may
	// follow: the next positional one and everything after it are left
	// as they stand (lock's CMD and its own flags).
	maxArgs int
	// args are the positional arguments, once parse has run: those among
	// the flags, then everything after "--" (or after maxArgs of them).
	args []string
}

func newCommand(name, help string, getenv func(string) string) *command {
	c := &command{fs: flag.NewFlagSet("redlua "+name, flag.ContinueOnError), name: name, help: help}
	c.fs.SetOutput(io.Discard) // errors are reported once, by report
	c.conn = addConnFlags(c.fs, getenv)
	return c
}

// errHelp ends a command after --help printed its usage.
var errHelp = exitWith(exitOK, errQuiet)

// parse parses args; --help prints the command's usage to out. Flags may
// stand before, between and after the positional arguments, up to "--"
// (and, with maxArgs, up to the positional argument after maxArgs of
// them): `redlua inspect NAME --addr A` asks A, not the default server.
func (c *command) parse(args []string, out io.Writer) error {
	flagArgs, positional := c.split(args)
	err := c.fs.Parse(flagArgs)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(out)
		return errHelp
	}
	if err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			msg = "unknown flag --" + name
		}
		return usageErrorf("%s", msg)
	}
	c.args = append(c.fs.Args(), positional...)
	c.conn.parsed(c.fs)
	return nil
}

// printHelp prints the help text and the flags.
func (c *command) printHelp(out io.Writer) {
	fmt.Fprintf(out, "usage: %s\n\nflags:\n", strings.TrimRight(c.help, "\n"))
	c.fs.SetOutput(out)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

// boolFlag is what flag's boolean values implement: such a flag takes no
// separate value argument.
type boolFlag interface{ IsBoolFlag() bool }

// split separates args, as flag.Parse reads them, into the flags with
// their values and the positional arguments, without stopping at the first
// positional one: it stops at "--" (dropped) or at the positional argument
// after c.maxArgs of them (kept), and everything from there on is
// positional as it stands.
func (c *command) split(args []string) (flagArgs, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flagArgs, append(positional, args[i+1:]...)
		case len(a) > 1 && a[0] == '-':
			flagArgs = append(flagArgs, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			// An unknown flag takes no value here; flag.Parse refuses it.
			if f := c.fs.Lookup(name); f != nil && !hasValue && !isBool(f) && i+1 < len(args) {
				i++
				flagArgs = append(flagArgs, args[i])
			}
		case c.maxArgs > 0 && len(positional) == c.maxArgs:
			return flagArgs, append(positional, args[i:]...)
		default:
			positional = append(positional, a)
		}
	}
	return flagArgs, positional
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(boolFlag)
	return ok && b.IsBoolFlag()
}
