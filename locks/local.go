package locks

import (
	"context"
	"sync"
	"time"
)

// localWaiters are the goroutines of one Client waiting for a lock, oldest
// first. Unlock hands the lock to the oldest directly (mutex.handoff): the
// lock is never free in between, so under contention inside one process it
// moves from holder to holder without a wake-up message or a new attempt,
// and in arrival order. Waiters in other processes still wake on the release
// message, but only once no local waiter is left.
type localWaiters struct {
	mu     sync.Mutex
	byName map[string][]*localWaiter
}

type localWaiter struct {
	owner string
	m     *Mutex
	// claimed is set, under localWaiters.mu, by the Unlock that picked this
	// waiter; from then on that Unlock owes it exactly one grant.
	claimed bool
	grant   chan grant
}

// grant is the outcome of a handoff to a local waiter.
type grant struct {
	ok    bool
	token int64
	sent  time.Time // when the handoff was sent: the new lease counts from there
}

func (lw *localWaiters) add(name string, w *localWaiter) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.byName == nil {
		lw.byName = map[string][]*localWaiter{}
	}
	w.claimed = false
	lw.byName[name] = append(lw.byName[name], w)
}

// remove takes w out of the queue. It reports false when an Unlock already
// claimed w, which then must wait for its grant.
func (lw *localWaiters) remove(name string, w *localWaiter) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if w.claimed {
		return false
	}
	q := lw.byName[name]
	for i, x := range q {
		if x == w {
			lw.byName[name] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(lw.byName[name]) == 0 {
		delete(lw.byName, name)
	}
	return true
}

// claim takes the oldest waiter for name, if any.
func (lw *localWaiters) claim(name string) *localWaiter {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	q := lw.byName[name]
	if len(q) == 0 {
		return nil
	}
	w := q[0]
	w.claimed = true
	if len(q) == 1 {
		delete(lw.byName, name)
	} else {
		lw.byName[name] = q[1:]
	}
	return w
}

// handoff releases l and gives the lock to w in one script call. It returns
// the release's outcome for l as mutex.release does (1 freed/handed, 2 still
// held, 0 another owner, -1 no owner), and always settles w's grant.
func (l *Lease) handoff(ctx context.Context, w *localWaiter) (int64, error) {
	sent := time.Now()
	reply, err := l.c.backend.Run(ctx, l.c.scripts.handoff, l.k.mutexKeys, l.owner, w.owner, w.m.s.ttl.Milliseconds(), w.m.meta).Slice()
	if err != nil {
		w.grant <- grant{}
		return 0, err
	}
	code, _ := reply[0].(int64)
	if code == 1 && len(reply) > 1 {
		token, _ := reply[1].(int64)
		w.grant <- grant{ok: true, token: token, sent: sent}
		return 1, nil
	}
	w.grant <- grant{}
	return code, nil
}
