package locks

// This file is the one place that knows the lock scripts' contracts: which
// script version each call pins, the order of its KEYS, how its ARGV are
// encoded and what its reply means. Changing a script means: add
// lua/<name>.v<N+1>.lua, record it in lua/scripts.sum (go run ./cmd/luasum
// record lua), and switch the one typed method below to the new version.

import (
	"context"
	"fmt"
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
	rlock, runlock, rextend, wlock, wleave      *registry.Script
	wunlock                                     *registry.Script
	semAcquire, semRelease, semExtend, semLimit *registry.Script
	multiAcquire, forceUnlock, keepQueued       *registry.Script
	semKeepQueued                               *registry.Script
	inspect                                     *registry.Script
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
		mutexAcquire: pick("mutex.acquire@6"), mutexRelease: pick("mutex.release@5"),
		mutexExtend: pick("mutex.extend@2"),
		rlock:       pick("rw.rlock@3"), runlock: pick("rw.runlock@4"), rextend: pick("rw.rextend@1"),
		wlock: pick("rw.lock@4"), wleave: pick("rw.leave@3"), wunlock: pick("rw.unlock@1"),
		semAcquire: pick("sem.acquire@6"), semRelease: pick("sem.release@5"),
		semExtend: pick("sem.extend@1"), semLimit: pick("sem.setlimit@3"), semKeepQueued: pick("sem.keepqueued@1"),
		multiAcquire: pick("multi.acquire@3"), forceUnlock: pick("lock.forceunlock@2"),
		keepQueued: pick("mutex.keepqueued@2"),
		inspect:    pick("lock.inspect@2"),
	}
	return set, missing
})

// list is every pinned script, in a fixed order.
func (s *scriptSet) list() []*registry.Script {
	return []*registry.Script{
		s.mutexAcquire, s.mutexRelease, s.mutexExtend,
		s.rlock, s.runlock, s.rextend, s.wlock, s.wleave, s.wunlock,
		s.semAcquire, s.semRelease, s.semExtend, s.semLimit, s.semKeepQueued,
		s.multiAcquire, s.forceUnlock, s.keepQueued,
		s.inspect,
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
	outcomeExpired   outcome = -1 // no one holds the lock: the lease ran out, or it was released or deleted
	outcomeTaken     outcome = 0  // another owner holds the lock
	outcomeOK        outcome = 1  // released (the lock is free) or extended
	outcomeStillHeld outcome = 2  // released one reentrant hold; others remain
	outcomeHandedOn  outcome = 3  // released and handed to the next waiter
)

func (o outcome) lostCause() string {
	if o == outcomeTaken {
		return "another owner (or another call of this owner) holds the lock"
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

// mutexAcquire runs mutex.acquire@6. queue false makes it a single attempt
// that never queues (TryLock, quorum nodes). The script replies with the
// fencing token alone when the caller holds the lock, and with a table
// otherwise.
func (c *Client) mutexAcquire(ctx context.Context, node Backend, s *settings, k keys, owner, attempt_, meta string, queue bool) (attempt, bool, error) {
	waiterTTL := int64(0)
	if queue {
		waiterTTL = s.waiterTTL.Milliseconds()
	}
	cmd, replicated, err := c.run(ctx, node, s, c.scripts.mutexAcquire,
		[]string{k.lock, k.queue, k.waiters, k.readers, k.permits, k.gone},
		owner, s.ttl.Milliseconds(), boolArg(s.reentrant), meta, waiterTTL, boolArg(s.fair), c.id, attempt_)
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

// mutexRelease runs mutex.release@5 (RWMutex write holds use writeRelease): an Unlock (attempt "") or,
// with an attempt id, the undoing of an acquisition whose caller gave up. leaseAttempt is the attempt that
// took the hold an Unlock drops ("" for any hold of the owner: a reentrant owner).
func (c *Client) mutexRelease(ctx context.Context, node Backend, s *settings, k keys, owner, attempt_, leaseAttempt string) (outcome, error) {
	goneTTL := s.goneTTL()
	// No WAIT: a release that a failover loses only leaves a lease that
	// expires; the replicas get it with the next write anyway.
	n, err := node.Run(ctx, c.scripts.mutexRelease,
		[]string{k.lock, k.queue, k.waiters, k.gone},
		owner, k.channel, k.grantPrefix, c.publish, attempt_, goneTTL.Milliseconds(), leaseAttempt).Int64()
	return outcome(n), err
}

// mutexExtend runs mutex.extend@2 (also the write hold of an RWMutex); leaseAttempt as for mutexRelease.
func (c *Client) mutexExtend(ctx context.Context, node Backend, s *settings, k keys, owner, leaseAttempt string, ttl time.Duration) (outcome, bool, error) {
	cmd, replicated, err := c.run(ctx, node, s, c.scripts.mutexExtend, []string{k.lock}, owner, ttl.Milliseconds(), leaseAttempt)
	if err != nil {
		return 0, false, err
	}
	n, err := cmd.Int64()
	return outcome(n), replicated, err
}

// rwKeys are the KEYS of rw.rlock@3; rw.lock@4 adds k.writerClients.
func rwKeys(k keys) []string {
	return []string{k.lock, k.readers, k.holds, k.writersWaiting, k.fence, k.permits, k.gone}
}

// readAcquire runs rw.rlock@3; attempt_ is the id of the calling RLock,
// which the server refuses once the call gave up and undid it (readRelease).
func (c *Client) readAcquire(ctx context.Context, s *settings, k keys, owner, attempt_ string) (attempt, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.rlock, rwKeys(k), owner, s.ttl.Milliseconds(), boolArg(!s.preferReads), attempt_)
	return c.decodeAttempt(c.scripts.rlock, cmd, replicated, err)
}

// writeAcquire runs rw.lock@4; attempt_ as for readAcquire (the undo is
// writeRelease with the attempt). A writer that must wait is recorded with
// this Client's id, so that a release wakes it alone on the Client's grant
// channel of the lock ("wake <owner>").
func (c *Client) writeAcquire(ctx context.Context, s *settings, k keys, owner, attempt_, meta string) (attempt, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.wlock,
		[]string{k.lock, k.readers, k.holds, k.writersWaiting, k.fence, k.permits, k.gone, k.writerClients},
		owner, s.ttl.Milliseconds(), s.waiterTTL.Milliseconds(), meta, attempt_, c.id)
	return c.decodeAttempt(c.scripts.wlock, cmd, replicated, err)
}

// writeRelease runs rw.unlock@1: an Unlock of the write hold (attempt "")
// or, with an attempt id, the undoing of a Lock that gave up (the server
// records the attempt as given up and drops the hold only if that attempt
// took it). A freed hold wakes the oldest waiting writer alone, and the
// waiting readers with "released".
func (c *Client) writeRelease(ctx context.Context, s *settings, k keys, owner, attempt_ string) (outcome, error) {
	// No WAIT, as for mutexRelease.
	n, err := c.backend().Run(ctx, c.scripts.wunlock,
		[]string{k.lock, k.gone, k.writersWaiting, k.writerClients},
		owner, k.channel, k.grantPrefix, c.publish, attempt_, s.goneTTL().Milliseconds()).Int64()
	return outcome(n), err
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

// writeLeave runs rw.leave@3: a writer that stopped waiting holds no reader
// back, and its Client is no longer one to wake.
func (c *Client) writeLeave(ctx context.Context, s *settings, k keys, owner string) error {
	return c.backend().Run(ctx, c.scripts.wleave, []string{k.writersWaiting, k.writerClients}, owner, k.channel, c.publish).Err()
}

// readRelease runs rw.runlock@4: an RUnlock (attempt "") or, with an attempt
// id, the undoing of an RLock that gave up: the server records the attempt
// as given up and drops one read hold of owner (none when owner is "": a
// reentrant owner's holds cannot be told apart). The last live reader out
// wakes the oldest waiting writer alone, or, when none waits, the readers.
func (c *Client) readRelease(ctx context.Context, s *settings, k keys, owner, attempt_ string) (outcome, error) {
	n, err := c.backend().Run(ctx, c.scripts.runlock, []string{k.readers, k.holds, k.gone, k.writersWaiting, k.writerClients},
		owner, k.channel, c.publish, attempt_, s.goneTTL().Milliseconds(), k.grantPrefix).Int64()
	return outcome(n), err
}

func (c *Client) readExtend(ctx context.Context, s *settings, k keys, owner string, ttl time.Duration) (outcome, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.rextend, []string{k.readers, k.holds}, owner, ttl.Milliseconds())
	if err != nil {
		return 0, false, err
	}
	n, err := cmd.Int64()
	return outcome(n), replicated, err
}

// semAcquire runs sem.acquire@6. The owner token is the Acquire call's own,
// so it doubles as the attempt id that semRelease records when undoing.
// waiterTTL 0 does not queue (TryAcquire). On a wait, a.limit is the
// permit count the server applied, a.position the call's place in the
// queue (0: not queued) and a.serverUs the server's time then.
func (c *Client) semAcquire(ctx context.Context, s *settings, k keys, owner string, n int, permits int64, waiterTTL time.Duration) (attempt, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.semAcquire,
		[]string{k.permits, k.limit, k.fence, k.lock, k.readers, k.gone, k.semQueue, k.semWaiters, k.semOffers},
		owner, n, s.ttl.Milliseconds(), permits, owner, waiterTTL.Milliseconds(), c.id, k.grantPrefix, c.publish)
	a, replicated, err := c.decodeAttempt(c.scripts.semAcquire, cmd, replicated, err)
	if err == nil && !a.acquired && a.wrongKind == "" {
		// sem.acquire's reply on a wait is {0, hint, limit, position, server_us}.
		a.limit, a.position, a.serverUs = a.position, a.serverUs, 0
		if reply, _ := cmd.Slice(); len(reply) > 4 {
			a.serverUs, _ = reply[4].(int64)
		}
	}
	return a, replicated, err
}

// semRelease runs sem.release@5; it reports how many of the n permits were
// still held (the others had expired). With an attempt id it undoes an
// Acquire that gave up: the server records the attempt as given up first
// and takes the call out of the queue. Either way the freed permits go to
// the queued calls that now fit: handed over ("grant <token> <owner>
// <owner>") to those that left an offer, woken otherwise.
func (c *Client) semRelease(ctx context.Context, s *settings, k keys, owner string, n int, attempt_ string) (int64, error) {
	return c.backend().Run(ctx, c.scripts.semRelease, []string{k.permits, k.gone, k.limit, k.semQueue, k.semWaiters, k.fence, k.semOffers},
		owner, n, k.channel, c.publish, attempt_, s.goneTTL().Milliseconds(), k.grantPrefix).Int64()
}

// semKeepQueued runs sem.keepqueued@1 for this Client's queued Acquire
// calls (owners) of one semaphore: queued[i] is false when owners[i] is no
// longer queued.
func (c *Client) semKeepQueued(ctx context.Context, node Backend, k keys, owners []string) (queued []bool, err error) {
	args := make([]any, 0, len(owners)+2)
	args = append(args, c.publish, k.grantPrefix)
	for _, o := range owners {
		args = append(args, o)
	}
	reply, err := node.Run(ctx, c.scripts.semKeepQueued, []string{k.permits, k.limit, k.semQueue, k.semWaiters}, args...).Slice()
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

func (c *Client) semExtend(ctx context.Context, s *settings, k keys, owner string, n int, ttl time.Duration) (outcome, bool, error) {
	cmd, replicated, err := c.run(ctx, c.backend(), s, c.scripts.semExtend, []string{k.permits}, owner, n, ttl.Milliseconds())
	if err != nil {
		return 0, false, err
	}
	v, err := cmd.Int64()
	return outcome(v), replicated, err
}

func (c *Client) semSetLimit(ctx context.Context, s *settings, k keys, permits int) error {
	_, _, err := c.run(ctx, c.backend(), s, c.scripts.semLimit, []string{k.limit, k.permits, k.semQueue, k.semWaiters},
		permits, k.channel, c.publish, k.grantPrefix)
	if isNil(err) {
		return nil // no earlier count
	}
	return err
}

// multiOutcome is what multi.acquire@3 reports for one slot group.
type multiOutcome struct {
	tokens    []int64 // when taken: one per lock, in the group's order
	blocked   int     // otherwise: the index of the first lock held or held by another kind, or -1
	wrongKind string  // when blocked by another kind of lock: that kind
}

// multiAcquire runs multi.acquire@3 on one slot group: all or none. The
// attempt is refused once it is recorded in the gone hash of the group's
// first lock (mutexRelease with the attempt, on that lock, records it).
// With WithReplicas, replicated says whether enough replicas acknowledged.
func (c *Client) multiAcquire(ctx context.Context, s *settings, group []keys, owner, attempt_, meta string) (multiOutcome, bool, error) {
	script := c.scripts.multiAcquire
	ks := make([]string, 0, 1+3*len(group))
	ks = append(ks, group[0].gone)
	for _, k := range group {
		ks = append(ks, k.lock, k.readers, k.permits)
	}
	cmd, replicated, err := c.run(ctx, c.backend(), s, script, ks, owner, s.ttl.Milliseconds(), meta, attempt_)
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

// keepQueued runs mutex.keepqueued@2: it moves the waiter deadlines of
// owners forward in one call, and the queue keys' expiry with them. held says the lock has an owner; queued[i]
// says owners[i] was still queued.
func (c *Client) keepQueued(ctx context.Context, node Backend, k keys, owners []string) (held bool, queued []bool, err error) {
	args := make([]any, len(owners))
	for i, o := range owners {
		args[i] = o
	}
	reply, err := node.Run(ctx, c.scripts.keepQueued, []string{k.lock, k.queue, k.waiters}, args...).Slice()
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
