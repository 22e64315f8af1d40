package registry

import (
	"crypto/sha1"
	"encoding/hex"
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

	legacySource string
	legacySHA1   string
}

// Variadic marks which of a script's declared lists takes a variable count.
type Variadic uint8

// Variadic bits.
const (
	VariadicKeys Variadic = 1 << iota
	VariadicArgs
)

// ID names the script as "name@version", the form used in errors and logs.
func (s *Script) ID() string { return fmt.Sprintf("%s@%d", s.Name, s.Version) }

// String returns ID.
func (s *Script) String() string { return s.ID() }

// HasFlag reports whether the shebang line declares flag.
func (s *Script) HasFlag(flag string) bool {
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
func (s *Script) HasShebang() bool { return strings.HasPrefix(s.Source, "#!") }

// LegacySource is the source for servers that do not understand the "#!lua"
// line: the shebang is turned into a Lua comment ("--!lua ...") so that line
// numbers in error messages stay the same. Without a shebang it is Source.
func (s *Script) LegacySource() string { return s.legacySource }

// LegacySHA1 is the SHA1 of LegacySource.
func (s *Script) LegacySHA1() string { return s.legacySHA1 }

// MinKeys is the smallest number of KEYS a call must pass.
func (s *Script) MinKeys() int { return minCount(len(s.Keys), s.Variadic&VariadicKeys != 0, 1) }

// MinArgs is the smallest number of ARGV a call must pass.
func (s *Script) MinArgs() int { return minCount(len(s.Args), s.Variadic&VariadicArgs != 0, 0) }

// minCount is the declared count, less the variadic tail when it may be
// shorter than one: variadic keys need at least one, variadic args none.
func minCount(declared int, variadic bool, tailMin int) int {
	if variadic {
		return declared - 1 + tailMin
	}
	return declared
}

// CheckCall reports an error naming the script when a call passes fewer (or,
// for a fixed list, more) keys or args than the header declares, such as
// "redlua: ratelimit.bucket@1 takes exactly 3 ARGV (capacity, rate, now),
// got 2". errors.Unwrap gives the same text without the prefix and the
// script's name, for callers that name the script themselves.
func (s *Script) CheckCall(nkeys, nargs int) error {
	err := checkCount("KEYS", s.Keys, s.Variadic&VariadicKeys != 0, s.MinKeys(), nkeys)
	if err == nil {
		err = checkCount("ARGV", s.Args, s.Variadic&VariadicArgs != 0, s.MinArgs(), nargs)
	}
	if err != nil {
		return fmt.Errorf("redlua: %s %w", s.ID(), err)
	}
	return nil
}

func checkCount(what string, names []string, variadic bool, min, got int) error {
	switch {
	case variadic && got < min:
		return fmt.Errorf("takes at least %d %s (%s), got %d", min, what, strings.Join(names, ", "), got)
	case !variadic && got != len(names):
		return fmt.Errorf("takes exactly %d %s (%s), got %d", len(names), what, strings.Join(names, ", "), got)
	}
	return nil
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// finish fills the derived fields (SHA1s and the legacy source).
func (s *Script) finish() {
	s.SHA1 = sha1Hex(s.Source)
	s.legacySource = s.Source
	if s.HasShebang() {
		s.legacySource = "--" + s.Source[1:]
	}
	s.legacySHA1 = sha1Hex(s.legacySource)
}
