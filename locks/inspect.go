package locks

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LockInfo is what Inspect reports about a lock.
type LockInfo struct {
	Name      string
	Held      bool
	Owner     string        // the holder's owner token
	Token     int64         // the holder's fencing token
	HoldCount int64         // reentrant holds
	TTL       time.Duration // the lease's remaining time
	Holder    Metadata      // who holds it
	Waiters   int64         // Lock calls queued for it (Mutex, and MultiLocks it blocks)
}

// Metadata describes a holder, as recorded when it acquired the lock.
type Metadata struct {
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Label string `json:"label,omitempty"`
	// Raw is the stored metadata as found, when it could not be read as
	// host, pid and label (written by another tool or version): an operator
	// still sees what the holder recorded.
	Raw string `json:"raw,omitempty"`
}

// Inspect reports who holds the lock called name, for operators asking "who
// holds this lock?". It runs a read-only script (EVALSHA_RO, so replicas
// may answer it).
func (c *Client) Inspect(ctx context.Context, name string) (LockInfo, error) {
	if err := checkCtx(ctx, "inspect", name); err != nil {
		return LockInfo{}, err
	}
	k, err := keysFor(name)
	if err != nil {
		return LockInfo{}, err
	}
	reply, err := c.backend().Run(ctx, c.scripts.mutexInspect, []string{k.lock, k.queue}).Slice()
	if err != nil {
		return LockInfo{}, wrapCtx(ctx, "locks: inspect "+name, err)
	}
	if len(reply) != 6 {
		return LockInfo{}, fmt.Errorf("locks: inspect %s: unexpected reply %v from %s", name, reply, c.scripts.mutexInspect.ID())
	}
	info := LockInfo{Name: name}
	owner, held := reply[0].(string)
	if held {
		// A released lock's hash stays, without owner, to keep its last
		// token for one lease: it has a TTL but no holder to report.
		info.Held, info.Owner = true, ownerToken(owner)
		info.Token, _ = reply[1].(int64)
		info.HoldCount, _ = reply[2].(int64)
		if ms, _ := reply[3].(int64); ms > 0 {
			info.TTL = time.Duration(ms) * time.Millisecond
		}
	}
	if meta, _ := reply[4].(string); meta != "" {
		info.Holder = parseMetadata(meta)
	}
	info.Waiters, _ = reply[5].(int64)
	return info, nil
}

// parseMetadata reads holder metadata leniently: it is informational, and
// a holder's odd label must not hide who holds the lock. It accepts JSON,
// and the Go-quoted form ({"host":%q,...}) earlier versions wrote, whose
// escapes (\x00, \xff) are not JSON. What neither reads is kept in Raw.
func parseMetadata(meta string) Metadata {
	var m Metadata
	if err := json.Unmarshal([]byte(meta), &m); err == nil {
		return m
	}
	host, okHost := quotedField(meta, "host")
	label, okLabel := quotedField(meta, "label")
	pid, okPID := numberField(meta, "pid")
	if !okHost && !okLabel && !okPID {
		return Metadata{Raw: meta}
	}
	return Metadata{Host: host, PID: pid, Label: label}
}

// quotedField finds "field": followed by a quoted string (JSON or Go syntax).
func quotedField(meta, field string) (string, bool) {
	rest, ok := afterKey(meta, field)
	if !ok {
		return "", false
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	s, err := strconv.Unquote(q)
	return s, err == nil
}

// numberField finds "field": followed by a decimal integer.
func numberField(meta, field string) (int, bool) {
	rest, ok := afterKey(meta, field)
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && (rest[end] >= '0' && rest[end] <= '9' || end == 0 && rest[end] == '-') {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// afterKey returns what follows `"field":` (spaces skipped). Only the
// fields' order in the writer is known, not the values: searching for the
// key from the start could match inside an earlier value, so each value is
// skipped as a quoted string before looking further.
func afterKey(meta, field string) (string, bool) {
	key := `"` + field + `"`
	rest := strings.TrimSpace(meta)
	rest, ok := strings.CutPrefix(rest, "{")
	if !ok {
		return "", false
	}
	for {
		rest = strings.TrimLeft(rest, " ,")
		name, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", false
		}
		rest = strings.TrimLeft(rest[len(name):], " ")
		rest, ok = strings.CutPrefix(rest, ":")
		if !ok {
			return "", false
		}
		rest = strings.TrimLeft(rest, " ")
		if name == key {
			return rest, true
		}
		// Skip this value: a quoted string or a bare token.
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			rest = rest[len(q):]
		} else if i := strings.IndexAny(rest, ",}"); i >= 0 {
			rest = rest[i:]
		} else {
			return "", false
		}
	}
}
