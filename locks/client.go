package locks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// Backend is what locks needs from a Redis: run a registry script, and
// subscribe to a channel. evalsha.Runner (real Redis) and simulate.Server
// (offline) satisfy it.
type Backend interface {
	Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd
	// Subscribe returns once the server confirmed the subscription; deliver
	// runs on the backend's receive goroutine and must not block.
	Subscribe(ctx context.Context, channel string, deliver func(payload string)) (unsubscribe func(), err error)
}

// Client makes locks on one backend. It is safe for concurrent use.
type Client struct {
	backend  Backend
	closer   func() error
	defaults settings
	scripts  scriptSet
	counts   counters
	local    localWaiters
	host     string // for holder metadata, read once
}

type scriptSet struct {
	acquire, release, extend, inspect *registry.Script
	handoff                           *registry.Script
	fairAcquire, fairRelease          *registry.Script
	rlock, runlock, rextend, wlock    *registry.Script
	rleave                            *registry.Script
	semAcquire, semRelease, semExtend *registry.Script
	semLimit                          *registry.Script
	multiAcquire                      *registry.Script
}

// New returns a Client that runs scripts on client through an evalsha.Runner.
// opts become the defaults of every lock the Client makes.
func New(client redis.UniversalClient, opts ...Option) (*Client, error) {
	runner, err := evalsha.New(client)
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	c, err := NewWithBackend(runner, opts...)
	if err != nil {
		return nil, err
	}
	c.closer = runner.Close
	return c, nil
}

// NewWithBackend returns a Client on any Backend, such as a simulate.Server.
func NewWithBackend(b Backend, opts ...Option) (*Client, error) {
	if b == nil {
		return nil, errors.New("locks: NewWithBackend needs a backend (an evalsha.Runner or a simulate.Server), got nil")
	}
	reg, err := registry.New(lua.FS)
	if err != nil {
		return nil, fmt.Errorf("locks: embedded scripts: %w", err)
	}
	c := &Client{backend: b, defaults: defaults()}
	c.host, _ = os.Hostname()
	for _, o := range opts {
		o(&c.defaults)
	}
	if err := c.defaults.validate("client defaults"); err != nil {
		return nil, err
	}
	pick := func(id string) *registry.Script {
		s, lookupErr := reg.Lookup(id)
		if lookupErr != nil && err == nil {
			err = lookupErr
		}
		return s
	}
	// Pinned versions: a released script never changes, and a new version
	// is adopted here deliberately.
	c.scripts = scriptSet{
		acquire: pick("mutex.acquire@1"), release: pick("mutex.release@1"),
		extend: pick("mutex.extend@1"), inspect: pick("mutex.inspect@1"), handoff: pick("mutex.handoff@1"),
		fairAcquire: pick("fair.acquire@1"), fairRelease: pick("fair.release@1"),
		rlock: pick("rw.rlock@1"), runlock: pick("rw.runlock@1"), rextend: pick("rw.rextend@1"),
		wlock: pick("rw.lock@1"), rleave: pick("rw.leave@1"),
		semAcquire: pick("sem.acquire@1"), semRelease: pick("sem.release@1"),
		semExtend: pick("sem.extend@1"), semLimit: pick("sem.setlimit@1"),
		multiAcquire: pick("multi.acquire@1"),
	}
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	return c, nil
}

// Close releases what New opened (the shared subscription). It does not
// close the go-redis client, and it does not release held leases.
func (c *Client) Close() error {
	if c.closer != nil {
		return c.closer()
	}
	return nil
}

// keys are the Redis keys and channel of one lock name.
type keys struct {
	name                           string
	lock, fence, queue, waiters    string
	readers, holds, writersWaiting string
	channel                        string
	mutexKeys, fairKeys, lockKey   []string
	rwKeys, readerKeys, waitingKey []string
	semKeys, permitsKey, limitKey  []string
}

func keysFor(name string) (keys, error) {
	if name == "" {
		return keys{}, errors.New("locks: empty lock name; name the resource the lock guards, such as \"orders:42\"")
	}
	if strings.ContainsAny(name, "{}") {
		return keys{}, fmt.Errorf("locks: lock name %q contains '{' or '}'; locks add their own hash tag, so drop the braces", name)
	}
	tag := "{" + name + "}"
	k := keys{name: name, lock: tag, fence: tag + ":fence", queue: tag + ":queue", waiters: tag + ":waiters", channel: tag + ":released"}
	k.readers, k.holds, k.writersWaiting = tag+":readers", tag+":rholds", tag+":wwait"
	k.rwKeys = []string{k.lock, k.readers, k.holds, k.writersWaiting, k.fence}
	k.readerKeys = []string{k.readers, k.holds}
	k.waitingKey = []string{k.writersWaiting}
	k.semKeys = []string{tag + ":permits", tag + ":limit", k.fence}
	k.permitsKey, k.limitKey = k.semKeys[:1], k.semKeys[1:2]
	k.mutexKeys = []string{k.lock, k.fence}
	k.fairKeys = []string{k.lock, k.fence, k.queue, k.waiters}
	k.lockKey = []string{k.lock}
	return k, nil
}

func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("locks: crypto/rand failed: " + err.Error()) // the runtime guarantees it does not
	}
	return hex.EncodeToString(b[:])
}

// wrapCtx makes a context error recognisable with errors.Is(err, ctx.Err()).
func wrapCtx(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%s: %w (%v)", what, ctxErr, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func isNil(err error) bool { return errors.Is(err, redis.Nil) }
