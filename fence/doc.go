// Package fence makes the resource a lock guards refuse writes from a stale
// holder: one whose lease ran out while it was paused (a GC, SIGSTOP, a
// stopped VM) or who lost the lock in a failover, and who still believes it
// holds. A lock service cannot stop such a holder; only the resource, which
// remembers the highest fencing token it accepted, can.
//
// The rule, the same for every backend (Admit): a write carrying lease L for
// lock name N is accepted when L.Token() is above the highest token accepted
// for N, or equal to it and from the same owner (L.Owner(): the same lease
// writing again, a reentrant hold, a lease resumed in another process);
// every other write is refused with a *StaleError, for which
// errors.Is(err, ErrStale) holds, naming N, the token and the highest.
// Optionally (WithMaxAhead) a token too far ahead of the resource's clock is
// refused too (ErrTokenAhead): tokens are the lock server's clock in
// microseconds, and a fence raised by a clock that jumped forward would
// refuse every holder until the clock caught up.
//
// Backends:
//
//   - SQL (NewSQL), through database/sql with any driver, for PostgreSQL,
//     MySQL/MariaDB and SQLite: a fence table with a row per lock name, taken
//     first in the transaction, so every row the transaction writes, in any
//     table, commits under one check (Do, DoAll; Check inside a transaction
//     of your own; Advance right after Lock).
//   - Redis (NewRedis): the script fence.write@1 checks the fence hash and
//     runs the writes in one call, on keys of one cluster slot.
//
// A write accepts any Holder: a *locks.Lease, one lease of a
// locks.MultiLease (DoAll takes them all), or a type of your own.
//
// Which holds can fence: a hold that excludes every other holder of its
// name, that is a Mutex lease (fair or not, reentrant or not), an RWMutex
// writer's lease, each lease of a MultiLock, and a Semaphore of one permit.
// Readers of an RWMutex and holders of a Semaphore's permits hold side by
// side; their tokens still grow with every grant of the name, so a token
// says which grant came later, not who may write: a resource fencing them
// would refuse an earlier reader that still holds. Let readers read without
// a fence, and let permit holders fence a resource of their own (a name per
// permit slot, or a Mutex inside the permit).
//
// What fencing does not cover: a stale write that reaches the resource
// before the new holder's first write is accepted (the resource has not
// seen the newer token yet); call Advance right after Lock to close that
// gap. A resource that loses its fence (a Redis restarted without its
// data) accepts a stale holder again until the next holder writes. And a
// write outside the fence (a table written without Do or Check) is not
// checked at all.
package fence
