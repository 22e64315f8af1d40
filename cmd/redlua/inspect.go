package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redlua/redlua/locks"
)

// lockView is one lock in `redlua inspect --json`. Fields are only added:
// scripts parse this output.
type lockView struct {
	Name   string  `json:"name"`
	Held   bool    `json:"held"`
	Kind   string  `json:"kind,omitempty"` // mutex, rwmutex, semaphore; absent when free
	Owner  string  `json:"owner,omitempty"`
	Token  int64   `json:"token,omitempty"`
	Holds  int64   `json:"holds,omitempty"`
	TTLms  int64   `json:"ttl_ms,omitempty"`
	Holder *holder `json:"holder,omitempty"`
	// Revoked: a forced unlock revoked the holder's hold; ttl_ms is the
	// grace left.
	Revoked bool  `json:"revoked,omitempty"`
	Waiters int64 `json:"waiters,omitempty"`
	// An RWMutex's readers, a Semaphore's permit holders and its count
	// (limit: absent when no SetPermits stored one and each caller applies
	// its own).
	Readers []readerView `json:"readers,omitempty"`
	Permits []permitView `json:"permits,omitempty"`
	Limit   int64        `json:"limit,omitempty"`
	// With --quorum: what each primary holds, in --addr's order, and
	// whether the primaries that did not answer leave it undecided (held
	// false then means: cannot tell).
	Servers   []serverView `json:"servers,omitempty"`
	Undecided bool         `json:"undecided,omitempty"`
	// Partial: the name holds more records (holders, waiters) than one
	// inspect reads (locks.MaxInspectRecords); the lists and counts hold
	// those it read.
	Partial bool `json:"partial,omitempty"`
}

// serverView is one primary of a quorum: its own view of the lock, or the
// error it answered with.
type serverView struct {
	Addr  string `json:"addr"`
	Error string `json:"error,omitempty"`
	lockView
}

type holder struct {
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Label string `json:"label,omitempty"`
	Raw   string `json:"raw,omitempty"`
}

type readerView struct {
	Owner   string  `json:"owner"`
	Holds   int64   `json:"holds"`
	TTLms   int64   `json:"ttl_ms"`
	Holder  *holder `json:"holder,omitempty"`
	Revoked bool    `json:"revoked,omitempty"`
}

type permitView struct {
	Owner   string  `json:"owner"`
	Permits int64   `json:"permits"`
	TTLms   int64   `json:"ttl_ms"`
	Holder  *holder `json:"holder,omitempty"`
	Revoked bool    `json:"revoked,omitempty"`
}

// holderOf is m as printed; nil when nothing was recorded.
func holderOf(m locks.Metadata) *holder {
	if m == (locks.Metadata{}) {
		return nil
	}
	return &holder{Host: m.Host, PID: m.PID, Label: m.Label, Raw: m.Raw}
}

// revokedNote is what a revoked hold's line adds.
func revokedNote(revoked bool) string {
	if revoked {
		return " (revoked by a forced unlock: free once it releases, at the latest then)"
	}
	return ""
}

// viewOf is info as printed; addrs name a quorum's servers (--addr).
func viewOf(info locks.LockInfo, addrs []string) lockView {
	v := lockView{Name: info.Name, Held: info.Held, Kind: info.Kind, Owner: info.Owner, Token: info.Token, Holds: info.HoldCount,
		TTLms: info.TTL.Milliseconds(), Waiters: info.Waiters, Limit: info.Limit, Revoked: info.Revoked, Holder: holderOf(info.Holder),
		Partial: info.Partial}
	for _, r := range info.Readers {
		v.Readers = append(v.Readers, readerView{Owner: r.Owner, Holds: r.Holds, TTLms: r.TTL.Milliseconds(), Holder: holderOf(r.Holder), Revoked: r.Revoked})
	}
	for _, p := range info.Permits {
		v.Permits = append(v.Permits, permitView{Owner: p.Owner, Permits: p.Permits, TTLms: p.TTL.Milliseconds(), Holder: holderOf(p.Metadata), Revoked: p.Revoked})
	}
	for _, s := range info.Servers {
		sv := serverView{Addr: fmt.Sprintf("server %d", s.Server)}
		if s.Server >= 1 && s.Server <= len(addrs) {
			sv.Addr = addrs[s.Server-1]
		}
		if s.Err != nil {
			sv.Error = s.Err.Error()
		} else {
			sv.lockView = viewOf(s.Info, nil)
		}
		v.Servers = append(v.Servers, sv)
	}
	return v
}

const inspectHelp = `redlua inspect [--json] [--quorum] NAME...

Reports what holds each lock NAME: a Mutex's holder (owner, fencing token,
lease left, host, pid and label), an RWMutex's writer or readers, a
Semaphore's permit holders (each with host, pid and label), its count (when
SetPermits stored one) and its queue. A hold that a forced unlock revoked is
marked so, with the grace left. It reads each NAME in pages of read-only
scripts (1000 records each, so a name with many readers or waiters does not
stall the server), up to 100000 records (beyond: "partial"), and changes
nothing.
Flags may stand before or after the names.

examples:
  redlua inspect nightly-report
  redlua inspect --json nightly-report worker-slots | jq '.[] | select(.held)'
  redlua inspect --quorum --addr r1:6379,r2:6379,r3:6379 nightly-report

exit codes: 0 reported; 2 usage; 69 server unreachable or error (with
--quorum also: undecided, each primary's view printed)
`

func cmdInspect(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("inspect", inspectHelp, getenv)
	asJSON := c.fs.Bool("json", false, "print a JSON array of objects (name, held, kind, owner, token, holds, ttl_ms, holder, revoked, waiters, readers, permits, limit, partial; with --quorum servers and undecided)")
	c.conn.addQuorumFlag(c.fs)
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	names := c.args
	if len(names) == 0 {
		return usageErrorf("name at least one lock, as in: redlua inspect nightly-report")
	}
	if err := checkNames(names); err != nil {
		return err
	}
	lc, closeAll, err := lockClient(ctx, c, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	addrs := c.conn.quorumAddrs()
	views := make([]lockView, 0, len(names))
	var undecided []error
	for _, name := range names {
		info, err := lc.Inspect(ctx, name)
		switch {
		case errors.Is(err, locks.ErrNoQuorum) && len(info.Servers) > 0:
			// Shown with what the primaries that answered hold; the exit
			// status says it is undecided.
			undecided = append(undecided, fmt.Errorf("%s: %w", name, libErr(err, name)))
		case err != nil:
			return unavailable(fmt.Errorf("%s: %w", name, libErr(err, name)))
		}
		v := viewOf(info, addrs)
		v.Undecided = err != nil
		views = append(views, v)
	}
	if *asJSON {
		if err := writeJSON(io.out, views); err != nil {
			return err
		}
	} else {
		for i, info := range views {
			if i > 0 {
				fmt.Fprintln(io.out)
			}
			printView(io, info)
		}
	}
	if len(undecided) > 0 {
		return unavailable(errors.Join(undecided...))
	}
	return nil
}

// writeJSON prints v indented, as written: a label with '>' or '&' keeps
// it (no HTML escaping, which is for JSON embedded in HTML).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printView(io stdio, v lockView) {
	switch {
	case v.Undecided:
		fmt.Fprintf(io.out, "%s: undecided (the primaries that did not answer could give an owner a majority)\n", v.Name)
	case !v.Held:
		fmt.Fprintf(io.out, "%s: free", v.Name)
		if v.Waiters > 0 {
			fmt.Fprintf(io.out, " (%d queued)", v.Waiters)
		}
		if len(v.Servers) > 0 {
			fmt.Fprintf(io.out, " (no owner holds a majority of the %d primaries)", len(v.Servers))
		}
		fmt.Fprintln(io.out)
	}
	if !v.Held {
		printPartial(io, v)
		printServers(io, v)
		return
	}
	if len(v.Servers) > 0 {
		fmt.Fprintf(io.out, "%s: held on %d of %d primaries, a majority\n", v.Name, v.holdingServers(), len(v.Servers))
	} else {
		fmt.Fprintf(io.out, "%s: held\n", v.Name)
	}
	if v.Kind != "" {
		fmt.Fprintf(io.out, "  kind     %s\n", v.Kind)
	}
	if v.Owner != "" { // a Mutex or an RWMutex's writer
		printOwner(io, v)
	}
	if len(v.Readers) > 0 {
		fmt.Fprintf(io.out, "  readers  %d\n", len(v.Readers))
		for _, r := range v.Readers {
			fmt.Fprintf(io.out, "    %s  %s, %v left%s%s\n", r.Owner, plural(r.Holds, "hold"), msDuration(r.TTLms), holderNote(r.Holder), revokedNote(r.Revoked))
		}
	}
	if v.Kind == "semaphore" {
		used := int64(0)
		for _, p := range v.Permits {
			used += p.Permits
		}
		if v.Limit > 0 {
			fmt.Fprintf(io.out, "  permits  %d of %d in use\n", used, v.Limit)
		} else {
			// The count each caller passed to Client.Semaphore is not
			// stored on the server; only SetPermits stores one.
			fmt.Fprintf(io.out, "  permits  %d in use; limit not stored on the server (each caller applies the count it was made with; SetPermits stores one)\n", used)
		}
		fmt.Fprintf(io.out, "  holders  %d\n", len(v.Permits))
		for _, p := range v.Permits {
			fmt.Fprintf(io.out, "    %s  %s, %v left%s%s\n", p.Owner, plural(p.Permits, "permit"), msDuration(p.TTLms), holderNote(p.Holder), revokedNote(p.Revoked))
		}
	}
	if v.Waiters > 0 {
		fmt.Fprintf(io.out, "  waiters  %d\n", v.Waiters)
	}
	printPartial(io, v)
	printServers(io, v)
}

// printPartial says when the lists above are only the records one inspect
// reads.
func printPartial(io stdio, v lockView) {
	if v.Partial {
		fmt.Fprintf(io.out, "  partial  the name holds more than %d records; the lists and counts above are those read\n", locks.MaxInspectRecords)
	}
}

// holdingServers counts the primaries of a quorum where the quorum's owner
// holds the lock.
func (v lockView) holdingServers() int {
	n := 0
	for _, s := range v.Servers {
		if s.Error == "" && s.Owner == v.Owner {
			n++
		}
	}
	return n
}

// printServers prints what each primary of a quorum holds, one line each.
func printServers(io stdio, v lockView) {
	if len(v.Servers) == 0 {
		return
	}
	fmt.Fprintf(io.out, "  primaries\n")
	for _, s := range v.Servers {
		var what string
		switch {
		case s.Error != "":
			what = "no answer: " + s.Error
		case !s.Held:
			what = "free"
		case s.Owner != "":
			what = fmt.Sprintf("held by %s, token %d, %v left", s.Owner, s.Token, msDuration(s.TTLms))
		default:
			what = "held by a " + s.Kind
		}
		fmt.Fprintf(io.out, "    %s  %s\n", s.Addr, what)
	}
}

// printOwner prints the one holder of a Mutex or of an RWMutex's write side.
func printOwner(io stdio, v lockView) {
	fmt.Fprintf(io.out, "  owner    %s\n", v.Owner)
	fmt.Fprintf(io.out, "  token    %d\n", v.Token)
	if v.Holds > 1 {
		fmt.Fprintf(io.out, "  holds    %d\n", v.Holds)
	}
	if v.TTLms > 0 {
		fmt.Fprintf(io.out, "  ttl      %v%s\n", msDuration(v.TTLms), revokedNote(v.Revoked))
	} else {
		fmt.Fprintf(io.out, "  ttl      none (the lock never expires: free it with redlua unlock --force)\n")
	}
	if h := v.Holder; h != nil {
		if h.Raw != "" {
			fmt.Fprintf(io.out, "  holder   %q\n", h.Raw)
		} else {
			fmt.Fprintf(io.out, "  holder   %s pid %d\n", h.Host, h.PID)
			if h.Label != "" {
				fmt.Fprintf(io.out, "  label    %q\n", h.Label)
			}
		}
	}
}

// holderNote is ", host pid N, label L" for a reader's or permit holder's line.
func holderNote(h *holder) string {
	switch {
	case h == nil:
		return ""
	case h.Raw != "":
		return fmt.Sprintf(", holder %q", h.Raw)
	case h.Label != "":
		return fmt.Sprintf(", %s pid %d, label %q", h.Host, h.PID, h.Label)
	}
	return fmt.Sprintf(", %s pid %d", h.Host, h.PID)
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// plural is "1 permit", "2 permits".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// describeReaders names an RWMutex's readers and what each holds.
func describeReaders(info locks.LockInfo) string {
	parts := make([]string, 0, len(info.Readers))
	for _, r := range info.Readers {
		parts = append(parts, fmt.Sprintf("owner %s: %s, lease %v left", r.Owner, plural(r.Holds, "hold"), r.TTL.Round(time.Millisecond)))
	}
	return strings.Join(parts, "; ")
}

// describeHolder is a one-line "who": host, pid, label, TTL and token; for
// a semaphore, each holder's permits and lease.
func describeHolder(info locks.LockInfo) string {
	if info.Owner == "" && len(info.Permits) > 0 {
		parts := make([]string, 0, len(info.Permits))
		for _, p := range info.Permits {
			parts = append(parts, fmt.Sprintf("owner %s: %s, lease %v left", p.Owner, plural(p.Permits, "permit"), p.TTL.Round(time.Millisecond)))
		}
		return strings.Join(parts, "; ")
	}
	if info.Owner == "" && len(info.Readers) > 0 {
		return plural(int64(len(info.Readers)), "reader")
	}
	var parts []string
	if h := info.Holder; h.Host != "" || h.PID != 0 {
		parts = append(parts, fmt.Sprintf("%s pid %d", h.Host, h.PID))
		if h.Label != "" {
			parts = append(parts, fmt.Sprintf("label %q", h.Label))
		}
	} else if h.Raw != "" {
		parts = append(parts, fmt.Sprintf("%q", h.Raw))
	} else {
		parts = append(parts, "owner "+info.Owner)
	}
	parts = append(parts, fmt.Sprintf("token %d", info.Token))
	if info.TTL > 0 {
		parts = append(parts, fmt.Sprintf("lease %v left", info.TTL.Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

const unlockHelp = `redlua unlock --force [--grace D] [--quorum] NAME...

Revokes every hold of each lock NAME, whoever holds it: a Mutex's holder, an
RWMutex's writer and every reader, every holder of a Semaphore's permits.
Each holder's client is told at once and its lease ends (lost, "forced
unlock"): a 'redlua lock' holding it stops its CMD (SIGTERM, then SIGKILL
after its own --grace), waits for CMD to exit, then releases the lock, and
exits 124. The lock goes to no one else until the holder released it that
way, or until --grace D passed (for a holder that cannot be told: its
process paused, its connection down); then the next waiter gets it.
--grace 0 removes the holds at once: the old holder and the next may then
run at the same time until the old one notices. It prints who held each
lock. Flags may stand before or after the names.

examples:
  redlua unlock --force nightly-report
  redlua unlock --force --grace 1m --json nightly-report worker-slots
  redlua unlock --force --grace 0 nightly-report   # the holder is known dead
  redlua unlock --force --quorum --addr r1:6379,r2:6379,r3:6379 nightly-report

exit codes: 0 done (also for a lock that was not held); 2 usage; 69 server
unreachable or error (with --quorum: a majority could not be freed)
`

func cmdUnlock(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("unlock", unlockHelp, getenv)
	force := c.fs.Bool("force", false, "required: revoke the holder whoever it is, every reader of a read-write lock, or every holder of a semaphore's permits (their leases end as lost)")
	grace := c.fs.Duration("grace", locks.DefaultGrace, "how long the revoked holders keep the lock at most when they do not release it (0: remove at once; at most "+locks.MaxTTL.String()+")")
	asJSON := c.fs.Bool("json", false, "print a JSON array of {name, removed, grace_ms, was}")
	c.conn.addQuorumFlag(c.fs)
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	names := c.args
	if !*force {
		return usageErrorf("only --force is supported: a holder's own Unlock needs its lease; --force removes whoever holds the lock, as in: redlua unlock --force NAME")
	}
	if len(names) == 0 {
		return usageErrorf("name at least one lock, as in: redlua unlock --force nightly-report")
	}
	if *grace < 0 || *grace > locks.MaxTTL {
		return usageErrorf("--grace %v must be 0 (remove at once) to %v, such as --grace %v (the default)", *grace, locks.MaxTTL, locks.DefaultGrace)
	}
	if err := checkNames(names); err != nil {
		return err
	}
	lc, closeAll, err := lockClient(ctx, c, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	type result struct {
		Name    string    `json:"name"`
		Removed bool      `json:"removed"`
		GraceMs int64     `json:"grace_ms"`
		Was     *lockView `json:"was,omitempty"`
	}
	addrs := c.conn.quorumAddrs()
	var results []result
	for _, name := range names {
		// Who held it, for the operator's record; the removal does not
		// depend on it.
		before, inspectErr := lc.Inspect(ctx, name)
		removed, err := lc.ForceUnlock(ctx, name, locks.WithGrace(*grace))
		if err != nil {
			return unavailable(fmt.Errorf("%s: %w", name, libErr(err, name)))
		}
		if addrs != nil {
			warnUnfreed(ctx, io, lc, name, addrs)
		}
		r := result{Name: name, Removed: removed, GraceMs: grace.Milliseconds()}
		if removed && inspectErr == nil && before.Held {
			v := viewOf(before, addrs)
			r.Was = &v
		}
		results = append(results, r)
		if *asJSON {
			continue
		}
		verb, until := "removed", ""
		if *grace > 0 {
			verb, until = "revoked", fmt.Sprintf("; the lock is free once they release it, at the latest in %v", *grace)
		}
		switch {
		case !removed:
			fmt.Fprintf(io.out, "%s: was not held\n", name)
		case r.Was != nil && before.Owner == "" && len(before.Readers) > 0:
			fmt.Fprintf(io.out, "%s: %s the %s (%s)%s\n", name, verb, plural(int64(len(before.Readers)), "reader"), describeReaders(before), until)
		case r.Was != nil && len(before.Permits) > 0:
			fmt.Fprintf(io.out, "%s: %s the semaphore's %s (%s)%s\n", name, verb, plural(int64(len(before.Permits)), "permit holder"), describeHolder(before), until)
		case r.Was != nil:
			fmt.Fprintf(io.out, "%s: %s the holder (%s)%s\n", name, verb, describeHolder(before), until)
		default:
			fmt.Fprintf(io.out, "%s: %s the holder%s\n", name, verb, until)
		}
	}
	if *asJSON {
		return writeJSON(io.out, results)
	}
	return nil
}

// warnUnfreed names the primaries of a quorum that ForceUnlock did not
// free although it freed a majority of them: one that gave no report, or
// one that still holds the lock for a minority owner. Such a hold ends
// with its own lease and takes nothing from the next holder, which needs a
// majority of free primaries, but the operator should know it is there.
func warnUnfreed(ctx context.Context, io stdio, lc *locks.Client, name string, addrs []string) {
	after, _ := lc.Inspect(ctx, name)
	for _, s := range after.Servers {
		if s.Server < 1 || s.Server > len(addrs) {
			continue
		}
		switch addr := addrs[s.Server-1]; {
		case s.Err != nil:
			fmt.Fprintf(io.err, "redlua unlock: warning: %s: %s did not answer (%v); a hold there was not removed and ends with its lease\n",
				name, addr, s.Err)
		case !after.Held && s.Info.Held:
			fmt.Fprintf(io.err, "redlua unlock: warning: %s: %s still holds it for owner %s (%v left), a minority no Lock needs\n",
				name, addr, s.Info.Owner, s.Info.TTL.Round(time.Millisecond))
		}
	}
}

// checkNames rejects bad lock names (exit 2) before anything connects.
func checkNames(names []string) error {
	for _, name := range names {
		if err := checkName(name); err != nil {
			return err
		}
	}
	return nil
}

// checkName refuses a name no lock can have, in the CLI's words; locks
// checks the same when the lock is made.
func checkName(name string) error {
	switch {
	case name == "":
		return usageErrorf("NAME is empty; name the resource the lock guards, such as orders:42")
	case strings.ContainsAny(name, "{}"):
		return usageErrorf("NAME %q contains '{' or '}'; redlua adds its own hash tag to the keys, so drop the braces", name)
	}
	return nil
}
