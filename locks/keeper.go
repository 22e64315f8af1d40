package locks

import (
	"context"
	"sync"
	"time"
)

// keepBatch bounds the owners of one sem.keepqueued call, so that the
// script's unpack stays far below Lua's stack limit.
const keepBatch = 1000

// mutexKeepBatch bounds the owners of one mutex.keepqueued call, which
// refuses more: a call's work is proportional to its owners, so that one
// Client's thousand waiters of a name cost the server ten short runs, not
// one long one.
const mutexKeepBatch = 100

// queueKeeper keeps a Client's queued Lock calls in their locks' queues.
// A waiter's place lasts its waiter TTL unless refreshed; refreshing each
// waiter with its own mutex.acquire costs the server a script run per
// waiter every third of that TTL, which with a thousand waiters outweighs
// the hand-overs they wait for. The keeper refreshes all of this Client's
// waiters of one lock with one mutex.keepqueued call instead, so the runs
// grow with the clients, not with the waiters.
//
// It also watches for a lock with waiters but no holder (the holder died
// without releasing, or a release found no live waiter in time): the
// waiters then try at once instead of at their own, now rare, refresh.
//
// A Semaphore's queued Acquire calls are kept the same way with
// sem.keepqueued, which itself wakes the waiters whose permits are free.
type queueKeeper struct {
	c     *Client
	mu    sync.Mutex
	locks map[string]*keptLock // by queue key
}

// keptLock is one lock's queued calls on this Client.
type keptLock struct {
	k       keys
	sem     bool // a Semaphore's queue, kept with sem.keepqueued
	node    Backend
	calls   map[chan int64]keptCall // by the call's wake-up channel
	pending func() bool             // stops the scheduled refresh; nil while one runs
	due     time.Time               // when the scheduled refresh runs
}

type keptCall struct {
	owner string
	every time.Duration // a third of the call's waiter TTL
}

// keep adds a queued Lock call, or a queued Semaphore Acquire call (sem):
// owner, woken on wake (a 0 means "try again now") and queued with
// waiterTTL. leave removes it.
func (q *queueKeeper) keep(node Backend, k keys, sem bool, owner string, wake chan int64, waiterTTL time.Duration) (leave func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.locks == nil {
		q.locks = map[string]*keptLock{}
	}
	call := keptCall{owner: owner, every: max(waiterTTL/3, time.Millisecond)}
	kl := q.locks[keptKey(k, sem)]
	switch {
	case kl == nil:
		kl = &keptLock{k: k, sem: sem, node: node, calls: map[chan int64]keptCall{}}
		q.locks[keptKey(k, sem)] = kl
		q.schedule(kl, call.every)
	case kl.pending != nil && q.c.clock.Now().Add(call.every).Before(kl.due):
		// A call with a shorter waiter TTL than the others' needs an
		// earlier refresh. (While a refresh runs, pending is nil and the
		// refresh schedules the next one from every call, this one too.)
		if kl.pending() {
			q.schedule(kl, call.every)
		}
	}
	kl.calls[wake] = call
	return func() { q.leave(kl, wake) }
}

func (q *queueKeeper) leave(kl *keptLock, wake chan int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(kl.calls, wake)
	if len(kl.calls) > 0 {
		return
	}
	if kl.pending != nil {
		kl.pending()
		kl.pending = nil
	}
	if q.locks[kl.key()] == kl {
		delete(q.locks, kl.key())
	}
}

// keptKey is the key under which the keeper files a lock's queue: a Mutex's
// and a Semaphore's queues of one name are different keys.
func keptKey(k keys, sem bool) string {
	if sem {
		return k.semQueue
	}
	return k.lock
}

func (kl *keptLock) key() string { return keptKey(kl.k, kl.sem) }

// schedule arranges the next refresh of kl; q.mu is held.
func (q *queueKeeper) schedule(kl *keptLock, d time.Duration) {
	kl.due = q.c.clock.Now().Add(d)
	kl.pending = q.c.clock.AfterFunc(d, func() { q.refresh(kl) })
}

// refresh runs mutex.keepqueued for every call of kl and wakes the calls
// that must look for themselves.
func (q *queueKeeper) refresh(kl *keptLock) {
	q.mu.Lock()
	if q.locks[kl.key()] != kl || len(kl.calls) == 0 {
		q.mu.Unlock()
		return
	}
	kl.pending = nil
	every := time.Duration(0)
	seen := map[string]bool{}
	var owners []string
	for _, call := range kl.calls {
		if every == 0 || call.every < every {
			every = call.every
		}
		if !seen[call.owner] {
			seen[call.owner] = true
			owners = append(owners, call.owner)
		}
	}
	q.mu.Unlock()

	// A refresh must finish before the waiters' places run out (a third of
	// the shortest waiter TTL later), or it is no use.
	ctx, cancel := context.WithTimeout(context.Background(), every)
	wakeAll, dropped := false, map[string]bool{}
	size := keepBatch
	if !kl.sem {
		size = mutexKeepBatch
	}
	for start := 0; start < len(owners); start += size {
		batch := owners[start:min(start+size, len(owners))]
		held := true // a semaphore's refresh wakes the waiters that fit itself
		var queued []bool
		var err error
		if kl.sem {
			queued, err = q.c.semKeepQueued(ctx, kl.node, kl.k, batch)
		} else {
			held, queued, err = q.c.keepQueued(ctx, kl.node, kl.k, batch)
		}
		if err != nil {
			// Let each waiter meet the error with its own attempt, as it
			// did before the keeper existed.
			wakeAll = true
			break
		}
		wakeAll = wakeAll || !held
		for i, ok := range queued {
			if !ok {
				dropped[batch[i]] = true
			}
		}
	}
	cancel()

	q.mu.Lock()
	defer q.mu.Unlock()
	for wake, call := range kl.calls {
		if wakeAll || dropped[call.owner] {
			nudge(wake, 0)
		}
	}
	if q.locks[kl.key()] == kl && len(kl.calls) > 0 && kl.pending == nil {
		q.schedule(kl, every)
	}
}

// keptWait is how long a queued waiter behind the head sleeps before it
// looks by itself while the keeper refreshes it: only a safety net, since
// the keeper wakes it whenever it must look.
func keptWait(waiterTTL time.Duration) time.Duration { return 3 * waiterTTL }
