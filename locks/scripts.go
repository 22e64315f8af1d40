package locks

// This file is the one place that knows the lock scripts' contracts: which
// script version each call pins, the order of its KEYS, how its ARGV are
// encoded and what its reply means. Changing a script means: add
// lua/<name>.v<N+1>.lua, record it in lua/scripts.sum (go run ./cmd/luasum
// record lua), and switch the one typed method below to the new version.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// scriptSet holds the pinned script versions a Client runs. A released
// script never changes; a new version is adopted here deliberately.
type scriptSet struct {
	mutexAcquire, mutexRelease, mutexExtend     *registry.Script
	mutexUndo                                   *registry.Script
	rlock, runlock, rextend, wlock, wleave      *registry.Script
	wunlock                                     *registry.Script
	semAcquire, semRelease, semExtend, semLimit *registry.Script
	multiAcquire, forceUnlock, keepQueued       *registry.Script
	semKeepQueued, semUndo, semTake             *registry.Script
	inspect                                     *registry.Script
	holderWrite, holderRead                     *registry.Script
}

// embeddedScripts parses lua.FS once per process: the scripts are immutable.
var embeddedScripts = sync.OnceValues(func() (*scriptSet, error) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		return nil, fmt.Errorf("locks: embedded scripts: %w", err)
	}
	var missing error
	pick := func(id string) *registry.Script {
		s, err := reg.Lookup(id)
		if err != nil && missing == nil {
			missing = fmt.Errorf("locks: embedded scripts: %w", err)
		}
		return s
	}
	set := &scriptSet{
		mutexAcquire: pick("mutex.acquire@14"), mutexRelease: pick("mutex.release@11"),
		mutexExtend: pick("mutex.extend@6"), mutexUndo: pick("mutex.undo@6"),
		rlock: pick("rw.rlock@7"), runlock: pick("rw.runlock@8"), rextend: pick("rw.rextend@4"),
		wlock: pick("rw.lock@7"), wleave: pick("rw.leave@6"), wunlock: pick("rw.unlock@4"),
		semAcquire: pick("sem.acquire@11"), semRelease: pick("sem.release@11"), semUndo: pick("sem.undo@5"), semTake: pick("sem.take@5"),
		semExtend: pick("sem.extend@4"), semLimit: pick("sem.setlimit@8"), semKeepQueued: pick("sem.keepqueued@6"),
		holderWrite: pick("holder.write@1"), holderRead: pick("holder.read@1"),
		multiAcquire: pick("multi.acquire@6"), forceUnlock: pick("lock.forceunlock@4"),
		keepQueued: pick("mutex.keepqueued@6"),
		inspect:    pick("lock.inspect@3"),
	}
	return set, missing
})

// list is every pinned script, in a fixed order.
func (s *scriptSet) list() []*registry.Script {
	return []*registry.Script{
		s.mutexAcquire, s.mutexRelease, s.mutexExtend, s.mutexUndo,
		s.rlock, s.runlock, s.rextend, s.wlock, s.wleave, s.wunlock,
		s.semTake, s.semAcquire, s.semRelease, s.semUndo, s.semExtend, s.semLimit, s.semKeepQueued,
		s.multiAcquire, s.forceUnlock, s.keepQueued,
		s.inspect, s.holderWrite, s.holderRead,
	}
}

// Scripts returns the script versions a Client runs, one per name: what a
// server must hold for a Client's calls to need no NOSCRIPT fallback
// (redlua scripts verify --loaded checks them). Other versions in lua/ are
// kept for the record, not run.
func Scripts() ([]*registry.Script, error) {
	set, err := embeddedScripts()
	if err != nil {
		return nil, err
	}
	return set.list(), nil
}

// outcome is what a release or extend script reports.
type outcome int64

const (
	outcomeRevoked   outcome = -2 // the hold was revoked (a forced unlock within its grace period)
	outcomeExpired   outcome = -1 // no one holds the lock: the lease ran out, or it was released or deleted
	outcomeTaken     outcome = 0  // another owner holds the lock
	outcomeOK        outcome = 1  // released (the lock is free) or extended
	outcomeStillHeld outcome = 2  // released one reentrant hold; others remain
	outcomeHandedOn  outcome = 3  // released and handed to the next waiter
)

func (o outcome) lostCause() string {
	switch o {
	case outcomeTaken:
		return "another owner (or another call of this owner) holds the lock"
	case outcomeRevoked:
		return "forced unlock: an operator revoked the hold"
	}
	return "no one holds the lock (the lease ran out, or an operator or another process released it)"
}

// attempt is the outcome of one acquire script call.
type attempt struct {
	acquired  bool
	token     int64
	wait      time.Duration // when not acquired: how long the wait may last before trying again
	position  int64         // place in the queue, 0 when not queued
	wrongKind string        // another kind of lock holds the name
	limit     int64         // a semaphore's permit count, when not acquired
	serverUs  int64         // when queued: the server's time of the attempt, in µs
}

// refusal says why an attempt that ran without error still gives no lease:
// another kind of lock holds the name, or the acquisition was not
// acknowledged by enough replicas (the caller undoes it).
func (a attempt) refusal(s *settings, replicated bool) error {
	switch {
	case a.wrongKind != "":
		return wrongKind(a.wrongKind)
	case a.acquired && !replicated:
		return notReplicated(s)
	}
	return nil
}

// notReplicated is the refusal of an acquisition that too few replicas
// acknowledged; the caller undoes it.
func notReplicated(s *settings) error {
	return fmt.Errorf("%w within %v (WithReplicas(%d)); the acquisition was undone", ErrNotReplicated, s.replicaTimeout, s.replicas)
}

// wrongKind is the refusal of a name that another kind of lock holds.
func wrongKind(kind string) error { return fmt.Errorf("a %s holds this name: %w", kind, ErrWrongKind) }

// run runs a script on node; with WithReplicas a writing script waits for
// the replicas in the same round trip, and replicated says whether enough
// acknowledged. Acquisitions and renewals go through run; releases do not
// wait for replicas.
func (c *Client) run(ctx context.Context, node Backend, s *settings, script *registry.Script, keys []string, args ...any) (cmd *redis.Cmd, replicated bool, err error) {
	if s.replicas == 0 || script.ReadOnly() {
		cmd = node.Run(ctx, script, keys, args...)
		return cmd, true, cmd.Err()
	}
	rr, ok := node.(replicatedRunner)
	if !ok {
		return nil, false, fmt.Errorf("WithReplicas needs a backend that can send WAIT (%T cannot)", node)
	}
	// WAIT blocks its connection until the timeout, and go-redis reads
	// past a context's deadline unless told otherwise: the wait ends with
	// the caller's context.
	timeout := s.replicaTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = max(min(timeout, time.Until(deadline)), time.Millisecond)
	}
	cmd, acked, err := rr.RunReplicated(ctx, script, s.replicas, timeout, keys, args...)
	return cmd, acked >= s.replicas, err
}

// parseAttempt decodes an acquire script's {1, token, ...} / {0, wait_ms, ...} / {-1, kind}.
func parseAttempt(script *registry.Script, reply []any) (attempt, error) {
	if len(reply) < 2 {
		return attempt{}, fmt.Errorf("unexpected reply %v from %s", reply, script.ID())
	}
	code, _ := reply[0].(int64)
	switch code {
	case 1:
		token, _ := reply[1].(int64)
		return attempt{acquired: true, token: token}, nil
	case -1:
		kind, _ := reply[1].(string)
		return attempt{wrongKind: kind}, nil
	}
	ms, _ := reply[1].(int64)
	a := attempt{wait: max(time.Duration(ms)*time.Millisecond, time.Millisecond)}
	if len(reply) > 2 {
		a.position, _ = reply[2].(int64)
	}
	if len(reply) > 3 {
		a.serverUs, _ = reply[3].(int64)
	}
	return a, nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// acquireWait says how an acquire that finds the lock held waits.
type acquireWait int

const (
	tryOnce     acquireWait = iota // TryLock, MultiLock: neither queue nor ask to be told
	queueWaiter                    // Lock: queue; a release hands the lock over
	watchWaiter                    // quorum Lock: do not queue, but ask for "released"
)

// mutexAttempt names one Mutex acquisition call (see newAttempt) that
// waits as wait says. mutex.acquire@14 reads the call's mode, which only its
// slow path needs, from the attempt id: "<id>/<waiter_ttl_ms>/<flags>",
// flags of r (reentrant), f (fair), w (told of releases without queueing)
// or - (none). Each argument of a script call costs the server work even
// when the script does not read it.
func mutexAttempt(s *settings, wait acquireWait) string {
	waiterTTL := int64(0)
	if wait == queueWaiter {
		waiterTTL = s.waiterTTL.Milliseconds()
	}
	flags := make([]byte, 0, 3)
	if s.reentrant {
		flags = append(flags, 'r')
	}
	if s.fair {
		flags = append(flags, 'f')
	}
	if wait == watchWaiter {
		flags = append(flags, 'w')
	}
	if len(flags) == 0 {
		flags = append(flags, '-')
	}
	return newAttempt() + "/" + strconv.FormatInt(waiterTTL, 10) + "/" + string(flags)
}

// attemptID is the id part of an attempt: a Mutex attempt without its
// mode ("<id>/<waiter_ttl_ms>/<flags>", see mutexAttempt), which is what a
// hold records from mutex.acquire@14 on. Other attempts are ids already.
func attemptID(attempt string) string {
	id, _, _ := strings.Cut(attempt, "/")
	return id
}

// mutexMeta is the metadata a Mutex's hold records: empty for the
// placeholder "~" (the holder record of the client id in the hold), so
// that with the default options the hold record is 64 bytes and the lock's
// hash stays a listpack (docs/layout.md).
func mutexMeta(meta string) string {
	if meta == holderPlaceholder {
		return ""
	}
	return meta
}

// mutexAcquire runs mutex.acquire@14 (KEYS lock, queue) for the call
// attempt_, from mutexAttempt; meta is the hold's metadata (the caller
// keeps its holder record first, Client.keepHolderRecord, as for every
// acquire below). The script replies with the fencing token alone when the
// caller holds the lock, and with a table otherwise.
func (c *Client) mutexAcquire(ctx context.Context, node Backend, s *settings, k keys, owner, attempt_, meta string) (attempt, bool, error) {
	// The hold record's end, "client \t id \t owner \t meta", goes as one
	// argument that the script's fast path stores as it is (owner tokens
	// hold no tab: WithOwner refuses one; meta is empty or JSON). It holds
	// the attempt's bare id; the mode goes in "g:<attempt>", read by the
	// slow path only.
	holder := c.id + "\t" + attemptID(attempt_) + "\t" + owner + "\t" + mutexMeta(meta)
	if c.scripts.mutexAcquire.Version < 14 {
		// A version before 14 (which a rolling upgrade's test runs as the
		// previous release would) takes the whole attempt and "~".
		holder = c.id + "\t" + attempt_ + "\t" + owner + "\t" + meta
	}
	cmd, replicated, err := c.run(ctx, node, s, c.scripts.mutexAcquire,
		[]string{k.lock, k.queue},
		s.ttl.Milliseconds(), "g:"+attempt_, holder)
	if err != nil {
		return attempt{}, false, err
	}
	if token, ok := cmd.Val().(int64); ok {
		return attempt{acquired: true, token: token}, replicated, nil
	}
	reply, err := cmd.Slice()
	if err != nil {
		return attempt{}, false, err
	}
	a, err := parseAttempt(c.scripts.mutexAcquire, reply)
	return a, replicated, err
}

// mutexRelease drops a Mutex hold (RWMutex write holds use writeRelease).
// With attempt_ "" it is an Unlock (mutex.release@11): leaseAttempt is the
// attempt that took the hold it drops ("" for any hold of the owner: a
// reentrant owner). With an attempt id it undoes an acquisition whose
// caller gave up (mutex.undo@6): the server refuses that attempt from then
// on and drops the hold only if that attempt took it.
func (c *Client) mutexRelease(ctx context.Context, node Backend, s *settings, k keys, owner, attempt_, leaseAttempt string) (outcome, error) {
	// No WAIT: a release that a failover loses only leaves a lease that
	// expires; the replicas get it with the next write anyway.
	var n int64
	var err error
	if attempt_ == "" {
		// The hold: "\t<id>\t<owner>\t" for the one that attempt took,
		// by the attempt's bare id as the hold records it ("\t\t<owner>\t":
		// any of the owner's holds). PUBLISH is the script's default: an
		// argument left out costs nothing.
		hold := "\t" + attemptID(leaseAttempt) + "\t" + owner + "\t"
		if c.publish == "PUBLISH" {
			n, err = node.Run(ctx, c.scripts.mutexRelease, []string{k.lock, k.queue}, hold).Int64()
		} else {
			n, err = node.Run(ctx, c.scripts.mutexRelease, []string{k.lock, k.queue}, hold, c.publish).Int64()
		}
	} else {
		n, err = node.Run(ctx, c.scripts.mutexUndo, []string{k.lock, k.queue, k.gone},
			owner, attempt_, s.goneTTL().Milliseconds(), c.publish).Int64()
	}
	return outcome(n), err
}

// mutexExtend runs mutex.extend@6 (also the write hold of an RWMutex); leaseAttempt as for mutexRelease,
// sent as its bare id.
// A revoked hold (a forced unlock's grace period) answers outcomeRevoked.
func (c *Client) mutexExtend(ctx context.Context, node Backend, s *settings, k keys, owner, leaseAttempt string, ttl time.Duration) (outcome, bool, error) {
	cmd, replicated, err := c.run(ctx, node, s, c.scripts.mutexExtend, []string{k.lock, k.queue}, owner, ttl.Milliseconds(), attemptID(leaseAttempt))
	if err != nil {
		return 0, false, err
	}
	n, err := cmd.Int64()
	return outcome(n), replicated, err
}

// The RWMutex scripts (rw.rlock@7, rw.lock@7, rw.runlock@8, rw.unlock@4,
// rw.rextend@4, rw.leave@6) keep a lock in its hash, k.lock, and its
// index, k.rwIndex (docs/layout.md): their KEYS, by rwKeys. A lone reader
// needs only the hash. They name the lock's channels after it (k.channel,
// k.grantPrefix).

// rwKeys are the KEYS of the RWMutex script s: the hash and the index,
// or the hash alone for a version before the index (rw.rlock@4 and @5,
// which a rolling upgrade may still run).
func rwKeys(s *registry.Script, k keys) []string {
	if len(s.Keys) == 1 {
		return []string{k.lock}
	}
	return []string{k.lock, k.rwIndex}
}

// rwSpec is the spec argument of rw.rlock@7 and rw.lock@7: four flag
// characters, each "-" when off: writer preference ("w"), the caller waits
// when refused ("q": a reader keeps the lock's q field, so that releases
// publish), a reentrant owner ("r": its calls share one record) and
// sharded pub/sub ("s": wake-ups go by SPUBLISH); for a writer
// (waiterTTL >= 0) the waiter TTL in ms as eight digits; then the tail of
// the new record: client, attempt and, for a writer, the owner token, then
// meta, separated by tabs.
func (c *Client) rwSpec(s *settings, wait bool, waiterTTL int64, attempt_, token, meta string) string {
	var b strings.Builder
	b.Grow(12 + len(c.id) + len(attempt_) + len(token) + len(meta) + 3)
	flag := func(on bool, f byte) {
		if on {
			b.WriteByte(f)
		} else {
			b.WriteByte('-')
		}
	}
	flag(!s.preferReads, 'w')
	flag(wait, 'q')
	flag(s.reentrant, 'r')
	flag(c.publish == "SPUBLISH", 's')
	if waiterTTL >= 0 {
		fmt.Fprintf(&b, "%08d", waiterTTL)
	}
	b.WriteString(c.id)
	b.WriteByte('\t')
	b.WriteString(attempt_)
	b.WriteByte('\t')
	if waiterTTL >= 0 {
		b.WriteString(token)
		b.WriteByte('\t')
	}
	b.WriteString(meta)
	return b.String()
}

// readAcquire runs rw.rlock@7; attempt_ is the id of the calling RLock,
// which the server refuses once the call gave up and undid it (rwLeave).
// wait says the caller waits for "released" when refused; meta is the
// holder metadata recorded with the read hold.
func (c *Client) readAcquire(ctx context.Context, s *settings, k keys, owner, attempt_, meta string, wait bool) (attempt, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.rlock, rwKeys(c.scripts.rlock, k),
		"r:"+owner, s.ttl.Milliseconds(), "g:"+attempt_, c.rwSpec(s, wait, -1, attempt_, "", meta))
	return c.decodeTokenAttempt(c.scripts.rlock, cmd, replicated, err)
}

// writeAcquire runs rw.lock@7; attempt_ as for readAcquire. A writer that
// must wait (wait) is recorded with this Client's id, so that a release
// wakes it alone on the Client's grant channel of the lock ("wake
// <owner>"); a single attempt (TryLock) records nothing.
func (c *Client) writeAcquire(ctx context.Context, s *settings, k keys, owner, attempt_, meta string, wait bool) (attempt, bool, error) {
	waiterTTL := int64(0)
	if wait {
		waiterTTL = s.waiterTTL.Milliseconds()
	}
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.wlock, rwKeys(c.scripts.wlock, k),
		owner, s.ttl.Milliseconds(), "g:"+attempt_, c.rwSpec(s, wait, waiterTTL, attempt_, ownerToken(owner), meta))
	return c.decodeTokenAttempt(c.scripts.wlock, cmd, replicated, err)
}

// writeRelease runs rw.unlock@4: an Unlock of the write hold. A freed hold
// wakes the oldest waiting writer alone, and the waiting readers with
// "released", when the lock's q says someone waits. reads says the owner
// may hold reads too (a reentrant owner): the script keeps them.
func (c *Client) writeRelease(ctx context.Context, k keys, owner string, reads bool) (outcome, error) {
	// No WAIT, as for mutexRelease. A reentrant owner's read holds may
	// outlast its write hold: the script looks at its record too.
	var n int64
	var err error
	if reads {
		n, err = c.backend().Run(ctx, c.scripts.wunlock, rwKeys(c.scripts.wunlock, k), owner, "r:"+owner).Int64()
	} else {
		n, err = c.backend().Run(ctx, c.scripts.wunlock, rwKeys(c.scripts.wunlock, k), owner).Int64()
	}
	return outcome(n), err
}

// decodeTokenAttempt decodes an acquire script that replies with the
// fencing token alone (an integer) when it grants, and a table otherwise.
func (c *Client) decodeTokenAttempt(script *registry.Script, cmd *redis.Cmd, replicated bool, err error) (attempt, bool, error) {
	if err != nil {
		return attempt{}, false, err
	}
	if token, ok := cmd.Val().(int64); ok {
		return attempt{acquired: true, token: token}, replicated, nil
	}
	return c.decodeAttempt(script, cmd, replicated, nil)
}

func (c *Client) decodeAttempt(script *registry.Script, cmd *redis.Cmd, replicated bool, err error) (attempt, bool, error) {
	if err != nil {
		return attempt{}, false, err
	}
	reply, err := cmd.Slice()
	if err != nil {
		return attempt{}, false, err
	}
	a, err := parseAttempt(script, reply)
	return a, replicated, err
}

// rwLeave runs rw.leave@6, the undo of an RLock (write false) or Lock
// (write true) that gave up: the server records the attempt as given up
// (refused if it arrives later), drops one hold of owner if that attempt
// took it (none when owner is "": a reentrant owner's holds cannot be told
// apart), takes a writer out of the waiting writers, and wakes whoever
// waits for what that freed.
func (c *Client) rwLeave(ctx context.Context, s *settings, k keys, owner, attempt_ string, write bool) error {
	hold := "r"
	if write {
		hold = "w"
	}
	return c.backend().Run(ctx, c.scripts.wleave, rwKeys(c.scripts.wleave, k), owner, attempt_, s.goneTTL().Milliseconds(), hold, c.publish).Err()
}

// readRelease runs rw.runlock@8: an RUnlock. The last live reader out
// wakes the oldest waiting writer alone, or, when none waits, the readers,
// when the lock's q says someone waits.
func (c *Client) readRelease(ctx context.Context, s *settings, k keys, owner string) (outcome, error) {
	n, err := c.backend().Run(ctx, c.scripts.runlock, rwKeys(c.scripts.runlock, k), "r:"+owner).Int64()
	return outcome(n), err
}

// rwExtend runs rw.rextend@4 on a read hold (write false) or the write
// hold of owner; outcomeRevoked when an operator revoked it.
func (c *Client) rwExtend(ctx context.Context, s *settings, k keys, owner string, write bool, ttl time.Duration) (outcome, bool, error) {
	hold := "r"
	if write {
		hold = "w"
	}
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.rextend, rwKeys(c.scripts.rextend, k), owner, ttl.Milliseconds(), hold)
	if err != nil {
		return 0, false, err
	}
	n, err := cmd.Int64()
	return outcome(n), replicated, err
}

// semKeys are the KEYS of the sem scripts: the lock hash, which holds the
// holders' records and the queued calls' entries (docs/layout.md), the
// queue's order, and the index of the holders' records by time (semKeysOf
// picks a script's). A queued call hears its grant on k.grantPrefix + its
// Client's id, the channel the scripts name after the lock hash.
func semKeys(k keys) []string { return []string{k.lock, k.semQueue, k.semIndex} }

// semKeysOf are the KEYS of the sem script s: semKeys(k), or for sem.take
// and sem.extend the lock hash and the index; for a version before the
// index (which a rolling upgrade may still run: sem.take@3, sem.acquire@9,
// ...) the same without the index.
func semKeysOf(s *registry.Script, k keys) []string {
	all := semKeys(k)
	switch len(s.Keys) {
	case 1:
		return all[:1]
	case 2:
		if s.Keys[1] == "index" {
			return []string{k.lock, k.semIndex}
		}
		return all[:2]
	}
	return all
}

// semAcquire runs sem.acquire@11, or first sem.take@5 when fast (the first
// attempt of a call): the one-key fast path, which replies 0 when the call
// needs sem.acquire (waiters, a claim, a recount, no free permits). The
// owner token is the Acquire call's own, so it doubles as the attempt id
// that semUndo records. meta is the holder's metadata (Inspect shows it).
// waiterTTL 0 does not queue (TryAcquire). On a wait, a.limit is the
// permit count the server applied, a.position the call's place in the
// queue (0: not queued) and a.serverUs the server's time then. The
// scripts' work does not depend on n.
func (c *Client) semAcquire(ctx context.Context, s *settings, k keys, owner, meta string, n int, permits int64, waiterTTL time.Duration, fast bool) (attempt, bool, error) {
	// The record's attempt field is "-": an Acquire's owner token (one per
	// call) already names the call, in the field's name, and repeating its
	// 15 characters would take the lone holder's hash a size class up.
	holder := c.id + "\t-\t" + meta
	if fast {
		cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.semTake, semKeysOf(c.scripts.semTake, k), owner, strconv.Itoa(n)+" "+strconv.FormatInt(s.ttl.Milliseconds(), 10)+" "+strconv.FormatInt(permits, 10), holder)
		if err != nil {
			return attempt{}, false, err
		}
		if token, ok := cmd.Val().(int64); ok && token != 0 {
			return attempt{acquired: true, token: token}, replicated, nil
		} else if !ok {
			return c.decodeAttempt(c.scripts.semTake, cmd, replicated, nil) // given up, or another kind
		}
	}
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.semAcquire, semKeysOf(c.scripts.semAcquire, k),
		owner, n, s.ttl.Milliseconds(), permits, holder, strconv.FormatInt(waiterTTL.Milliseconds(), 10)+" "+c.publish)
	if err != nil {
		return attempt{}, false, err
	}
	if token, ok := cmd.Val().(int64); ok {
		return attempt{acquired: true, token: token}, replicated, nil
	}
	a, replicated, err := c.decodeAttempt(c.scripts.semAcquire, cmd, replicated, nil)
	if err == nil && !a.acquired && a.wrongKind == "" {
		// sem.acquire's reply on a wait is {0, hint, limit, position, server_us}.
		a.limit, a.position, a.serverUs = a.position, a.serverUs, 0
		if reply, _ := cmd.Slice(); len(reply) > 4 {
			a.serverUs, _ = reply[4].(int64)
		}
	}
	return a, replicated, err
}

// semRelease runs sem.release@11: it reports whether the call's record was
// still there (whether its time had passed, the lease's own deadline
// tells). The freed permits go to the queued calls that now fit, handed
// over ("grant <token> <owner> <owner>").
func (c *Client) semRelease(ctx context.Context, k keys, owner string) (bool, error) {
	held, err := c.backend().Run(ctx, c.scripts.semRelease, semKeysOf(c.scripts.semRelease, k), owner).Int64()
	return held == 1, err
}

// semUndo runs sem.undo@5 for an Acquire call that gave up: the server
// records the call's attempt (its owner token) as given up first, takes it
// out of the queue, and gives back permits it may have taken.
func (c *Client) semUndo(ctx context.Context, s *settings, k keys, owner string) error {
	return c.backend().Run(ctx, c.scripts.semUndo, semKeysOf(c.scripts.semUndo, k), owner, s.goneTTL().Milliseconds()).Err()
}

// semKeepQueued runs sem.keepqueued@6 for this Client's queued Acquire
// calls (owners) of one semaphore: queued[i] is false when owners[i] is no
// longer queued.
func (c *Client) semKeepQueued(ctx context.Context, node Backend, k keys, owners []string) (queued []bool, err error) {
	args := make([]any, 0, len(owners))
	for _, o := range owners {
		args = append(args, o)
	}
	reply, err := node.Run(ctx, c.scripts.semKeepQueued, semKeysOf(c.scripts.semKeepQueued, k), args...).Slice()
	if err != nil {
		return nil, err
	}
	if len(reply) != len(owners) {
		return nil, fmt.Errorf("unexpected reply %v from %s", reply, c.scripts.semKeepQueued.ID())
	}
	queued = make([]bool, len(owners))
	for i := range owners {
		queued[i] = reply[i] == int64(1)
	}
	return queued, nil
}

// semExtend runs sem.extend@4: outcomeOK, outcomeExpired, or outcomeRevoked.
func (c *Client) semExtend(ctx context.Context, s *settings, k keys, owner string, ttl time.Duration) (outcome, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.semExtend, semKeysOf(c.scripts.semExtend, k), owner, ttl.Milliseconds())
	if err != nil {
		return 0, false, err
	}
	v, err := cmd.Int64()
	return outcome(v), replicated, err
}

func (c *Client) semSetLimit(ctx context.Context, s *settings, k keys, permits int) error {
	_, _, err := c.run(ctx, c.backend(), s, c.scripts.semLimit, semKeysOf(c.scripts.semLimit, k), permits)
	if isNil(err) {
		return nil // no earlier count
	}
	return err
}

// multiOutcome is what multi.acquire@6 reports for one slot group.
type multiOutcome struct {
	tokens    []int64 // when taken: one per lock, in the group's order
	blocked   int     // otherwise: the index of the first lock held or held by another kind, or -1
	wrongKind string  // when blocked by another kind of lock: that kind
}

// multiAcquire runs multi.acquire@6 on one slot group: all or none. The
// attempt is refused once the group's first lock records it as given up
// (mutexRelease with the attempt, on that lock, records it).
// With WithReplicas, replicated says whether enough replicas acknowledged.
func (c *Client) multiAcquire(ctx context.Context, s *settings, group []keys, owner, attempt_, meta string) (multiOutcome, bool, error) {
	script := c.scripts.multiAcquire
	ks := make([]string, 0, len(group))
	for _, k := range group {
		ks = append(ks, k.lock)
	}
	cmd, replicated, err := c.run(ctx, c.backend(), s, script, ks, owner, s.ttl.Milliseconds(), attempt_, c.id, mutexMeta(meta))
	if err != nil {
		return multiOutcome{}, false, err
	}
	reply, err := cmd.Slice()
	if err != nil {
		return multiOutcome{}, false, err
	}
	if len(reply) == 0 {
		return multiOutcome{}, false, fmt.Errorf("unexpected empty reply from %s", script.ID())
	}
	if reply[0] != int64(1) {
		if len(reply) < 3 {
			return multiOutcome{}, false, fmt.Errorf("unexpected reply %v from %s", reply, script.ID())
		}
		idx, _ := reply[1].(int64)
		if idx < 1 || int(idx) > len(group) {
			// {0, 0, 0}: an attempt already given up on; no live call asks.
			return multiOutcome{}, false, fmt.Errorf("%s refused attempt %s as given up (reply %v)", script.ID(), attempt_, reply)
		}
		if reply[0] == int64(-1) {
			kind, _ := reply[2].(string)
			return multiOutcome{blocked: int(idx) - 1, wrongKind: kind}, replicated, nil
		}
		return multiOutcome{blocked: int(idx) - 1}, replicated, nil
	}
	out := multiOutcome{blocked: -1}
	for _, v := range reply[1:] {
		t, _ := v.(int64)
		out.tokens = append(out.tokens, t)
	}
	if len(out.tokens) != len(group) {
		return multiOutcome{}, false, fmt.Errorf("unexpected reply %v from %s", reply, script.ID())
	}
	return out, replicated, nil
}

// keepQueued runs mutex.keepqueued@6: it moves the waiter deadlines of
// owners (at most mutexKeepBatch) forward in one call, and q and the keys' expiry with them. held says a live hold is on the
// name; queued[i] says owners[i] was still queued.
func (c *Client) keepQueued(ctx context.Context, node Backend, k keys, owners []string) (held bool, queued []bool, err error) {
	args := make([]any, len(owners))
	for i, o := range owners {
		args[i] = o
	}
	reply, err := node.Run(ctx, c.scripts.keepQueued, []string{k.lock, k.queue}, args...).Slice()
	if err != nil {
		return false, nil, err
	}
	if len(reply) != len(owners)+2 {
		return false, nil, fmt.Errorf("unexpected reply %v from %s", reply, c.scripts.keepQueued.ID())
	}
	queued = make([]bool, len(owners))
	for i := range owners {
		queued[i] = reply[i+2] == int64(1)
	}
	return reply[0] == int64(1), queued, nil
}
