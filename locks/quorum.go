package locks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
)

// NewQuorum returns a Client whose Mutexes are held on a majority of
// independent Redis primaries (Redlock): clients must be separate servers
// that do not replicate each other, at least three. Each acquisition tries
// every server at once with a short timeout and holds the lock when a
// majority granted it within the lease's validity, TTL minus the time spent
// minus a drift margin; otherwise it releases everywhere, including where
// the attempt seemed to fail. Unlock releases everywhere; Extend and the
// watchdog renew on a majority.
//
// Only Mutex (plain, optionally reentrant) is offered on a quorum: a fair
// queue would need one order agreed by all servers, and RWMutex and
// Semaphore hold one entry per holder whose majority a release could not
// keep consistent without a protocol Redis does not run. The fencing token
// of a quorum lease is the largest of the majority's tokens; tokens derive
// from each server's clock, so they grow across holders as long as the
// servers' clocks differ by less than a lease (docs/failure-model.md).
//
// Give each client fail-fast settings (go-redis DialerRetries 1,
// MaxRetries 1, retry backoffs of a few milliseconds): with the defaults a
// dead server costs every round several dial attempts, and a restarted one
// is tried again only once a second.
//
// The clients must reach different servers: two with the same address and
// database are refused. A server counts towards a majority only while it
// cannot have forgotten a live lease: once it has been up for longer than
// the longest lease (WithMaxTTL, by default DefaultQuorumMaxTTL) plus a
// drift margin, or at once when it persists every write (appendonly yes
// with appendfsync always). The Client asks each server (INFO, CONFIG GET
// appendfsync) when it first answers and after every new connection to
// it, which a restart forces; for that NewQuorum adds a hook to each
// go-redis client that counts its dials, so make the Client before the
// go-redis clients are in use. Inspect reports a server that does not
// count yet as "restarted, not counted until <time>";
// docs/failure-model.md states what this rests on.
func NewQuorum(clients []redis.UniversalClient, opts ...Option) (*Client, error) {
	if len(clients) < 3 {
		return nil, fmt.Errorf("locks: NewQuorum needs at least 3 independent primaries, got %d", len(clients))
	}
	scripts, err := embeddedScripts()
	if err != nil {
		return nil, err
	}
	nodes := make([]Backend, len(clients))
	runners := make([]*evalsha.Runner, len(clients))
	for i, rc := range clients {
		if isNilClient(rc) {
			return nil, fmt.Errorf("locks: NewQuorum: client %d is nil", i+1)
		}
		r, err := evalsha.New(rc, evalsha.WithCompanions(scripts.list()...))
		if err != nil {
			return nil, fmt.Errorf("locks: NewQuorum: client %d: %w", i+1, err)
		}
		nodes[i], runners[i] = r, r
	}
	closeAll := func() error {
		var errs []error
		for _, r := range runners {
			errs = append(errs, r.Close())
		}
		return errors.Join(errs...)
	}
	c, err := NewQuorumWithBackends(nodes, opts...)
	if err != nil {
		_ = closeAll() // nothing was subscribed yet
		return nil, err
	}
	c.closer = closeAll
	return c, nil
}

// NewQuorumWithBackends is NewQuorum on any Backends, such as several
// simulate.Servers. A backend with a go-redis client (evalsha.Runner) is
// checked for restarts as NewQuorum's are; any other backend always counts.
func NewQuorumWithBackends(backends []Backend, opts ...Option) (*Client, error) {
	if len(backends) < 3 {
		return nil, fmt.Errorf("locks: a quorum needs at least 3 independent primaries, got %d", len(backends))
	}
	seen := make(map[any]int, len(backends))
	for i, b := range backends {
		if isNilClient(b) {
			return nil, fmt.Errorf("locks: quorum backend %d is nil", i+1)
		}
		id := serverIdentity(b)
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("locks: a quorum needs independent servers, but servers %d and %d are the same (%v); give each server once", j+1, i+1, describeIdentity(id))
		}
		seen[id] = i
	}
	c, err := newClient(backends, opts)
	if err != nil {
		return nil, err
	}
	if c.defaults.replicas > 0 {
		return nil, errors.New("locks: WithReplicas does not apply to a quorum Client (a quorum of independent primaries replaces replicas)")
	}
	if err := c.restartsFor(backends); err != nil {
		return nil, err
	}
	c.workers = newWorkers()
	return c, nil
}

func (c *Client) quorum() bool { return len(c.nodes) > 1 }

func (c *Client) majority() int { return len(c.nodes)/2 + 1 }

// nodeTimeout bounds one server's answer, as Redlock asks: far below the
// TTL, so a dead server costs little of the validity.
func nodeTimeout(ttl time.Duration) time.Duration { return max(ttl/20, 5*time.Millisecond) }

// round makes one Redlock round of Mutex m for owner on every server. It
// returns a lease, or the wait hint before the next round; err when a
// majority can no longer answer. Each round has its own attempt id:
// undoing a round marks its id as given up on every server, and a later
// round must not be refused for it.
func (w quorumWay) round(ctx context.Context, m *Mutex, owner string, how acquireWait) (*Lease, time.Duration, error) {
	c, att := m.c, mutexAttempt(&m.s, how)
	sent := c.clock.Now()
	land := newLanding(len(c.nodes))
	attempts, errs := fanOut(ctx, c, nodeTimeout(m.s.ttl), acquiredAnswer, func(ctx context.Context, i int, n Backend) (attempt, error) {
		// A quorum Client keeps no holder record: m.meta is the whole
		// metadata.
		a, _, err := c.mutexAcquire(ctx, n, &m.s, m.k, owner, att, m.meta)
		land.ended(i, err)
		return a, err
	})
	granted, failed, cut, token, wait := 0, 0, 0, int64(0), m.s.ttl
	var failures []error
	for i, a := range attempts {
		switch {
		case errs[i] != nil:
			if errors.As(errs[i], new(cutOff)) {
				cut++
			} else {
				failed++
			}
			failures = append(failures, fmt.Errorf("server %d: %w", i+1, errs[i]))
		case a.acquired:
			granted++
			token = max(token, a.token)
		default:
			wait = min(wait, a.wait)
		}
	}
	validity := m.s.ttl - c.clock.Now().Sub(sent) - driftMargin(m.s.ttl)
	if granted >= c.majority() && validity > 0 {
		hold := quorumHold{attempt: m.holdAttempt(att), landing: land}
		return newLease(c, &m.k, &m.s, hold, owner, token, 0, sent, m.s.ttl), 0, nil
	}
	// Undo everywhere, also where the attempt seemed to fail: it may have
	// taken the lock after its timeout.
	w.undo(ctx, m, owner, att, attempts, errs)
	if failed+cut > len(c.nodes)-c.majority() {
		unanswered := ""
		if cut > 0 {
			unanswered = fmt.Sprintf(" and %d did not answer before the call ended", cut)
		}
		return nil, 0, fmt.Errorf("locks: %s: %d of %d servers failed%s, a majority of %d cannot be reached: %w: %w",
			m.k.text, failed, len(c.nodes), unanswered, c.majority(), ErrNoQuorum, errors.Join(failures...))
	}
	// Split votes retry after a random pause so that contenders desynchronise.
	return nil, min(wait, 50*time.Millisecond) + time.Duration(rand.Int64N(int64(10*time.Millisecond))), nil
}

// undo undoes a round that did not take the lock, given the round's
// answers. A server that answered that another owner holds the lock ran
// the acquisition and wrote nothing: it needs no undo (a contended Lock
// fails most rounds, and each undo is a script run and a record of the
// given-up attempt, which sends that server's next acquisitions down the
// slow path). Where the round took the lock, undo waits for the undo
// (each ends within its per-server timeout), so the caller's next round
// does not find its own hold there. Where the acquisition got no answer,
// it waits only until a majority of servers is settled: a server that
// does not answer (frozen, cut off) would otherwise hold every failed
// round of a contended Lock for another per-server timeout. That undo
// runs on in the background, and should the round's acquisition reach the
// server after it, the server refuses it (the attempt is recorded as given
// up).
func (quorumWay) undo(ctx context.Context, m *Mutex, owner, att string, round []attempt, roundErrs []error) {
	cleanup, cancel := cleanupContext(ctx)
	defer cancel()
	answeredWith := func(i int, acquired bool) bool { return roundErrs[i] == nil && round[i].acquired == acquired }
	var took sync.WaitGroup
	for i := range round {
		if answeredWith(i, true) {
			took.Add(1)
		}
	}
	fanOut(cleanup, m.c, nodeTimeout(m.s.ttl), answered, func(ctx context.Context, i int, n Backend) (outcome, error) {
		if answeredWith(i, false) {
			return outcomeTaken, nil // refused: nothing to undo
		}
		if answeredWith(i, true) {
			defer took.Done()
		}
		return m.c.mutexRelease(ctx, n, &m.s, m.k, owner, att, "")
	})
	took.Wait()
}

// acquiredAnswer and confirmedAnswer tell fanOut which answers count
// towards a majority that settles an acquisition, or a renewal or release.
func acquiredAnswer(a attempt, err error) bool { return err == nil && a.acquired }

// answered counts any answer of a server, whatever it says.
func answered(_ outcome, err error) bool { return err == nil }

func confirmedAnswer(o outcome, err error) bool {
	return err == nil && (o == outcomeOK || o == outcomeStillHeld || o == outcomeHandedOn)
}

// quorumHold is a quorum Mutex's hold: renewed and released on every
// server. attempt is as for mutexHold (empty for a reentrant owner).
// landing is the acquiring round's (nil for a lease made by Resume, whose
// release undoes the attempt where it finds no holder instead).
type quorumHold struct {
	attempt string
	landing *landing
}

// landing records how each server's acquisition call of the round that
// took a quorum lock ended. Lock returns once a majority granted the lock,
// while the other calls are still on their way: one of them could take
// the lock on its server after the lease's release had reached that
// server, and leave it held there, unseen, until the lease ran out. So a
// release on a server first waits for that server's acquisition call to
// end; when the call ended without an answer (a timeout, a lost
// connection: the acquisition may still run there later), the release is
// an undo, which also makes the server refuse the attempt if it arrives.
type landing struct {
	done   []chan struct{} // done[i] is closed when server i's call ended
	unsure []bool          // set before done[i] is closed
}

func newLanding(n int) *landing {
	l := &landing{done: make([]chan struct{}, n), unsure: make([]bool, n)}
	for i := range l.done {
		l.done[i] = make(chan struct{})
	}
	return l
}

// ended records the end of server i's acquisition call.
func (l *landing) ended(i int, err error) {
	l.unsure[i] = err != nil
	close(l.done[i])
}

// pending reports whether some server's acquisition call has not ended.
func (l *landing) pending() bool {
	for _, done := range l.done {
		select {
		case <-done:
		default:
			return true
		}
	}
	return false
}

// mayLand waits until server i's acquisition call ended (or ctx did) and
// reports whether the acquisition may still take the lock there later.
func (l *landing) mayLand(ctx context.Context, i int) bool {
	select {
	case <-l.done[i]:
		return l.unsure[i]
	case <-ctx.Done():
		return true
	}
}

func (quorumHold) kind() string { return "quorum" }

func (h quorumHold) extend(ctx context.Context, l *Lease, ttl time.Duration) (outcome, bool, error) {
	results, errs := fanOut(ctx, l.c, nodeTimeout(ttl), confirmedAnswer, func(ctx context.Context, _ int, n Backend) (outcome, error) {
		o, _, err := l.c.mutexExtend(ctx, n, l.s, *l.k, l.owner, h.attempt, ttl)
		return o, err
	})
	return tally(l.c, results, errs)
}

func (h quorumHold) release(ctx context.Context, l *Lease) (outcome, error) {
	timeout := nodeTimeout(l.s.ttl)
	if h.landing != nil && h.landing.pending() {
		// A release that waits for an acquisition still on its way (for
		// at most that call's timeout, which began earlier) keeps a whole
		// timeout of its own for the undo it may then send.
		timeout *= 2
	}
	results, errs := fanOut(ctx, l.c, timeout, confirmedAnswer, func(ctx context.Context, i int, n Backend) (outcome, error) {
		undo := ""
		if h.landing != nil && h.landing.mayLand(ctx, i) {
			// A reentrant owner's hold has no attempt to undo (its later
			// calls re-enter with attempts of their own): its release
			// only waits for an acquisition that answered late, and one
			// that got no answer and lands after it keeps that server
			// until its lease ends.
			undo = h.attempt
		}
		o, err := l.c.mutexRelease(ctx, n, l.s, *l.k, l.owner, undo, h.attempt)
		if err == nil && o == outcomeExpired && h.landing == nil && h.attempt != "" {
			// A lease made by Resume cannot tell whether the acquiring
			// round's call to this server (in the process that took the
			// lock) is still on its way: make the server refuse it, should
			// it arrive after this release (best effort, as any undo). Had
			// it arrived in between, the undo releases it.
			if u, uerr := l.c.mutexRelease(ctx, n, l.s, *l.k, l.owner, h.attempt, h.attempt); uerr == nil && confirmedAnswer(u, nil) {
				o = u
			}
		}
		return o, err
	})
	o, _, err := tally(l.c, results, errs)
	return o, err
}

// tally turns per-server outcomes into one: OK when a majority confirmed,
// lost when a majority says another owner or no one holds it, an error
// otherwise.
func tally(c *Client, results []outcome, errs []error) (outcome, bool, error) {
	ok, taken, expired := 0, 0, 0
	var failures []error
	for i, o := range results {
		switch {
		case errs[i] != nil:
			failures = append(failures, fmt.Errorf("server %d: %w", i+1, errs[i]))
		case confirmedAnswer(o, nil):
			ok++
		case o == outcomeTaken:
			taken++
		default:
			expired++
		}
	}
	switch need := c.majority(); {
	case ok >= need:
		return outcomeOK, true, nil
	case taken >= need || taken+expired >= need:
		if taken > 0 {
			return outcomeTaken, true, nil
		}
		return outcomeExpired, true, nil
	case ok+len(failures) < need:
		// Not enough servers left that could still confirm.
		if taken > 0 {
			return outcomeTaken, true, nil
		}
		return outcomeExpired, true, nil
	}
	return 0, false, fmt.Errorf("%w: only %d of %d servers confirmed: %w", ErrNoQuorum, ok, len(results), errors.Join(failures...))
}
