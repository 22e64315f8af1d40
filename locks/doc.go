// Package locks provides distributed locks on Redis, built only on the
// versioned scripts in redlua's lua/ directory. What each mode guarantees
// when Redis fails (a failover, a restart, a pause) is in
// docs/failure-model.md.
//
// A Client runs scripts through a Backend: evalsha.Runner for any go-redis
// client (New builds one), or simulate.Server for offline tests with a
// virtual clock (NewWithBackend, WithClock). NewQuorum makes a Client over
// several independent primaries (Redlock); its Inspect reports who holds a
// majority and each server's view, and its ForceUnlock frees every server
// it reaches. A Mutex is a named lock; Lock and
// TryLock return a Lease, which is the proof of ownership:
//
//   - Ownership is a random token, not a goroutine: a Lease can be marshalled
//     and released or extended by another process (Client.Resume).
//   - Each Lock or TryLock call is its own holder, also when calls share an
//     owner token (WithOwner without WithReentrant): the server records the
//     call's attempt id with the hold and with its place in the queue, so a
//     hand-over goes to one call, and a call that gave up, or whose lease
//     ran out, neither releases nor renews another call's hold. An RWMutex
//     call that shares a token holds under the token joined to its attempt
//     id, so the rw scripts keep such calls apart as they keep two owners
//     apart (one writer, or readers, each with its own lease); Lease.Owner
//     and Inspect report the token alone.
//   - The lease expires on the server after its TTL unless extended, by hand
//     (Lease.Extend) or by the watchdog (WithWatchdog), which stops before
//     Unlock releases the lock.
//   - A lease has a local deadline: the moment the acquiring call was sent,
//     plus the TTL, minus a drift margin, moved only by confirmed renewals.
//     Err, Done and Context look at it on every call, so a process resumed
//     after a pause learns at its first look that the lease is lost
//     (ErrLockLost), before any timer ran. A failed Unlock ends the lease too.
//   - Every acquisition gets a fencing token (Lease.Token) that grows
//     strictly per lock name. Tokens come from the server's clock
//     (microseconds, and never below the last token while a lease lives), so
//     they keep growing after a restart that lost data or a failover to a
//     replica that missed writes, as long as the server's clock does not step
//     back; and no key is left behind once a lock is released and expired.
//   - WithReplicas makes acquisitions and renewals wait for replicas (WAIT
//     in the same pipeline), so a failover keeps the lock.
//   - A Mutex, RWMutex and Semaphore on the same name refuse each other
//     (ErrWrongKind) instead of sharing keys silently.
//
// # Waiting: one wake-up per release
//
// A Mutex waiter queues in Redis, and the release script hands the lock to
// the oldest live waiter and publishes one message on a channel only that
// waiter's Client listens to ("{name}:grant:<client id>"): the other
// waiters run nothing, so the server's work per handoff does not grow with
// the number of waiters, and the lock is never free between holders. A
// waiter's place lasts its waiter TTL; one that died delays the queue by at
// most that TTL. The places are refreshed every third of the waiter TTL by
// the Client, for all of its waiters of a lock in one script run
// (mutex.keepqueued), so the refreshes of a thousand waiters in sixteen
// processes cost sixteen short runs per period, not a thousand acquire
// attempts. The same run tells the Client when a lock with waiters has lost
// its holder without a release (a crash), and its waiters look at once; the
// head of the queue also looks when the holder's lease is due to end. The
// new owner counts its lease from its last queued attempt, so a grant that
// reached a paused process is not taken for a live one; it needs no round
// trip to start working, and a lease longer than the waiter TTL is
// confirmed in the background.
//
// Plain and fair mode share this machinery: the decision (issue 11) was to
// make handoff the default for every Mutex, because the numbers across
// separate processes showed broadcast wake-ups costing O(waiters) scripts
// per release (bench/README.md). The one difference left: without WithFair
// a newcomer may take a lock that happens to be free (only when no live
// waiter was left to hand it to); with WithFair it never jumps a live
// waiter. RWMutex readers do not queue: they wake on the lock's release
// message ("released" on "{name}:released") and try again, all together,
// since all may read. RWMutex writers do not queue either (any writer may
// take a free lock), but a waiting writer records its Client's id, and
// the release that frees the lock (the last reader's RUnlock, a writer's
// Unlock) wakes only the oldest live waiting writer, on its Client's grant
// channel; the other writers run nothing, and the last reader out sends
// "released" only when no writer waits (a writer's Unlock sends it always,
// for readers that prefer reading). A woken writer that loses the race,
// or a wake-up that is lost, costs only time: every writer also looks
// again when its wait hint runs out (a third of its waiter TTL, at most
// what the blocking lease has left). Semaphore waiters queue, first come, first
// served: a release wakes only the queued calls whose permits now fit, on
// their Clients' grant channels, and each takes its permits with its own
// attempt (see Semaphore.Acquire). A MultiLock blocked by a held lock
// queues for it as a Mutex does (see MultiLock.Lock).
//
// On Redis Cluster every key of a lock shares the hash tag "{name}", and
// wake-ups use sharded pub/sub (SPUBLISH), which stays on the lock's shard.
//
// # Keys
//
// A lock named N uses "{N}" (the lock hash: owner, count, fence, meta,
// kind; after a release it keeps only fence, the last token, until the
// released lease would have run out), "{N}:fence" (an RWMutex's or a
// Semaphore's last token, expiring with the lease), "{N}:queue"
// and "{N}:waiters" (Mutex waiters), "{N}:gone" (attempts given up on a
// timeout, for a short while), "{N}:readers", "{N}:rholds", "{N}:wwait"
// and "{N}:wclients" (RWMutex; the last maps a waiting writer to its
// Client, expiring with "{N}:wwait"), "{N}:permits", "{N}:limit", "{N}:squeue" and "{N}:swaiters"
// (Semaphore), and the channels "{N}:released" and "{N}:grant:<client
// id>". Every key expires: the queue keys of both kinds a waiter TTL after
// their last refresh, so a name whose holder and waiters all died leaves
// nothing behind.
//
// # Changing a script
//
// Every script call goes through one typed method in scripts.go, which owns
// the script's pinned version, its KEYS order, its ARGV encoding and the
// meaning of its reply. To change a script: copy lua/<name>.v<N>.lua to
// lua/<name>.v<N+1>.lua and edit the copy (a released version never
// changes); record it with go run ./cmd/luasum record lua; point the one
// typed method at <name>@<N+1> and adjust its KEYS, ARGV or reply decoding.
// The tests in lua/ and the model checks in model_test.go (explore) then run
// against the new version.
//
// # Upgrading with clients of two versions
//
// During a rolling deploy, processes running the previous release of this
// package share locks with the new one. Each script version states in its
// header what the previous version may see differently. For
// mutex.acquire@4, mutex.release@4 and mutex.extend@2 (an earlier release), with
// @3 and @1: mutual exclusion between owners and token order hold across
// versions. A version-3 release that hands the lock to a version-4 waiter
// copies the entry's attempt into the holder's metadata (Inspect then reads
// it leniently) and grants with no attempt, which any call of that owner
// may take, as before; a version-4 release hands a version-3 waiter the
// lock as version 3 did. Calls that share an owner are told apart only
// when every process runs this release. mutex.keepqueued@1 moves the
// deadlines of entries of either version and keeps the rest as it is.
// rw.rlock@3, rw.lock@3, sem.acquire@4 and multi.acquire@3 (also this
// release) add the "{N}:gone" key and the calling attempt's id, and refuse
// an attempt that rw.runlock@3, sem.release@3 or mutex.release@4 (or @5)
// recorded there when undoing it; rw.lock@3 and multi.acquire@3 keep the
// attempt in the lock hash, so that mutex.release undoes only that
// attempt's hold.
// multi.acquire@3 also refuses a name that an RWMutex or a Semaphore holds
// (ErrWrongKind), and keeps each lock's last fencing token in the lock
// hash, as mutex.acquire@3 and later do, instead of in "{N}:fence".
// rw.runlock@3 and sem.release@3 behave as before when given no attempt. A
// process of the release before undoes without the record, so its late
// attempts may still leave a hold for one lease; its writer undo through
// mutex.release@4 (an Unlock with no attempt) still drops the hold, and
// its MultiLock still takes a name held by readers or permits.
// multi.acquire@2 there reads the token from "{N}:fence" and the server
// clock, which still exceeds every earlier token unless the server's
// clock went back.
// mutex.release@5 (this release) keeps version 4's contract and only moves
// the gone hash's expiry forward, as rw.runlock@3 and sem.release@3 do; a
// process still on mutex.release@4 sets it to its own gone_ttl_ms, which
// can shorten the record of another client with a longer TTL, as before.
// The release before (@3) changed: a waiter of the release before it was
// not marked in the lock hash and took a freed lock at its next refresh,
// and such a Semaphore refused a name for one lease after a Mutex on it
// was released.
//
// sem.acquire@5, sem.release@4, sem.setlimit@3 and sem.keepqueued@1 (this
// release) queue Semaphore waiters; the permits themselves are kept as
// before, so the count is never exceeded across versions. A process of
// the release before (sem.acquire@4) does not look at the queue and may
// take free permits ahead of queued waiters; its waiters do not queue and
// get "released" on "{N}:released" only from a release that left no live
// waiter queued (and from every SetPermits), otherwise they look again
// when the first permit's lease is due to end. A process on sem.release@3
// wakes no queued waiter: the head looks by itself when the first permit's
// lease is due to end, and the Client's keeper (sem.keepqueued) wakes the
// waiters that fit every third of their waiter TTL.
//
// sem.acquire@6 and sem.release@5 (this release) hand permits over: a
// queued Acquire leaves an offer (its lease length, in "{N}:soffers"), and a
// release gives the freed permits to the live waiters at the head that now
// fit, in its own script, with min(TTL, waiter TTL), and tells only their
// Clients ("grant <token> <owner> <owner>"); their Acquire returns from the
// message, with no further attempt. Entries in the queue are unchanged, so
// scripts of either release read both. A waiter of the release before
// (sem.acquire@5) leaves no offer and is woken as before; a waiter of this
// release behind a release of the release before (sem.release@4) is woken
// and claims nothing: it takes its permits with its own attempt, as before.
// The count is never exceeded across versions (the model checks run a
// version-5 client beside version-6 clients).
//
// rw.lock@4, rw.runlock@4, rw.unlock@1 and rw.leave@3 (this release) wake
// one waiting writer per release instead of all; who may take the lock is
// unchanged, so exclusion and token order hold across versions (the model
// checks run a writer of each version side by side). The write hold is the
// same hash as before: a write lease held by a process of the release
// before is released by mutex.release@5, which frees it as before but
// wakes writers only with "released" (one marshalled there and restored
// here by Client.Resume is released by rw.unlock@1). Writers of this
// release do not listen to "released" (it would wake them all again), so
// during a rolling deploy a release by a process of the release before
// (rw.runlock@3, mutex.release@5, mutex.forceunlock@2) reaches them only
// through their wait hint: latency, at most a third of the waiter TTL,
// never a second holder. mutex.forceunlock@3 (this release) wakes the
// oldest waiting writer, as rw.unlock@1 does. The other way, a release of this release
// whose oldest waiting writer recorded no client (rw.lock@3) publishes
// "released", which such writers listen to, and rw.unlock@1 publishes it
// on every release anyway. A version-3 writer that gave up leaves with
// rw.leave@2; having recorded no client, it leaves nothing in
// "{N}:wclients".
//
// mutex.acquire@5 and mutex.keepqueued@2 (this release) keep the contracts
// of @4 and @1 and give "{N}:queue" and "{N}:waiters" an expiry, moved
// forward to each waiter's deadline as it queues or is kept. The release
// before (mutex.acquire@4, mutex.keepqueued@1) neither sets nor moves it:
// its waiter queued behind a waiter of this release may lose its place
// when the keys expire before its own deadline, and then queues again at
// the back on its next attempt (a place lost, never a second holder), and
// a queue written only by that release never expires, as before.
//
// mutex.acquire@6 (this release) keeps mutex.acquire@5's keys, arguments,
// lock hash and behaviour and costs the server less per uncontended Lock
// (about 0.8 of 4.6 µs on redis-server 7.0.15): a caller that holds the lock
// gets its fencing token alone, an integer, instead of {1, token, count},
// and the fast path reads three fields of the hash and asks whether a gone
// hash exists at all, instead of asking it about the attempt. Processes of
// the release before run mutex.acquire@5 on the same keys unchanged; the
// model checker explores a version-5 client beside version-6 clients.
package locks
