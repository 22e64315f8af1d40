package lockbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

// QuorumContender is a lock kept on several independent Redis primaries.
type QuorumContender struct {
	Name, Settings string
	New            func(addrs []string) (Locker, error)
}

// QuorumContenders lists the locks compared over the same independent servers.
func QuorumContenders() []QuorumContender {
	return []QuorumContender{
		{Name: "redsync-quorum", Settings: "redsync v4 with one pool per server, defaults, expiry 10s", New: newRedsyncQuorum},
	}
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

// Interleaved measures workload (i), uncontended pairs/s, for several lockers
// in alternating slices of per each, rounds times, so that load from other
// processes on a shared machine falls on all of them alike. It returns one
// rate per locker, over its slices together.
func Interleaved(ctx context.Context, lockers []Locker, name string, rounds int, per time.Duration) ([]float64, error) {
	if rounds <= 0 || per <= 0 {
		return nil, fmt.Errorf("lockbench: Interleaved needs rounds > 0 and per > 0 (got %d, %v)", rounds, per)
	}
	pairs := make([]float64, len(lockers))
	secs := make([]float64, len(lockers))
	for range rounds {
		for i, l := range lockers {
			start := time.Now()
			rate, err := Uncontended(ctx, l, fmt.Sprintf("%s:%d", name, i), per)
			if err != nil {
				return nil, fmt.Errorf("locker %d: %w", i, err)
			}
			s := time.Since(start).Seconds()
			pairs[i] += rate * s
			secs[i] += s
		}
	}
	for i := range pairs {
		pairs[i] /= secs[i]
	}
	return pairs, nil
}
