package main

import (
	"fmt"
	"strconv"
	"strings"
)

type argKind int

const (
	argBool  argKind = iota
	argCount         // may repeat: -q, -qq, -qqq
	argOne           // one value
	argMany          // one or more values, up to the next option
)

type argSpec struct {
	long  string
	short byte
	kind  argKind
}

// argSpecs are the options, luacheck's spelling.
var argSpecs = []argSpec{
	{"formatter", 0, argOne}, {"codes", 0, argBool}, {"ranges", 0, argBool}, {"filename", 0, argOne},
	{"no-color", 0, argBool}, {"version", 'v', argBool}, {"help", 'h', argBool}, {"sum", 0, argOne},
	{"quiet", 'q', argCount},
	{"only", 'o', argMany}, {"ignore", 'i', argMany}, {"enable", 'e', argMany},
	{"globals", 0, argMany}, {"read-globals", 0, argMany}, {"new-globals", 0, argMany}, {"new-read-globals", 0, argMany},
	{"max-line-length", 0, argOne}, {"no-max-line-length", 0, argBool},
	{"no-unused", 'u', argBool}, {"no-redefined", 'r', argBool}, {"no-unused-args", 'a', argBool}, {"no-global", 'g', argBool},
	{"std", 0, argOne}, {"config", 0, argOne}, {"no-config", 0, argBool},
	{"default-config", 0, argOne}, {"no-default-config", 0, argBool},
	{"exclude-files", 0, argMany}, {"include-files", 0, argMany},
	{"no-cache", 0, argBool}, {"jobs", 'j', argOne},
	{"registry", 0, argBool}, {"no-registry", 0, argBool},
}

// cliArgs is the parsed command line: for each option given, its values
// (one "" per occurrence of a flag), plus the operands.
type cliArgs struct {
	vals  map[string][]string
	files []string
}

func (c *cliArgs) has(name string) bool { return len(c.vals[name]) > 0 }

func (c *cliArgs) last(name string) string {
	v := c.vals[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// parseArgs parses the command line as luacheck's argparse does: long
// options as --name value or --name=value, short ones combinable (-qqu),
// options taking several values read them up to the next option, and
// operands may come anywhere. "--" ends the options.
func parseArgs(args []string) (*cliArgs, error) {
	p := &argParser{args: args, byLong: map[string]argSpec{}, byShort: map[byte]argSpec{}, c: &cliArgs{vals: map[string][]string{}}}
	for _, s := range argSpecs {
		p.byLong[s.long] = s
		if s.short != 0 {
			p.byShort[s.short] = s
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var err error
		switch {
		case a == "--":
			p.c.files = append(p.c.files, args[i+1:]...)
			return p.c, nil
		case !isOption(a):
			p.c.files = append(p.c.files, a)
		case strings.HasPrefix(a, "--") || p.byLong[strings.SplitN(a[1:], "=", 2)[0]].long != "" && len(a) > 2:
			i, err = p.long(i)
		default:
			i, err = p.shorts(i)
		}
		if err != nil {
			return nil, err
		}
	}
	return p.c, nil
}

// argParser is the state of one parseArgs: the specs by name and what has
// been read so far.
type argParser struct {
	args    []string
	byLong  map[string]argSpec
	byShort map[byte]argSpec
	c       *cliArgs
}

func isOption(a string) bool { return len(a) > 1 && a[0] == '-' && a != "-" }

// long reads the long option at args[i] ("--name", "--name=value", or a
// long name after one dash) and returns the index of its last value.
func (p *argParser) long(i int) (int, error) {
	a := p.args[i]
	name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
	s, ok := p.byLong[name]
	if !ok {
		return i, fmt.Errorf("unknown option %s", a)
	}
	if s.kind == argBool || s.kind == argCount {
		if hasVal {
			return i, fmt.Errorf("option --%s takes no value", name)
		}
		p.c.vals[s.long] = append(p.c.vals[s.long], "")
		return i, nil
	}
	return p.takeValues(s, i, val, hasVal)
}

// shorts reads a cluster of short options ("-qqu", "-i211").
func (p *argParser) shorts(i int) (int, error) {
	a := p.args[i]
	for j := 1; j < len(a); j++ {
		s, ok := p.byShort[a[j]]
		if !ok {
			return i, fmt.Errorf("unknown option -%c in %s", a[j], a)
		}
		if s.kind == argBool || s.kind == argCount {
			p.c.vals[s.long] = append(p.c.vals[s.long], "")
			continue
		}
		rest := a[j+1:]
		return p.takeValues(s, i, rest, rest != "")
	}
	return i, nil
}

// takeValues consumes the values after position i for a spec.
func (p *argParser) takeValues(s argSpec, i int, first string, haveFirst bool) (int, error) {
	var vals []string
	if haveFirst {
		vals = append(vals, first)
	}
	switch s.kind {
	case argOne:
		if !haveFirst {
			if i+1 >= len(p.args) || (isOption(p.args[i+1]) && !isNumber(p.args[i+1])) {
				return i, fmt.Errorf("option --%s needs a value", s.long)
			}
			i++
			vals = append(vals, p.args[i])
		}
	case argMany:
		// An attached value (--ignore=211, -i211) is the only one.
		for !haveFirst && i+1 < len(p.args) && !isOption(p.args[i+1]) {
			i++
			vals = append(vals, p.args[i])
		}
		if len(vals) == 0 {
			return i, fmt.Errorf("option --%s needs at least one value", s.long)
		}
	}
	p.c.vals[s.long] = append(p.c.vals[s.long], vals...)
	return i, nil
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
