package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// command is one subcommand's flag set, with its synopsis for --help.
type command struct {
	fs       *flag.FlagSet
	synopsis string
	conn     *connFlags
}

func newCommand(name, synopsis string, getenv func(string) string) *command {
	c := &command{fs: flag.NewFlagSet("redlua "+name, flag.ContinueOnError), synopsis: synopsis}
	c.fs.SetOutput(io.Discard) // errors are reported once, by report
	c.conn = addConnFlags(c.fs, getenv)
	return c
}

// errHelp ends a command after --help printed its usage.
var errHelp = exitWith(exitOK, errQuiet)

// parse parses args; --help prints the command's usage to out.
func (c *command) parse(args []string, out io.Writer) error {
	err := c.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(out, "usage: %s\n\nflags:\n", c.synopsis)
		c.fs.SetOutput(out)
		c.fs.PrintDefaults()
		return errHelp
	}
	if err != nil {
		return usageErrorf("%s: %v", c.fs.Name(), err)
	}
	c.conn.parsed(c.fs)
	return nil
}
