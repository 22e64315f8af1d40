package lockbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

// QuorumMaxTTL is the longest lease redlua's quorum Client may grant here
// (locks.WithMaxTTL): the servers count towards a majority once they have
// been up longer than this.
const QuorumMaxTTL = ttl

// QuorumContender is a lock kept on several independent Redis primaries.
type QuorumContender struct {
	Name, Settings string
	New            func(addrs []string) (Locker, error)
}

// QuorumContenders lists the locks compared over the same independent servers.
func QuorumContenders() []QuorumContender {
	return []QuorumContender{
		{Name: "redsync-quorum", Settings: "redsync v4 with one pool per server, defaults, expiry 10s", New: newRedsyncQuorum},
		{Name: "redlua-quorum", Settings: "locks.NewQuorum over the same servers, TTL 10s", New: newRedluaQuorum},
	}
}

// ReplicaContenders are redlua plain and replica-acknowledged, both for a
// primary that has one replica.
func ReplicaContenders() []Contender {
	return []Contender{
		{Name: "redlua", Settings: "locks.New, TTL 10s", New: newRedlua(false), Waits: true},
		{Name: "redlua-replicas", Settings: "locks.New with WithReplicas(1, 1s), TTL 10s", New: newRedluaWith(locks.WithReplicas(1, time.Second)), Waits: true},
	}
}

func newRedluaQuorum(addrs []string) (Locker, error) {
	r := &redlua{}
	var clients []goredislib.UniversalClient
	for _, a := range addrs {
		rc := goredislib.NewClient(&goredislib.Options{Addr: a, PoolSize: 128})
		r.rcs = append(r.rcs, rc)
		clients = append(clients, rc)
	}
	c, err := locks.NewQuorum(clients, locks.WithTTL(ttl), locks.WithMaxTTL(QuorumMaxTTL))
	if err != nil {
		for _, rc := range r.rcs {
			rc.Close()
		}
		return nil, err
	}
	r.c = c
	return r, nil
}

type rsyncQuorum struct {
	clients []*goredislib.Client
	rs      *redsync.Redsync
}

func newRedsyncQuorum(addrs []string) (Locker, error) {
	if len(addrs) == 0 {
		return nil, errors.New("redsync-quorum: no servers")
	}
	q := &rsyncQuorum{}
	var pools []redis.Pool
	for _, a := range addrs {
		c := goredislib.NewClient(&goredislib.Options{Addr: a, PoolSize: 128})
		q.clients = append(q.clients, c)
		pools = append(pools, goredis.NewPool(c))
	}
	q.rs = redsync.New(pools...)
	return q, nil
}

func (q *rsyncQuorum) Lock(ctx context.Context, name string) (func(context.Context) error, error) {
	m := q.rs.NewMutex(name, redsync.WithExpiry(ttl))
	if err := m.LockContext(ctx); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { _, err := m.UnlockContext(ctx); return err }, nil
}

func (q *rsyncQuorum) Close() {
	for _, c := range q.clients {
		c.Close()
	}
}

// Interleaving is what an interleaved measurement found.
type Interleaving struct {
	// Rates holds each locker's rate over its slices together.
	Rates []float64
	// Rounds[i][r] is locker i's rate in round r (0 once it had failed).
	// Within a round the lockers ran back to back, so the ratio of two
	// lockers in one round compares neighbours in time; the spread of
	// those ratios shows how much of a difference is the machine's noise.
	Rounds [][]float64
	// Errs holds each locker's first error; it sat out the rounds after it.
	Errs []error
}

// Interleaved measures workload (i), uncontended pairs/s, for several lockers
// in alternating slices of per each, rounds times, so that load from other
// processes on a shared machine falls on all of them alike.
func Interleaved(ctx context.Context, lockers []Locker, name string, rounds int, per time.Duration) (Interleaving, error) {
	return Interleave(lockers, rounds, per, func(l Locker, i int, d time.Duration) (float64, error) {
		return Uncontended(ctx, l, fmt.Sprintf("%s:%d", name, i), d)
	})
}

// InterleavedParallel is workload (iii), goroutines each on its own lock,
// measured like Interleaved.
func InterleavedParallel(ctx context.Context, lockers []Locker, prefix string, goroutines, rounds int, per time.Duration) (Interleaving, error) {
	return Interleave(lockers, rounds, per, func(l Locker, i int, d time.Duration) (float64, error) {
		return Parallel(ctx, l, fmt.Sprintf("%s:%d", prefix, i), goroutines, d)
	})
}

// Interleave runs measure (a rate) for each locker in turn, for per each,
// rounds times; the error is for bad arguments.
func Interleave(lockers []Locker, rounds int, per time.Duration, measure func(l Locker, i int, d time.Duration) (float64, error)) (Interleaving, error) {
	if rounds <= 0 || per <= 0 {
		return Interleaving{}, fmt.Errorf("lockbench: interleaving needs rounds > 0 and per > 0 (got %d, %v)", rounds, per)
	}
	res := Interleaving{Rates: make([]float64, len(lockers)), Rounds: make([][]float64, len(lockers)), Errs: make([]error, len(lockers))}
	secs := make([]float64, len(lockers))
	for i := range lockers {
		res.Rounds[i] = make([]float64, rounds)
	}
	for r := range rounds {
		for i, l := range lockers {
			if res.Errs[i] != nil {
				continue
			}
			start := time.Now()
			rate, err := measure(l, i, per)
			if err != nil {
				res.Errs[i] = err
				continue
			}
			s := time.Since(start).Seconds()
			res.Rates[i] += rate * s
			res.Rounds[i][r] = rate
			secs[i] += s
		}
	}
	for i := range res.Rates {
		if secs[i] > 0 {
			res.Rates[i] /= secs[i]
		}
	}
	return res, nil
}

// RoundRatios returns a[r]/b[r] for every round r in which both ran.
func RoundRatios(a, b []float64) []float64 {
	var out []float64
	for r := range min(len(a), len(b)) {
		if a[r] > 0 && b[r] > 0 {
			out = append(out, a[r]/b[r])
		}
	}
	return out
}

// Spread returns the median, the lowest and the highest of xs (zeros when
// xs is empty).
func Spread(xs []float64) (median, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(xs))
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return median, s[0], s[len(s)-1]
}
