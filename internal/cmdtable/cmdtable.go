// Package cmdtable is the Redis command table: arity, flags and key positions
// of every command a redis-server 7.0 knows, read from the server's own COMMAND
// reply by gen.go. The simulator and the linter share it so that both agree
// with the server on which commands exist, which write, and where their keys are.
package cmdtable

import "strings"

// Command describes one Redis command or subcommand as COMMAND reports it.
type Command struct {
	// Name is lower case; a subcommand is "container|sub", as COMMAND names it.
	Name string
	// Container is the parent command of a subcommand ("script" for "script|load").
	Container string
	// Arity counts the command name itself: positive is exact, negative is a minimum.
	Arity int
	// Flags are COMMAND's flags: "write", "readonly", "noscript", "blocking", ...
	Flags []string
	// FirstKey, LastKey and KeyStep are the legacy key positions (1-based; LastKey -1 is the last argument).
	FirstKey, LastKey, KeyStep int
	// Categories are the ACL categories without the leading '@'.
	Categories []string
	// KeySpecs are Redis 7 key specifications, which also cover movable keys.
	KeySpecs []KeySpec
}

// KeySpec is a simplified Redis 7 key specification.
type KeySpec struct {
	// BeginIndex is the argument index (0 is the command name) where the search starts, or -1 for keyword searches.
	BeginIndex int
	// Find is "range", "keynum" or "unknown".
	Find string
	// For Find == "range": the last key relative to BeginIndex (negative counts from the end), the step, and a limit.
	LastKey, KeyStep, Limit int
	// For Find == "keynum": where the key count is (relative to BeginIndex), where keys start, and their step.
	KeyNumIndex, FirstKey, KeyNumStep int
	// Flags are the spec's flags: "RW", "RO", "OW", "RM", "access", "update", "insert", "delete", ...
	Flags []string
}

var byName = func() map[string]*Command {
	m := make(map[string]*Command, len(table))
	for i := range table {
		m[table[i].Name] = &table[i]
	}
	return m
}()

// Lookup finds a command by name, case-insensitively. A subcommand is found
// by "container|sub" ("script|load") or by the two words ("script", "load") via LookupSub.
func Lookup(name string) (*Command, bool) {
	c, ok := byName[strings.ToLower(name)]
	return c, ok
}

// LookupSub finds a subcommand such as ("client", "list").
func LookupSub(container, sub string) (*Command, bool) {
	return Lookup(container + "|" + sub)
}

// All returns every command and subcommand, sorted by name.
func All() []Command { return append([]Command(nil), table...) }

// HasFlag reports whether COMMAND lists flag for c.
func (c *Command) HasFlag(flag string) bool {
	for _, f := range c.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// IsWrite reports whether the command may modify the keyspace.
func (c *Command) IsWrite() bool { return c.HasFlag("write") }

// MayReplicate reports whether Redis flags the command may-replicate among
// those scripts can call (PUBLISH, SPUBLISH, PFCOUNT). COMMAND does not list
// that flag, but scripts treat it as a write: a no-writes script calling
// one fails with "Write commands are not allowed from read-only scripts"
// (checked against redis-server 7.0.15).
func (c *Command) MayReplicate() bool {
	switch c.Name {
	case "publish", "spublish", "pfcount":
		return true
	}
	return false
}

// IsBlocking reports whether the command may block the client (it never blocks inside a script).
func (c *Command) IsBlocking() bool { return c.HasFlag("blocking") }

// DeniedInScripts reports whether scripts may not call the command at all.
func (c *Command) DeniedInScripts() bool { return c.HasFlag("noscript") }

// ArityOK reports whether argc arguments, counting the command name, satisfy the arity.
func (c *Command) ArityOK(argc int) bool {
	if c.Arity >= 0 {
		return argc == c.Arity
	}
	return argc >= -c.Arity
}

// KeyPositions returns the indexes (0 is the command name) of the key
// arguments of a call with argc arguments, following the "range" key specs.
// Keyword-based specs are skipped, and keynum specs need the arguments
// themselves: use KeyPositionsArgs for those.
func (c *Command) KeyPositions(argc int) []int {
	var out []int
	for _, s := range c.KeySpecs {
		if s.BeginIndex < 0 || s.BeginIndex >= argc {
			continue
		}
		switch s.Find {
		case "range":
			last := s.LastKey
			var end int
			if last >= 0 {
				end = s.BeginIndex + last
			} else {
				end = argc + last
				if s.Limit > 1 {
					end = s.BeginIndex + (argc-s.BeginIndex)/s.Limit - 1
				}
			}
			step := s.KeyStep
			if step <= 0 {
				step = 1
			}
			for i := s.BeginIndex; i <= end && i < argc; i += step {
				out = append(out, i)
			}
		}
	}
	return out
}

// KeyPositionsArgs is KeyPositions with the arguments at hand, so that
// commands whose key count is an argument (keynum specs) are resolved too.
func (c *Command) KeyPositionsArgs(argv []string) []int {
	argc := len(argv)
	out := c.KeyPositions(argc)
	for _, s := range c.KeySpecs {
		if s.Find != "keynum" || s.BeginIndex < 0 {
			continue
		}
		idx := s.BeginIndex + s.KeyNumIndex
		if idx >= argc {
			continue
		}
		n := 0
		for _, ch := range argv[idx] {
			if ch < '0' || ch > '9' {
				n = -1
				break
			}
			n = n*10 + int(ch-'0')
		}
		if n <= 0 {
			continue
		}
		step := s.KeyNumStep
		if step <= 0 {
			step = 1
		}
		first := s.BeginIndex + s.FirstKey
		for i, k := first, 0; k < n && i < argc; i, k = i+step, k+1 {
			out = append(out, i)
		}
	}
	return out
}
