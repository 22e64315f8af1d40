package simulate

import (
	"errors"
	"fmt"

	"github.com/redlua/redlua/internal/cmdtable"
	"github.com/redlua/redlua/internal/keyslot"
)

// Key discipline errors. Run returns a *DisciplineError that wraps one of
// these, so callers can test with errors.Is.
var (
	// ErrUndeclaredKey: a script touched a key it was not given in KEYS,
	// which breaks Redis Cluster and ACL key patterns.
	ErrUndeclaredKey = errors.New("simulate: key not passed in KEYS")
	// ErrCrossSlot: a script's KEYS hash to different cluster slots, so it
	// cannot run on Redis Cluster.
	ErrCrossSlot = errors.New("simulate: KEYS hash to different cluster slots")
)

// DisciplineError reports a script that breaks the key rules every script
// must follow to run on Redis Cluster. It is the simulator's own error, not
// a Redis reply: Redis itself (outside a cluster) would have run the script.
type DisciplineError struct {
	// Script is the script's ID ("name@version") or, for RunSource, its SHA1.
	Script string
	// Line is the script line of the offending call (0 for KEYS checks made before the run).
	Line int
	// Key is the offending key.
	Key  string
	msg  string
	kind error
}

func (e *DisciplineError) Error() string { return e.msg }

// Unwrap returns ErrUndeclaredKey or ErrCrossSlot.
func (e *DisciplineError) Unwrap() error { return e.kind }

func undeclaredKeyError(script string, line int, key string) *DisciplineError {
	return &DisciplineError{
		Script: script, Line: line, Key: key, kind: ErrUndeclaredKey,
		msg: fmt.Sprintf("simulate: script %s line %d accessed key '%s' not passed in KEYS "+
			"(pass every key the script touches in KEYS; WithKeyDiscipline(false) turns this check off)", script, line, key),
	}
}

// undeclaredKey returns the first key argument of the call that is not
// one of the run's KEYS.
func (run *runState) undeclaredKey(cmd *cmdtable.Command, argv []string) (string, bool) {
	if cmd.FirstKey == 0 && len(cmd.KeySpecs) == 0 {
		return "", false
	}
	if singleKey(cmd) {
		// The common case (GET, SET, PTTL, HSET, ...), without allocating.
		if len(argv) > 1 && !run.declared(argv[1]) {
			return argv[1], true
		}
		return "", false
	}
	for _, pos := range cmd.KeyPositionsArgs(argv) {
		if pos <= 0 || pos >= len(argv) {
			continue
		}
		if !run.declared(argv[pos]) {
			return argv[pos], true
		}
	}
	return "", false
}

func (run *runState) declared(key string) bool {
	for _, k := range run.keys {
		if k == key {
			return true
		}
	}
	return false
}

// crossSlot reports the first key of keys whose cluster slot differs from
// the first key's.
func crossSlot(script string, keys []string) error {
	if len(keys) < 2 {
		return nil
	}
	first := Slot(keys[0])
	for _, k := range keys[1:] {
		if s := Slot(k); s != first {
			return &DisciplineError{
				Script: script, Key: k, kind: ErrCrossSlot,
				msg: fmt.Sprintf("simulate: script %s: KEYS '%s' (slot %d) and '%s' (slot %d) hash to different cluster slots "+
					"(give all keys one {hash tag}, declare #!lua flags=allow-cross-slot-keys, or use WithCrossSlotCheck(false))",
					script, keys[0], first, k, s),
			}
		}
	}
	return nil
}

// Slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the key,
// or of the part between the first "{" and the next "}" when that part is
// not empty, modulo 16384.
func Slot(key string) int { return keyslot.Of(key) }

// singleKey reports whether the command's only key is its first argument.
func singleKey(cmd *cmdtable.Command) bool {
	if len(cmd.KeySpecs) != 1 {
		return false
	}
	ks := cmd.KeySpecs[0]
	return ks.Find == "range" && ks.BeginIndex == 1 && ks.LastKey == 0
}
