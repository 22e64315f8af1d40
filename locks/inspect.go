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
	Kind      string
	Owner     string        // the holder's owner token (a Mutex, or an RWMutex's writer)
	Token     int64         // the holder's fencing token
	HoldCount int64         // reentrant holds
	TTL       time.Duration // the lease's remaining time
	Holder    Metadata      // who holds it
	// Waiters counts the calls queued for the name: Lock calls (Mutex, and
	// MultiLocks it blocks) and live Acquire calls of a Semaphore.
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
	Owner string        // the reader's owner token
	Holds int64         // its reentrant read holds
	TTL   time.Duration // its lease's remaining time
}

// PermitHolder is one Acquire that holds permits of a Semaphore, as Inspect
// reports it.
type PermitHolder struct {
	Owner   string        // the Acquire call's owner token (Lease.Owner)
	Permits int64         // the permits it holds
	TTL     time.Duration // its lease's remaining time
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
	k, err := keysFor(name)
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

// inspectNode runs mutex.inspect@2 on one server.
func (c *Client) inspectNode(ctx context.Context, node Backend, k keys) (LockInfo, error) {
	script := c.scripts.inspect
	reply, err := node.Run(ctx, script,
		[]string{k.lock, k.queue, k.readers, k.holds, k.permits, k.limit, k.semQueue, k.semWaiters}).Slice()
	if err != nil {
		return LockInfo{}, err
	}
	info, ok := parseInspect(k.name, reply)
	if !ok {
		return LockInfo{}, fmt.Errorf("unexpected reply %v from %s", reply, script.ID())
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

// parseInspect decodes mutex.inspect@2's reply; ok is false when its shape
// is not the script's.
func parseInspect(name string, reply []any) (info LockInfo, ok bool) {
	if len(reply) != 11 {
		return LockInfo{}, false
	}
	info = LockInfo{Name: name}
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
	info.Kind, _ = reply[6].(string)
	readers, ok1 := triples(reply[7])
	permits, ok2 := triples(reply[8])
	if !ok1 || !ok2 {
		return LockInfo{}, false
	}
	for _, r := range readers {
		info.Readers = append(info.Readers, ReadHolder{Owner: ownerToken(r.owner), Holds: r.n, TTL: r.ttl})
	}
	for _, p := range permits {
		info.Permits = append(info.Permits, PermitHolder{Owner: p.owner, Permits: p.n, TTL: p.ttl})
	}
	info.Held = info.Held || len(info.Readers) > 0 || len(info.Permits) > 0
	info.Limit, _ = reply[9].(int64)
	semWaiters, _ := reply[10].(int64)
	info.Waiters += semWaiters
	return info, true
}

// triple is one {owner, count, pttl_ms} of a flat list in a script reply.
type triple struct {
	owner string
	n     int64
	ttl   time.Duration
}

func triples(v any) ([]triple, bool) {
	flat, ok := v.([]any)
	if !ok || len(flat)%3 != 0 {
		return nil, false
	}
	out := make([]triple, 0, len(flat)/3)
	for i := 0; i < len(flat); i += 3 {
		owner, ok1 := flat[i].(string)
		n, ok2 := flat[i+1].(int64)
		ms, ok3 := flat[i+2].(int64)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		out = append(out, triple{owner, n, time.Duration(ms) * time.Millisecond})
	}
	return out, true
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
