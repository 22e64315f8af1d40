// Package locks provides distributed locks on Redis, built only on the
// versioned scripts in redlua's lua/ directory: Mutex (plain, reentrant,
// fair, or a Redlock quorum), RWMutex, Semaphore and MultiLock.
//
// A Client runs the scripts through a Backend: New wraps any go-redis
// UniversalClient, NewWithBackend takes a simulate.Server for offline tests
// with a virtual clock (WithClock), and NewQuorum spreads each lock over
// several independent primaries. Lock and TryLock return a Lease, the proof
// of ownership:
//
//	lc, err := locks.New(client, locks.WithTTL(30*time.Second))
//	m, err := lc.Mutex("invoice:42", locks.WithWatchdog(locks.DefaultRenewFraction))
//	lease, err := m.Lock(ctx)          // waits in line; errors.Is(err, ctx.Err()) works
//	defer lease.Unlock(ctx)            // releases even when ctx is cancelled first
//	work, stop := lease.Context(ctx)   // cancelled, with ErrLockLost as cause, if the lease is lost
//	defer stop()
//	store.Write(work, data, lease.Token())
//
// or, scoped, with the release's error in the result:
//
//	err = m.Do(ctx, func(work context.Context, lease *locks.Lease) error {
//		return store.Write(work, data, lease.Token())
//	})
//
// Unlock is cleanup: it keeps ctx's values but not its cancellation, and
// waits at most WithReleaseTimeout (DefaultReleaseTimeout, 5s), so a
// deferred Unlock in a request handler releases the lock even when the
// request was cancelled first. An Unlock that could not release returns
// ErrNotReleased, which also matches ErrLockLost.
//
// # Leases
//
//   - Ownership is a random token, not a goroutine: a Lease can be marshalled
//     and released or extended by another process (Client.Resume). Each Lock
//     call is its own holder, also when calls share a token (WithOwner): a
//     call that gave up, or whose lease ran out, neither releases nor renews
//     another call's hold.
//   - The lease expires on the server after its TTL unless extended, by hand
//     (Lease.Extend) or by the watchdog (WithWatchdog), which stops before
//     Unlock releases the lock.
//   - A lease has a local deadline: the moment the acquiring call was sent,
//     plus the TTL, minus a drift margin, moved only by confirmed renewals.
//     Err, Done and Context look at it on every call, so a process resumed
//     after a pause learns at its first look that the lease is lost.
//   - Every acquisition gets a fencing token (Lease.Token) that grows strictly
//     per lock name. Tokens come from the server's clock, so they keep growing
//     after a restart that lost data or a failover to a lagging replica, as
//     long as the server's clock does not step back.
//   - A Mutex, RWMutex and Semaphore on the same name refuse each other
//     (ErrWrongKind) instead of sharing keys silently.
//
// # Errors
//
// Callers branch on ErrNotAcquired (TryLock: held by another), ErrNotHeld
// (unlocking what this lease never held, or twice), ErrLockLost (held, then
// expired, taken or revoked; a revocation by ForceUnlock also matches
// ErrForced; an Unlock that could not release also matches ErrNotReleased),
// ErrNotReplicated, ErrWrongKind and ErrNoQuorum. Every error of a call
// whose context ended wraps ctx.Err(), except Unlock's, which does not
// stop when ctx ends.
// A value beyond a documented limit (MaxNameBytes, MaxPermits, MaxTTL and
// the others in limits.go), an invalid option or a forged lease is refused
// before any round trip with ErrInvalidArgument: one caller's bad argument
// must not cost everyone who shares the Redis their server time. Error
// texts quote at most a short prefix of a name or value.
//
// # Waiting
//
// Waiters queue in Redis. The release script hands the lock to the oldest
// live waiter and tells only that waiter's Client, on a channel of its own,
// so a handoff costs the same whatever the number of waiters and the lock is
// never free between holders. A waiter's place lasts its waiter TTL
// (WithWaiterTTL), refreshed by its Client for all its waiters of a lock in
// one script run, so a waiter that died delays the queue at most that long.
// Without WithFair a newcomer may take a free lock when no live waiter is
// left; with it, never ahead of a live waiter. Semaphore waiters queue first
// come, first served; RWMutex writers are woken one at a time; a MultiLock
// queues for the lock that blocks it. docs/locks.md describes the machinery
// and the keys.
//
// # Failures
//
// WithReplicas makes acquisitions and renewals wait for replicas (WAIT in
// the same pipeline), so a failover keeps the lock; NewQuorum needs a
// majority of independent primaries. What each mode guarantees when Redis
// fails (a failover, a restart, a pause) and what it assumes is in
// docs/failure-model.md.
//
// # Keys and scripts
//
// A lock named N is one hash, "{N}", whatever its kind (holds, the last
// fencing token, given-up attempts, waiter entries), plus a queue
// "{N}:queue" or "{N}:squeue", or an RWMutex's index "{N}:rw"; all share the hash tag, so a lock lives on
// one Redis Cluster slot, and wake-ups on a cluster use sharded pub/sub.
// Every key expires; docs/layout.md has every field. Each script call goes through one typed
// method in scripts.go, which owns the script's pinned name@version, its
// KEYS order, its ARGV encoding and the meaning of its reply.
package locks
