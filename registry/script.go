package registry

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Known Redis 7 script flags, as accepted on the "#!lua flags=" line.
const (
	FlagNoWrites           = "no-writes"
	FlagAllowOOM           = "allow-oom"
	FlagAllowStale         = "allow-stale"
	FlagNoCluster          = "no-cluster"
	FlagAllowCrossSlotKeys = "allow-cross-slot-keys"
)

// KnownFlags lists the flags Redis 7 accepts in a script's shebang line.
var KnownFlags = []string{FlagNoWrites, FlagAllowOOM, FlagAllowStale, FlagNoCluster, FlagAllowCrossSlotKeys}

// Script is one version of one Lua script: its parsed header, its source and
// the SHA1 that Redis's SCRIPT LOAD returns for it. A Script is immutable
// once parsed and safe for concurrent use.
type Script struct {
	// Name is the script's name from its header, such as "mutex.acquire".
	Name string
	// Version is the script's version from its header, a positive integer.
	Version int
	// Description is the header's one-line description.
	Description string
	// Keys names the KEYS the script takes, in order. When Variadic&VariadicKeys
	// is set, the last name stands for one or more trailing keys.
	Keys []string
	// Args names the ARGV the script takes, in order. When Variadic&VariadicArgs
	// is set, the last name stands for zero or more trailing arguments.
	Args []string
	// Variadic says whether the last key or arg name repeats ("name..." in the header).
	Variadic Variadic
	// Returns is the header's description of the reply, possibly empty.
	Returns string
	// Flags are the Redis 7 flags from the "#!lua flags=..." first line, in order.
	Flags []string
	// Source is the full text of the file, exactly as sent to SCRIPT LOAD.
	Source string
	// SHA1 is the lower-case hex SHA1 of Source, as SCRIPT LOAD returns it.
	SHA1 string
	// File is the path the script was read from, within its fs.FS.
	File string
	// HeaderLine is the 1-based line on which the header's "name:" field stands.
	HeaderLine int
	// Header lists the header's fields in the order written, with their lines.
	Header []HeaderField

	legacySource string
	legacySHA1   string
	id           string // name@version, formatted once
}

// Variadic marks which of a script's declared lists takes a variable count.
type Variadic uint8

// Variadic bits.
const (
	VariadicKeys Variadic = 1 << iota
	VariadicArgs
)

// ID names the script as "name@version", the form used in errors and logs.
func (s *Script) ID() string {
	if s == nil {
		return "<nil script>"
	}
	if s.id != "" {
		return s.id
	}
	return fmt.Sprintf("%s@%d", s.Name, s.Version) // a Script built by hand
}

// String returns ID.
func (s *Script) String() string { return s.ID() }

// Field returns the header field called name ("keys", "args", ...).
func (s *Script) Field(name string) (HeaderField, bool) {
	if s == nil {
		return HeaderField{}, false
	}
	for _, f := range s.Header {
		if f.Name == name {
			return f, true
		}
	}
	return HeaderField{}, false
}

// HasFlag reports whether the shebang line declares flag.
func (s *Script) HasFlag(flag string) bool {
	if s == nil {
		return false
	}
	for _, f := range s.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// ReadOnly reports whether the script is declared no-writes, so that it may
// run with EVALSHA_RO and on replicas.
func (s *Script) ReadOnly() bool { return s.HasFlag(FlagNoWrites) }

// HasShebang reports whether the source starts with a "#!" line, which
// servers older than Redis 7 (and miniredis) cannot compile.
func (s *Script) HasShebang() bool { return s != nil && strings.HasPrefix(s.Source, "#!") }

// LegacySource is the source for servers that do not understand the "#!lua"
// line: the shebang is turned into a Lua comment ("--!lua ...") so that line
// numbers in error messages stay the same. Without a shebang it is Source.
func (s *Script) LegacySource() string {
	if s == nil {
		return ""
	}
	return s.legacySource
}

// LegacySHA1 is the SHA1 of LegacySource.
func (s *Script) LegacySHA1() string {
	if s == nil {
		return ""
	}
	return s.legacySHA1
}

// MinKeys is the smallest number of KEYS a call must pass.
func (s *Script) MinKeys() int {
	if s == nil {
		return 0
	}
	return minCount(len(s.Keys), s.Variadic&VariadicKeys != 0, 1)
}

// MinArgs is the smallest number of ARGV a call must pass.
func (s *Script) MinArgs() int {
	if s == nil {
		return 0
	}
	return minCount(len(s.Args), s.Variadic&VariadicArgs != 0, 0)
}

// minCount is the declared count, less the variadic tail when it may be
// shorter than one: variadic keys need at least one, variadic args none.
func minCount(declared int, variadic bool, tailMin int) int {
	if variadic {
		return declared - 1 + tailMin
	}
	return declared
}

// CheckCall reports a *CallError when a call passes fewer (or, for a
// fixed list, more) keys or args than the header declares. Both evalsha
// and simulate refuse such calls with it before running anything.
func (s *Script) CheckCall(nkeys, nargs int) error {
	if s == nil {
		return errors.New("registry: CheckCall on a nil script; get scripts from a Registry (reg.Get(\"name\"))")
	}
	if err := checkCount(s, "KEYS", s.Keys, s.Variadic&VariadicKeys != 0, s.MinKeys(), nkeys); err != nil {
		return err
	}
	return checkCount(s, "ARGV", s.Args, s.Variadic&VariadicArgs != 0, s.MinArgs(), nargs)
}

// CallError is a call with the wrong number of KEYS or ARGV for a script.
type CallError struct {
	Script string   // name@version
	List   string   // "KEYS" or "ARGV"
	Names  []string // the names the header declares for the list
	// Want is the count the header asks for; AtLeast says it is a minimum.
	Want    int
	AtLeast bool
	Got     int
}

// Error names the script, the counts and the fix: the one place the
// hint is worded.
func (e *CallError) Error() string {
	if e == nil {
		return "registry: nil CallError"
	}
	atLeast := "exactly "
	if e.AtLeast {
		atLeast = "at least "
	}
	return fmt.Sprintf("%s: takes %s%d %s (%s), got %d; pass what the header's keys: and args: lines declare",
		e.Script, atLeast, e.Want, e.List, strings.Join(e.Names, ", "), e.Got)
}

func checkCount(s *Script, list string, names []string, variadic bool, min, got int) error {
	switch {
	case variadic && got < min:
		return &CallError{Script: s.ID(), List: list, Names: names, Want: min, AtLeast: true, Got: got}
	case !variadic && got != len(names):
		return &CallError{Script: s.ID(), List: list, Names: names, Want: len(names), Got: got}
	}
	return nil
}

// SourceSHA1 is the lower-case hex SHA1 of a script source, as SCRIPT LOAD
// returns it and EVALSHA takes it: the one SHA1 helper of redlua.
func SourceSHA1(source string) string {
	sum := sha1.Sum([]byte(source))
	return hex.EncodeToString(sum[:])
}

// finish fills the derived fields once: the ID, the SHA1s and the legacy
// source.
func (s *Script) finish() {
	s.id = fmt.Sprintf("%s@%d", s.Name, s.Version)
	s.SHA1 = SourceSHA1(s.Source)
	s.legacySource = s.Source
	if s.HasShebang() {
		s.legacySource = "--" + s.Source[1:]
	}
	s.legacySHA1 = SourceSHA1(s.legacySource)
}
