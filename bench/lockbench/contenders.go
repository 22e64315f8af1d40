// Package lockbench runs the same lock workloads against redlua and peer
// libraries on one Redis server, so their numbers come from one run.
package lockbench

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/redlua/redlua/locks"
)

// Locker is what every contender offers the workloads.
type Locker interface {
	// Lock waits for the named lock and returns its release.
	Lock(ctx context.Context, name string) (unlock func(context.Context) error, err error)
	Close()
}

// Contender is a named lock implementation and how it is configured.
type Contender struct {
	Name     string
	Settings string
	New      func(addr string) (Locker, error)
	// Waits reports whether the contender can wait for a held lock, and so
	// runs the contended workloads.
	Waits bool
}

// Contenders lists redlua, its fair mode, the peers and the raw floor.
func Contenders() []Contender {
	return []Contender{
		{Name: "raw", Settings: "SET NX PX, polled every 1 ms while held; release by a compare-and-delete EVALSHA", New: newRaw, Waits: true},
		{Name: "redlua", Settings: "locks.New, TTL 10s, pub/sub wake-ups", New: newRedlua(false), Waits: true},
		{Name: "redlua-fair", Settings: "locks.New with WithFair, TTL 10s", New: newRedlua(true), Waits: true},
		{Name: "redsync", Settings: "v4 defaults (retry delay 50-250ms random), expiry 10s, tries unlimited", New: newRedsync, Waits: true},
		{Name: "redislock", Settings: "bsm/redislock, LinearBackoff(100ms) as in its README, TTL 10s", New: newRedislock, Waits: true},
		{Name: "rueidislock", Settings: "defaults (client-side caching wake-ups), KeyMajority 1, NoLoopTracking", New: newRueidislock, Waits: true},
	}
}

const ttl = 10 * time.Second

// rawPoll is how often the raw floor retries a held lock.
const rawPoll = time.Millisecond

type raw struct {
	c   *redis.Client
	sha string
}

func newRaw(addr string) (Locker, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
	sha, err := c.ScriptLoad(context.Background(), `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`).Result()
	if err != nil {
		return nil, err
	}
	return &raw{c: c, sha: sha}, nil
}

func (r *raw) Lock(ctx context.Context, name string) (func(context.Context) error, error) {
	token := fmt.Sprint(os.Getpid(), ":", time.Now().UnixNano()) // unique across worker processes
	for {
		ok, err := r.c.SetNX(ctx, name, token, ttl).Result()
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		// The floor waits the simplest way: poll every millisecond.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rawPoll):
		}
	}
	keys := []string{name}
	return func(ctx context.Context) error { return r.c.EvalSha(ctx, r.sha, keys, token).Err() }, nil
}

func (r *raw) Close() { r.c.Close() }

// Queueing is what a Lock call learned when its first attempt found the
// lock held and queued it: when (At; zero when it took the lock at once, or
// its lock cannot tell) and its place in the queue then, as the server
// counted it (Place; 1: next in line, 0 when unknown).
type Queueing struct {
	At    time.Time
	Place int64
}

// QueuedLocker is a Locker that also tells how each Lock call was queued.
// A wait measured from then, rather than from the call, sees only the queue
// the server put it behind.
type QueuedLocker interface {
	Locker
	LockQueued(ctx context.Context, name string) (unlock func(context.Context) error, queued Queueing, err error)
}

type redlua struct {
	rcs []*redis.Client // closed after c: locks.Client does not close them
	c   *locks.Client
	// queued holds, per Lock call's owner token (a Mutex without WithOwner
	// gives every call its own), the Queueing its EventContended told
	// (emitted once the first attempt came back queued).
	queued sync.Map
}

func newRedlua(fair bool) func(string) (Locker, error) {
	if fair {
		return newRedluaWith(locks.WithFair(0))
	}
	return newRedluaWith()
}

// newRedluaWith is redlua on one server with TTL 10 s and opts.
func newRedluaWith(opts ...locks.Option) func(string) (Locker, error) {
	return func(addr string) (Locker, error) {
		rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
		r := &redlua{rcs: []*redis.Client{rc}}
		observe := locks.WithHook(func(e locks.Event) {
			if e.Kind == locks.EventContended {
				r.queued.LoadOrStore(e.Owner, Queueing{At: time.Now(), Place: e.Position})
			}
		})
		c, err := locks.New(rc, append([]locks.Option{locks.WithTTL(ttl), observe}, opts...)...)
		if err != nil {
			rc.Close()
			return nil, err
		}
		r.c = c
		return r, nil
	}
}

func (r *redlua) Lock(ctx context.Context, name string) (func(context.Context) error, error) {
	unlock, _, err := r.LockQueued(ctx, name)
	return unlock, err
}

func (r *redlua) LockQueued(ctx context.Context, name string) (func(context.Context) error, Queueing, error) {
	m, err := r.c.Mutex(name)
	if err != nil {
		return nil, Queueing{}, err
	}
	l, err := m.Lock(ctx)
	if err != nil {
		return nil, Queueing{}, err
	}
	var q Queueing
	if v, ok := r.queued.LoadAndDelete(l.Owner()); ok {
		q = v.(Queueing)
	}
	return l.Unlock, q, nil
}

func (r *redlua) Close() {
	r.c.Close()
	for _, rc := range r.rcs {
		rc.Close()
	}
}

type rsync struct {
	rc *redis.Client
	rs *redsync.Redsync
}

func newRedsync(addr string) (Locker, error) {
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
	return &rsync{rc: rc, rs: redsync.New(goredis.NewPool(rc))}, nil
}

func (r *rsync) Lock(ctx context.Context, name string) (func(context.Context) error, error) {
	m := r.rs.NewMutex(name, redsync.WithExpiry(ttl), redsync.WithTries(math.MaxInt32))
	if err := m.LockContext(ctx); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { _, err := m.UnlockContext(ctx); return err }, nil
}

func (r *rsync) Close() { r.rc.Close() }

type bsm struct {
	rc *redis.Client
	c  *redislock.Client
}

func newRedislock(addr string) (Locker, error) {
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
	return &bsm{rc: rc, c: redislock.New(rc)}, nil
}

func (b *bsm) Lock(ctx context.Context, name string) (func(context.Context) error, error) {
	l, err := b.c.Obtain(ctx, name, ttl, &redislock.Options{RetryStrategy: redislock.LinearBackoff(100 * time.Millisecond)})
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

func (b *bsm) Close() { b.rc.Close() }

type rueidisLocker struct{ l rueidislock.Locker }

func newRueidislock(addr string) (Locker, error) {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:   rueidis.ClientOption{InitAddress: []string{addr}},
		KeyMajority:    1,
		NoLoopTracking: true,
		KeyValidity:    ttl,
	})
	if err != nil {
		return nil, err
	}
	return &rueidisLocker{l: l}, nil
}

func (r *rueidisLocker) Lock(ctx context.Context, name string) (func(context.Context) error, error) {
	_, cancel, err := r.l.WithContext(ctx, name)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		// cancel releases the lock and waits for the release; the wait is
		// bounded by ctx so a stuck release is an error, not a hang.
		released := make(chan struct{})
		go func() { cancel(); close(released) }()
		select {
		case <-released:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("rueidislock release: %w", ctx.Err())
		}
	}, nil
}

func (r *rueidisLocker) Close() { r.l.Close() }

// ContenderByName finds a contender of Contenders by its name.
func ContenderByName(name string) (Contender, error) {
	var names []string
	for _, c := range Contenders() {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Contender{}, fmt.Errorf("lockbench: unknown contender %q (known: %s)", name, strings.Join(names, ", "))
}
