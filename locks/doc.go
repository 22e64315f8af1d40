// Package locks provides distributed locks on Redis, built only on the
// versioned scripts in redlua's lua/ directory.
//
// A Client runs scripts through a Backend: evalsha.Runner for any go-redis
// client (New builds one), or simulate.Server for offline tests with a
// virtual clock (NewWithBackend). A Mutex is a named lock; Lock and TryLock
// return a Lease, which is the proof of ownership:
//
//   - Ownership is a random token, not a goroutine: a Lease can be marshalled
//     and released or extended by another process (Client.Resume).
//   - The lease expires on the server after its TTL unless extended, by hand
//     (Lease.Extend) or by the watchdog (WithWatchdog), which stops before
//     Unlock releases the lock.
//   - Lease.Done closes, and Lease.Err says why, the moment the holder can
//     no longer be sure it owns the lock: ErrLockLost. Do work under
//     Lease.Context to have it cancelled then.
//   - Every acquisition gets a fencing token (Lease.Token) that grows
//     strictly per lock name, across owners, expiries and re-acquisitions,
//     so the guarded resource can reject writes from a stale holder.
//   - Waiting does not poll: a waiter subscribes to the lock's release
//     channel before the attempt that fails, and wakes on the message; every
//     wait is also bounded by the lock's remaining lease, so a lost message
//     costs at most that. All waiters of a Client share one subscription.
//   - WithFair grants the lock in arrival order; the release script hands it
//     straight to the next waiter, and a dead waiter delays the queue by at
//     most its short waiter lease.
//
// Keys: a lock named N uses "{N}" (the lock hash), "{N}:fence" (the fencing
// counter), "{N}:queue" and "{N}:waiters" (fair mode) and the channel
// "{N}:released". The shared hash tag keeps them on one cluster slot.
//
// The fencing counter has no TTL, so it outlives every lease. It survives a
// restart only as far as the server persists data (RDB/AOF); after a restart
// that lost it, tokens start again at 1. A resource that must never see a
// token go backwards should store the highest token it accepted and combine
// it with a per-deployment epoch.
package locks
