package locks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LockInfo is what Inspect reports about a lock name, whatever kind of lock
// holds it.
type LockInfo struct {
	Name string
	// Held says something holds the name: a Mutex, an RWMutex's writer or
	// readers, or a Semaphore's permits.
	Held bool
	// Kind is "mutex", "rwmutex" or "semaphore", or "" when nothing holds
	// the name: kinds must not share a name, and an operator freeing or
	// debugging a lock needs to know which API its holders use.
	Kind  string
	Owner string // the holder's owner token (a Mutex, or an RWMutex's writer)
	// Token is the last fencing token granted on the name: the holder's,
	// for a Mutex or an RWMutex's writer.
	Token     int64
	HoldCount int64         // reentrant holds
	TTL       time.Duration // the lease's remaining time (when Revoked, the grace left)
	Holder    Metadata      // who holds it
	// Revoked says a forced unlock (ForceUnlock with a grace period)
	// revoked the hold of Owner: the name stays taken until that holder's
	// Unlock confirms that it stopped, or TTL (the grace left) runs out.
	Revoked bool
	// Waiters counts the calls queued for the name: Lock calls (Mutex, and
	// MultiLocks it blocks), an RWMutex's waiting writers and live Acquire
	// calls of a Semaphore.
	Waiters int64
	// Readers are an RWMutex's live read holders, when no writer holds it.
	Readers []ReadHolder
	// Permits are a Semaphore's live permit holders, the earliest lease
	// first. Permits whose lease ran out by the server's clock are left
	// out: they hold no one back.
	Permits []PermitHolder
	// Limit is a Semaphore's permit count as stored by SetPermits; 0 when
	// none was stored, and each caller applies the count it passed to
	// Client.Semaphore.
	Limit int64
	// Servers is set on a quorum Client (NewQuorum) only: what each server
	// holds, in the order NewQuorum was given them. The fields above then
	// give the quorum's view: the name is held when one owner holds it on a
	// majority of the servers, Token is the largest token those servers
	// granted (the lease carries the largest of those that answered its
	// Lock first, which may be smaller), and TTL is the time until fewer
	// than a majority of them still hold it. A hold on a minority (an
	// acquisition under way, one that landed after its round gave up, a
	// holder that lost its majority) takes nothing from the next Lock,
	// which needs a majority of free servers, and is reported here only.
	Servers []ServerInfo
}

// ServerInfo is what one server of a quorum holds, as Inspect saw it.
type ServerInfo struct {
	Server int      // the server's position in NewQuorum's list, from 1
	Info   LockInfo // what the server holds, when Err is nil
	Err    error    // why the server gave no report (down, slow, refused)
}

// ReadHolder is one reader of an RWMutex, as Inspect reports it.
type ReadHolder struct {
	Owner   string        // the reader's owner token
	Holds   int64         // its reentrant read holds
	TTL     time.Duration // its lease's remaining time (when Revoked, the grace left)
	Holder  Metadata      // who holds it
	Revoked bool          // a forced unlock revoked it (see LockInfo.Revoked)
}

// PermitHolder is one Acquire that holds permits of a Semaphore, as Inspect
// reports it.
type PermitHolder struct {
	Owner    string        // the Acquire call's owner token (Lease.Owner)
	Permits  int64         // the permits it holds
	TTL      time.Duration // its lease's remaining time (when Revoked, the grace left)
	Metadata Metadata      // who holds them
	Revoked  bool          // a forced unlock revoked them (see LockInfo.Revoked)
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

// Inspect reports what holds the lock called name, for operators asking "who
// holds this lock?": a Mutex's holder, an RWMutex's writer or readers, or a
// Semaphore's permit holders, permit count and queue. It runs one read-only
// script (EVALSHA_RO, so replicas may answer it), so the report is one
// moment's state.
//
// On a quorum Client (NewQuorum) it asks every server at once and reports
// the quorum's view with each server's own in LockInfo.Servers. When the
// servers that did not answer could decide who holds the name, the error
// wraps ErrNoQuorum and the LockInfo still carries every server's report.
func (c *Client) Inspect(ctx context.Context, name string) (LockInfo, error) {
	if ctx == nil { // the name's short form is built only then
		return LockInfo{}, checkCtx(ctx, "inspect", shortText(name))
	}
	k, err := c.keysFor(name)
	if err != nil {
		return LockInfo{}, err
	}
	if c.quorum() {
		return c.inspectQuorum(ctx, k)
	}
	info, err := c.inspectNode(ctx, c.backend(), k)
	if err != nil {
		return LockInfo{}, wrapCtx(ctx, "locks: inspect "+k.text, err)
	}
	return info, nil
}

// inspectNode runs lock.inspect@2 on one server.
func (c *Client) inspectNode(ctx context.Context, node Backend, k keys) (LockInfo, error) {
	script := c.scripts.inspect
	reply, err := node.Run(ctx, script, []string{k.lock, k.queue, k.semQueue}).Slice()
	if err != nil {
		return LockInfo{}, err
	}
	info, ok := parseInspect(k.name, reply)
	if !ok {
		return LockInfo{}, fmt.Errorf("unexpected reply %v from %s", shortText(fmt.Sprint(reply)), script.ID())
	}
	return info, nil
}

// inspectQuorum asks every server of a quorum at once and reports the
// quorum's view with every server's own. When the servers that did not
// answer could decide who holds the name, it says so in an error wrapping
// ErrNoQuorum, and still returns what the others reported (Servers).
func (c *Client) inspectQuorum(ctx context.Context, k keys) (LockInfo, error) {
	infos, errs := fanOut(ctx, c, nodeTimeout(c.defaults.ttl), nil, func(ctx context.Context, _ int, n Backend) (LockInfo, error) {
		return c.inspectNode(ctx, n, k)
	})
	servers := make([]ServerInfo, len(infos))
	for i := range infos {
		servers[i] = ServerInfo{Server: i + 1, Info: infos[i], Err: errs[i]}
	}
	view, undecided := quorumView(k.name, servers, c.majority())
	if undecided != nil {
		return view, wrapCtx(ctx, "locks: inspect "+k.text, undecided)
	}
	return view, nil
}

// quorumView is the quorum's view of the servers' reports: the owner that
// holds the name on a majority of them, if one does. undecided is set when
// no owner does, but the servers that gave no report could make some
// owner's hold a majority: then no one can say whether the name is held.
func quorumView(name string, servers []ServerInfo, majority int) (view LockInfo, undecided error) {
	view = LockInfo{Name: name, Servers: servers}
	holds := map[string][]LockInfo{}
	unanswered, most := 0, 0
	var failures []error
	for _, s := range servers {
		if s.Err != nil {
			unanswered++
			failures = append(failures, fmt.Errorf("server %d: %w", s.Server, s.Err))
			continue
		}
		view.Waiters = max(view.Waiters, s.Info.Waiters)
		if s.Info.Held && s.Info.Owner != "" {
			holds[s.Info.Owner] = append(holds[s.Info.Owner], s.Info)
			most = max(most, len(holds[s.Info.Owner]))
		}
	}
	for owner, infos := range holds {
		if len(infos) < majority {
			continue
		}
		// The largest token its servers granted; the hold keeps a majority
		// until the majority-th longest of its servers' leases runs out.
		ttls := make([]time.Duration, 0, len(infos))
		view.Held, view.Owner, view.Kind, view.HoldCount = true, owner, infos[0].Kind, infos[0].HoldCount
		for _, in := range infos {
			view.Token = max(view.Token, in.Token)
			view.Revoked = view.Revoked || in.Revoked
			if view.Holder == (Metadata{}) {
				view.Holder = in.Holder
			}
			ttls = append(ttls, in.TTL)
		}
		slices.Sort(ttls)
		view.TTL = ttls[len(ttls)-majority]
		break // at most one owner holds a majority
	}
	if !view.Held && most+unanswered >= majority {
		return view, fmt.Errorf("%d of %d servers gave no report, and with them an owner could hold a majority of %d: %w: %w",
			unanswered, len(servers), majority, ErrNoQuorum, errors.Join(failures...))
	}
	return view, nil
}

// parseInspect decodes lock.inspect@2's reply, {server_time_ms, K's fields,
// the queues' members}, by the layout of docs/layout.md; ok is false when its
// shape is not the script's. Holds whose expiry passed by the server's
// clock are left out: they hold no one back.
func parseInspect(name string, reply []any) (info LockInfo, ok bool) {
	if len(reply) != 3 {
		return LockInfo{}, false
	}
	now, ok1 := reply[0].(int64)
	flat, ok2 := reply[1].([]any)
	queues, ok3 := reply[2].([]any)
	if !ok1 || !ok2 || !ok3 || len(flat)%2 != 0 {
		return LockInfo{}, false
	}
	fields := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		f, ok1 := flat[i].(string)
		v, ok2 := flat[i+1].(string)
		if !ok1 || !ok2 {
			return LockInfo{}, false
		}
		fields[f] = v
	}
	if now == 0 {
		// The script found no clock (miniredis refuses TIME there, and K
		// had no expiry to read it from): the last grant's token, the
		// server's time in µs then, is the latest time known. Holds may
		// then look live a little longer than they are.
		f, _ := strconv.ParseInt(fields["f"], 10, 64)
		now = f / 1000
	}
	left := func(until int64) time.Duration { return time.Duration(until-now) * time.Millisecond }

	info = LockInfo{Name: name}
	info.Limit, _ = strconv.ParseInt(fields["l"], 10, 64)
	kind, until, state, rest := splitHold(fields["h"])
	if until > now {
		switch state {
		case "h", "g", "x":
			// count, client, attempt, owner, meta
			f := strings.SplitN(rest, "\t", 5)
			for len(f) < 5 {
				f = append(f, "")
			}
			info.Held, info.Owner, info.TTL, info.Revoked = true, ownerToken(f[3]), left(until), state == "x"
			info.HoldCount, _ = strconv.ParseInt(f[0], 10, 64)
			if f[4] != "" {
				info.Holder = parseMetadata(f[4])
			}
		}
	}
	waiting := map[string]bool{}
	for field, value := range fields {
		who, isReader := strings.CutPrefix(field, "r:")
		if owner, isPermit := strings.CutPrefix(field, "p:"); isPermit {
			who = owner
		} else if !isReader {
			if owner, isWaiter := strings.CutPrefix(field, "w:"); isWaiter {
				waiting[owner] = waiterLive(value, now)
			} else if strings.HasPrefix(field, "W:") && waiterLive(value, now) {
				// An RWMutex writer waiting (deadline \t client): in no
				// queue, so counted here, once per field.
				info.Waiters++
			}
			continue
		}
		// expiry, state, count, client, attempt, meta
		f := strings.SplitN(value, "\t", 6)
		for len(f) < 6 {
			f = append(f, "")
		}
		expiry, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || expiry <= now {
			continue
		}
		n, _ := strconv.ParseInt(f[2], 10, 64)
		var meta Metadata
		if f[5] != "" {
			meta = parseMetadata(f[5])
		}
		if isReader {
			info.Readers = append(info.Readers, ReadHolder{Owner: ownerToken(who), Holds: n, TTL: left(expiry), Holder: meta, Revoked: f[1] == "x"})
		} else {
			info.Permits = append(info.Permits, PermitHolder{Owner: who, Permits: n, TTL: left(expiry), Metadata: meta, Revoked: f[1] == "x"})
		}
	}
	slices.SortFunc(info.Readers, func(a, b ReadHolder) int { return cmpHolder(a.TTL, b.TTL, a.Owner, b.Owner) })
	slices.SortFunc(info.Permits, func(a, b PermitHolder) int { return cmpHolder(a.TTL, b.TTL, a.Owner, b.Owner) })
	info.Held = info.Held || len(info.Readers) > 0 || len(info.Permits) > 0
	if info.Held {
		info.Kind = kind
		info.Token, _ = strconv.ParseInt(fields["f"], 10, 64)
	}
	// Waiters: the queues' members and the w:<owner> entries, each once,
	// besides the RWMutex writers' W:<owner> entries counted above; one
	// whose entry's deadline passed is not counted.
	for _, q := range queues {
		members, ok := q.([]any)
		if !ok {
			return LockInfo{}, false
		}
		for _, m := range members {
			who, _ := m.(string)
			if _, known := waiting[who]; !known {
				waiting[who] = true
			}
		}
	}
	for _, live := range waiting {
		if live {
			info.Waiters++
		}
	}
	return info, true
}

// splitHold splits K's field h, "<kind>\t<until_ms>\t<state>\t<rest>".
func splitHold(h string) (kind string, until int64, state, rest string) {
	f := strings.SplitN(h, "\t", 4)
	if len(f) < 3 {
		return "", 0, "", ""
	}
	until, _ = strconv.ParseInt(f[1], 10, 64)
	if len(f) == 4 {
		rest = f[3]
	}
	return f[0], until, f[2], rest
}

// waiterLive reads a waiter entry's deadline, its first number (up to a tab
// or a space); an entry that starts with none is taken as live.
func waiterLive(entry string, now int64) bool {
	end := strings.IndexAny(entry, "\t ")
	if end < 0 {
		end = len(entry)
	}
	deadline, err := strconv.ParseInt(entry[:end], 10, 64)
	return err != nil || deadline > now
}

// cmpHolder orders holders by their time left, then by owner.
func cmpHolder(a, b time.Duration, ownerA, ownerB string) int {
	if a != b {
		if a < b {
			return -1
		}
		return 1
	}
	return strings.Compare(ownerA, ownerB)
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
