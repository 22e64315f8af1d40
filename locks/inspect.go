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
	// Partial says Inspect stopped before the end of the name's records:
	// it reads at most MaxInspectRecords of them (a name piled with more
	// holders and waiters than that), and Readers, Permits and Waiters then
	// count only those it read. InspectPage reads every page.
	Partial bool
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
// Semaphore's permit holders, permit count and queue. It reads the name in
// pages (InspectPage, MaxInspectPageCount records each), each a read-only
// script (EVALSHA_RO, so replicas may answer it) whose server time stays
// small however many holders and waiters the name has. The hold (a single
// holder, the token, the limit) is the first page's moment; readers,
// permit holders and waiters are each as their page saw them. It reads at
// most MaxInspectRecords records and then reports Partial; InspectPage
// pages through any number.
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

const (
	// DefaultInspectPageCount is how many of a name's records InspectPage
	// asks for with a count of 0.
	DefaultInspectPageCount = 100
	// MaxInspectPageCount is the largest count InspectPage takes: a page of
	// that many records takes the server well under a millisecond.
	MaxInspectPageCount = 1000
	// MaxInspectRecords is the most records (holders and waiters) one
	// Inspect reads, MaxInspectPageCount per page; past them it reports
	// Partial.
	MaxInspectRecords = 100 * MaxInspectPageCount
)

// InspectPage is one page of what a lock name holds (Client.InspectPage).
type InspectPage struct {
	// LockInfo is what every page reports alike (the hold: Held for a
	// single holder, Kind, Owner, Token, HoldCount, TTL, Holder, Revoked;
	// Limit), and the Readers and Permits this page found: Held is also
	// set when the page found a live reader or permit holder. Waiters
	// counts the members of the name's queues (a Mutex's Lock calls, a
	// Semaphore's Acquire calls), the same on every page; Queue lists
	// this page's waiters.
	LockInfo
	// Queue is the waiters whose entries this page found, each with its
	// place in the queue; an RWMutex's waiting writers (which do not
	// queue) among them with Rank -1. Entries whose deadline passed are
	// left out.
	Queue []Waiter
	// Cursor is where the next page starts: pass it to the next
	// InspectPage call. 0 when this page was the last.
	Cursor uint64
}

// Waiter is one call waiting for a lock name, as InspectPage reports it.
type Waiter struct {
	Owner string        // the waiting call's owner token
	Rank  int64         // its place in the name's queue, from 0 (the next served); -1 when not queued
	TTL   time.Duration // until its entry lapses, unless its Client refreshes it
}

// InspectPage reports one page of what holds the lock called name, for
// operators paging through a name with many readers, permit holders or
// waiters: the hold, and up to count of the name's records (holders and
// waiters; 0 means DefaultInspectPageCount, at most MaxInspectPageCount)
// from cursor on. Start with cursor 0 and pass each page's Cursor to the
// next call until it is 0, as Redis's SCAN: every record present from the
// first page to the last is reported at least once (a record may appear
// in two pages; one added or removed meanwhile may or may not appear). A
// small name answers in one page whatever count is. Each page is one
// read-only script whose server work is bounded by count.
//
// A quorum Client's servers each have their own cursors: use Inspect there.
func (c *Client) InspectPage(ctx context.Context, name string, cursor uint64, count int) (InspectPage, error) {
	if ctx == nil {
		return InspectPage{}, checkCtx(ctx, "inspect", shortText(name))
	}
	k, err := c.keysFor(name)
	if err != nil {
		return InspectPage{}, err
	}
	if count == 0 {
		count = DefaultInspectPageCount
	}
	if count < 0 || count > MaxInspectPageCount {
		return InspectPage{}, invalidf("locks: inspect %s: count %d: a page holds 1 to MaxInspectPageCount (%d) records, 0 for the default (%d)", k.text, count, MaxInspectPageCount, DefaultInspectPageCount)
	}
	if c.quorum() {
		return InspectPage{}, invalidf("locks: inspect %s: InspectPage pages one server; a quorum Client's servers each page apart: use Inspect", k.text)
	}
	raw, err := c.inspectRun(ctx, c.backend(), k, cursor, count)
	if err != nil {
		return InspectPage{}, wrapCtx(ctx, "locks: inspect "+k.text, err)
	}
	var f inspectFold
	f.add(raw)
	page := InspectPage{LockInfo: c.report(ctx, c.backend(), &f, k.name), Queue: f.queue, Cursor: raw.next}
	page.Waiters = raw.queued
	return page, nil
}

// inspectNode reads the whole name on one server, MaxInspectPageCount
// records a page, up to MaxInspectRecords.
func (c *Client) inspectNode(ctx context.Context, node Backend, k keys) (LockInfo, error) {
	var f inspectFold
	cursor := uint64(0)
	for pages := 0; ; pages++ {
		if pages == MaxInspectRecords/MaxInspectPageCount {
			f.partial = true
			break
		}
		raw, err := c.inspectRun(ctx, node, k, cursor, MaxInspectPageCount)
		if err != nil {
			return LockInfo{}, err
		}
		f.add(raw)
		if cursor = raw.next; cursor == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return LockInfo{}, err
		}
	}
	return c.report(ctx, node, &f, k.name), nil
}

// inspectRun runs lock.inspect@3 for one page on one server.
func (c *Client) inspectRun(ctx context.Context, node Backend, k keys, cursor uint64, count int) (inspectRaw, error) {
	script := c.scripts.inspect
	reply, err := node.Run(ctx, script, []string{k.lock, k.queue, k.semQueue}, strconv.FormatUint(cursor, 10), count).Slice()
	if err != nil {
		return inspectRaw{}, err
	}
	raw, ok := parseInspectRaw(reply)
	if !ok {
		return inspectRaw{}, fmt.Errorf("unexpected reply %v from %s", shortText(fmt.Sprint(reply)), script.ID())
	}
	return raw, nil
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

// inspectRaw is one page of lock.inspect@3's reply.
type inspectRaw struct {
	now    int64             // the server's time (ms)
	head   map[string]string // h, f, q, l ("" when absent)
	queued int64             // the queues' lengths
	next   uint64            // the next page's cursor, 0 at the end
	fields [][2]string       // the page's fields and values
	ranks  []int64           // the queue rank of each w: field, in page order (-1: none)
}

// parseInspectRaw decodes lock.inspect@3's reply, {server_time_ms, {h, f,
// q, l}, {queue length, squeue length}, next_cursor, {field, value, ...},
// {rank of each w: field}}; ok is false when its shape is not the script's.
func parseInspectRaw(reply []any) (raw inspectRaw, ok bool) {
	if len(reply) != 6 {
		return raw, false
	}
	now, ok1 := reply[0].(int64)
	head, ok2 := reply[1].([]any)
	lengths, ok3 := reply[2].([]any)
	next, ok4 := reply[3].(string)
	flat, ok5 := reply[4].([]any)
	ranks, ok6 := reply[5].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || len(head) != 4 || len(flat)%2 != 0 {
		return raw, false
	}
	var err error
	if raw.next, err = strconv.ParseUint(next, 10, 64); err != nil {
		return raw, false
	}
	raw.now, raw.head = now, make(map[string]string, 4)
	for i, name := range []string{"h", "f", "q", "l"} {
		v, ok := head[i].(string)
		if !ok {
			return raw, false
		}
		raw.head[name] = v
	}
	for _, l := range lengths {
		n, ok := l.(int64)
		if !ok {
			return raw, false
		}
		raw.queued += n
	}
	raw.fields = make([][2]string, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		f, ok1 := flat[i].(string)
		v, ok2 := flat[i+1].(string)
		if !ok1 || !ok2 {
			return raw, false
		}
		raw.fields = append(raw.fields, [2]string{f, v})
	}
	for _, r := range ranks {
		n, ok := r.(int64)
		if !ok {
			return raw, false
		}
		raw.ranks = append(raw.ranks, n)
	}
	if raw.now == 0 {
		// The script found no clock (miniredis refuses TIME there, and K
		// had no expiry to read it from): the last grant's token, the
		// server's time in µs then, is the latest time known. Holds may
		// then look live a little longer than they are.
		f, _ := strconv.ParseInt(raw.head["f"], 10, 64)
		raw.now = f / 1000
	}
	return raw, true
}

// inspectFold gathers pages into one report: the hold from the first page,
// each record once (a scan may return one twice).
type inspectFold struct {
	first   inspectRaw
	pages   int
	partial bool
	seen    map[string]bool
	readers []ReadHolder
	permits []PermitHolder
	// The Clients of readers and permits (same order), whose holder
	// records hold their metadata.
	readerClients, permitClients []string
	queue                        []Waiter
	// Waiters by the layout: w: entries (live ones count), queue members
	// without one (queued minus the w: entries found queued), live W:.
	liveW, queuedW, writers int64
}

func (f *inspectFold) add(raw inspectRaw) {
	if f.pages == 0 {
		f.first, f.seen = raw, map[string]bool{}
	}
	f.pages++
	now := raw.now
	left := func(until int64) time.Duration { return time.Duration(until-now) * time.Millisecond }
	rank := 0
	for _, fv := range raw.fields {
		field, value := fv[0], fv[1]
		var r int64 = -1
		if strings.HasPrefix(field, "w:") && rank < len(raw.ranks) {
			r = raw.ranks[rank]
			rank++
		}
		if f.seen[field] {
			continue
		}
		f.seen[field] = true
		who, isReader := strings.CutPrefix(field, "r:")
		if owner, isPermit := strings.CutPrefix(field, "p:"); isPermit {
			who = owner
		} else if !isReader {
			if owner, isWaiter := strings.CutPrefix(field, "w:"); isWaiter {
				live := waiterLive(value, now)
				if r >= 0 {
					f.queuedW++
				}
				if live {
					f.liveW++
					f.queue = append(f.queue, Waiter{Owner: owner, Rank: r, TTL: waiterLeft(value, now)})
				}
			} else if owner, isWriter := strings.CutPrefix(field, "W:"); isWriter && waiterLive(value, now) {
				// An RWMutex writer waiting (deadline \t client): in no queue.
				f.writers++
				f.queue = append(f.queue, Waiter{Owner: ownerToken(owner), Rank: -1, TTL: waiterLeft(value, now)})
			}
			continue
		}
		// expiry, state, count, client, attempt, meta
		rec := strings.SplitN(value, "\t", 6)
		for len(rec) < 6 {
			rec = append(rec, "")
		}
		expiry, err := strconv.ParseInt(rec[0], 10, 64)
		if err != nil || expiry <= now {
			continue
		}
		n, _ := strconv.ParseInt(rec[2], 10, 64)
		meta := holdMetadata(rec[5])
		if isReader {
			f.readers = append(f.readers, ReadHolder{Owner: ownerToken(who), Holds: n, TTL: left(expiry), Holder: meta, Revoked: rec[1] == "x"})
			f.readerClients = append(f.readerClients, rec[3])
		} else {
			f.permits = append(f.permits, PermitHolder{Owner: who, Permits: n, TTL: left(expiry), Metadata: meta, Revoked: rec[1] == "x"})
			f.permitClients = append(f.permitClients, rec[3])
		}
	}
}

// report is the report of the pages added, with the holders' metadata
// joined from their Clients' holder records on node.
func (c *Client) report(ctx context.Context, node Backend, f *inspectFold, name string) LockInfo {
	info, holdClient := f.info(name)
	var refs []holderRef
	if info.Owner != "" {
		refs = append(refs, holderRef{holdClient, &info.Holder})
	}
	for i := range info.Readers {
		refs = append(refs, holderRef{f.readerClients[i], &info.Readers[i].Holder})
	}
	for i := range info.Permits {
		refs = append(refs, holderRef{f.permitClients[i], &info.Permits[i].Metadata})
	}
	c.joinHolders(ctx, node, refs)
	slices.SortFunc(info.Readers, func(a, b ReadHolder) int { return cmpHolder(a.TTL, b.TTL, a.Owner, b.Owner) })
	slices.SortFunc(info.Permits, func(a, b PermitHolder) int { return cmpHolder(a.TTL, b.TTL, a.Owner, b.Owner) })
	return info
}

// info is the report of the pages added, holders in page order, and the
// single holder's Client.
func (f *inspectFold) info(name string) (info LockInfo, holdClient string) {
	raw := f.first
	now := raw.now
	info = LockInfo{Name: name, Partial: f.partial}
	info.Limit, _ = strconv.ParseInt(raw.head["l"], 10, 64)
	kind, until, state, rest := splitHold(raw.head["h"])
	if until > now {
		switch state {
		case "h", "g", "x":
			// count, client, attempt, owner, meta
			h := strings.SplitN(rest, "\t", 5)
			for len(h) < 5 {
				h = append(h, "")
			}
			info.Held, info.Owner, info.Revoked = true, ownerToken(h[3]), state == "x"
			info.TTL = time.Duration(until-now) * time.Millisecond
			info.HoldCount, _ = strconv.ParseInt(h[0], 10, 64)
			info.Holder, holdClient = holdMetadata(h[4]), h[1]
		}
	}
	info.Readers, info.Permits = slices.Clone(f.readers), slices.Clone(f.permits)
	info.Held = info.Held || len(info.Readers) > 0 || len(info.Permits) > 0
	if info.Held {
		info.Kind = kind
		info.Token, _ = strconv.ParseInt(raw.head["f"], 10, 64)
	}
	info.Waiters = f.liveW + max(raw.queued-f.queuedW, 0) + f.writers
	return info, holdClient
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

// waiterLeft is the time until a waiter entry's deadline (0 when it has none).
func waiterLeft(entry string, now int64) time.Duration {
	end := strings.IndexAny(entry, "\t ")
	if end < 0 {
		end = len(entry)
	}
	deadline, err := strconv.ParseInt(entry[:end], 10, 64)
	if err != nil || deadline <= now {
		return 0
	}
	return time.Duration(deadline-now) * time.Millisecond
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

// holdMetadata is the metadata a hold record carries ("" when none, and
// the placeholder "~" until joined with its Client's holder record).
func holdMetadata(meta string) Metadata {
	if meta == "" || meta == holderPlaceholder {
		return Metadata{}
	}
	return parseMetadata(meta)
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
