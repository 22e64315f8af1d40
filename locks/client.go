package locks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
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

// replicatedRunner is a Backend that can wait for replicas after a script
// (evalsha.Runner): the script and WAIT go in one pipeline on one connection.
type replicatedRunner interface {
	RunReplicated(ctx context.Context, s *registry.Script, replicas int, timeout time.Duration, keys []string, args ...any) (*redis.Cmd, int, error)
}

// shardedPubSub is a Backend whose Subscribe uses sharded pub/sub
// (SSUBSCRIBE, Redis Cluster): scripts must then publish with SPUBLISH.
type shardedPubSub interface{ ShardedPubSub() bool }

// Client makes locks on one backend (or, from NewQuorum, on a quorum of
// independent ones). It is safe for concurrent use.
type Client struct {
	nodes    []Backend // one, or the independent primaries of a quorum
	closer   func() error
	defaults settings
	scripts  *scriptSet
	counts   counters
	clock    Clock
	grants   grantHub
	revokes  revokeHub   // this Client's revoke channel, for its live leases
	workers  *workers    // run a quorum's per-server calls (nil unless quorum)
	keeper   queueKeeper // refreshes this Client's queued Mutex waiters together
	expiries expiries    // ends this Client's leases at their local deadlines
	id       string      // this Client's id: waiters learn of grants on "{name}:grant:<id>"
	publish  string      // PUBLISH, or SPUBLISH when the backend subscribes with SSUBSCRIBE
	host     string      // for holder metadata, read once
	// defaultMeta is the hold metadata of locks with the default label:
	// holderPlaceholder, as the holder record has it (holders.go).
	defaultMeta string
	// holderRecord is the Client's holder metadata (host, pid, default
	// label) as JSON, encoded once; holders is when each server's copy of
	// it is due (holders.go).
	holderRecord string
	holders      []holderState
	// restarts decides when a quorum's server counts (nil unless quorum).
	restarts *restartGuard
}

// meta is the hold metadata a lock with settings s records: the
// placeholder for the Client's holder record, or the lock's own label.
// A quorum Client's holds carry the whole metadata: it holds only
// Mutexes, one record per name, and its calls to a slow server are not
// to wait for a holder record's write there.
func (c *Client) meta(s *settings) string {
	switch {
	case c.holders == nil:
		return s.meta(c.host)
	case s.label == c.defaults.label:
		return c.defaultMeta
	}
	return labelMeta(s.label)
}

// New returns a Client that runs scripts on client through an evalsha.Runner.
// opts become the defaults of every lock the Client makes.
func New(client redis.UniversalClient, opts ...Option) (*Client, error) {
	if isNilClient(client) {
		return nil, errors.New("locks: New needs a go-redis client (redis.NewClient, NewClusterClient, NewFailoverClient), got nil")
	}
	scripts, err := embeddedScripts()
	if err != nil {
		return nil, err
	}
	// The first NOSCRIPT (a cold or restarted server) loads every script a
	// Client runs, not only the one that met it.
	runner, err := evalsha.New(client, evalsha.WithCompanions(scripts.list()...))
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
	if b == nil || isNilClient(b) {
		return nil, errors.New("locks: NewWithBackend needs a backend (an evalsha.Runner or a simulate.Server), got nil")
	}
	return newClient([]Backend{b}, opts)
}

func newClient(nodes []Backend, opts []Option) (*Client, error) {
	scripts, err := embeddedScripts()
	if err != nil {
		return nil, err
	}
	c := &Client{nodes: nodes, defaults: defaults(), scripts: scripts, id: newShortID(), publish: "PUBLISH"}
	c.keeper.c = c
	c.host, _ = os.Hostname()
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("locks: client option %d is nil; pass options such as locks.WithTTL(time.Minute)", i+1)
		}
		o(&c.defaults)
	}
	if err := c.defaults.validate(kindClient, ""); err != nil {
		return nil, err
	}
	c.defaults.given = nil
	c.defaultMeta, c.holderRecord = holderPlaceholder, c.defaults.meta(c.host)
	if len(nodes) == 1 {
		c.holders = make([]holderState, 1)
	} else {
		c.defaultMeta = c.holderRecord
	}
	c.clock = c.defaults.clock
	if c.clock == nil {
		c.clock = wallClock{}
	}
	c.expiries.clock = c.clock
	if sp, ok := nodes[0].(shardedPubSub); ok && sp.ShardedPubSub() {
		c.publish = "SPUBLISH"
	}
	c.revokes.channel = c.revokePrefix() + c.id
	if c.defaults.replicas > 0 {
		if err := c.canReplicate(); err != nil {
			return nil, fmt.Errorf("locks: %w", err)
		}
	}
	return c, nil
}

// isNilClient catches a typed nil (a nil *redis.Client in an interface).
func isNilClient(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

func (c *Client) canReplicate() error {
	for _, n := range c.nodes {
		if _, ok := n.(replicatedRunner); !ok {
			return fmt.Errorf("WithReplicas needs a backend that can send WAIT with a script (locks.New on a go-redis client); %T cannot", n)
		}
	}
	return nil
}

// Close releases what New opened (the shared subscription). It does not
// close the go-redis client, and it does not release held leases.
//
// A quorum Client's Close first waits for the calls that its Lock, Extend
// and Unlock calls left running on the slower minority of its servers when
// a majority had answered (each ends within its per-server timeout, TTL/20
// and at least 5 ms). So a process that unlocks, closes its Client, then
// its go-redis clients, and exits has sent its release to every server it
// could reach, instead of leaving the lock held on a minority until the
// lease runs out.
func (c *Client) Close() error {
	c.revokes.stop()
	if c.workers != nil {
		c.workers.drain()
	}
	if c.closer != nil {
		return c.closer()
	}
	return nil
}

// backend is the single node of a non-quorum Client.
func (c *Client) backend() Backend { return c.nodes[0] }

// keys are the Redis keys and channels of one lock name.
type keys struct {
	name            string
	text            string // the name as error texts show it (shortText)
	lock            string // "{N}", the name's hash (docs/layout.md); every key and channel starts with the Client's WithKeyPrefix
	queue, semQueue string // "{N}:queue" and "{N}:squeue": a Mutex's and a Semaphore's queue
	gone            string // "{N}:gone": a Mutex's given-up records (g:<attempt>) by their end
	channel         string // "{N}:released": callers that wait without queueing hear releases there
	grantPrefix     string // "{N}:grant:", then a Client's id: where it hears grants and wake-ups
	rwIndex         string // "{N}:rw": an RWMutex's index of readers, waiting writers and given-up attempts by time
	semIndex        string // "{N}:sem": a Semaphore's index of permit holders and given-up attempts by time
}

// keysFor returns the keys of the lock name, under the Client's key prefix
// (WithKeyPrefix).
func (c *Client) keysFor(name string) (keys, error) { return prefixedKeys(c.defaults.keyPrefix, name) }

// keysFor returns the keys of the lock name without a key prefix.
func keysFor(name string) (keys, error) { return prefixedKeys("", name) }

// prefixedKeys returns the keys of the lock name under prefix: prefix, then
// "{name}", then each key's suffix.
func prefixedKeys(prefix, name string) (keys, error) {
	if name == "" {
		return keys{}, invalidf("locks: empty lock name; name the resource the lock guards, such as \"orders:42\"")
	}
	if len(name) > MaxNameBytes {
		return keys{}, invalidf("locks: lock name %s is longer than MaxNameBytes (%d); name the resource with a shorter key, such as a hash of it",
			shortQuote(name), MaxNameBytes)
	}
	if len(prefix)+len(name) > MaxNameBytes {
		// The scripts refuse a key longer than a name of MaxNameBytes in
		// braces: the prefix takes its share.
		return keys{}, invalidf("locks: lock name %s with the key prefix %s is longer than MaxNameBytes (%d); name the resource with a shorter key, such as a hash of it",
			shortQuote(name), shortQuote(prefix), MaxNameBytes)
	}
	if strings.ContainsAny(name, "{}") {
		return keys{}, invalidf("locks: lock name %s contains '{' or '}'; locks add their own hash tag, so drop the braces", shortQuote(name))
	}
	// A Mutex made per request is the common use: every key is a slice of
	// one string, since a concatenation per key was 5% of a contended
	// client's CPU.
	var b strings.Builder
	b.Grow(len(keySuffixes)*(len(prefix)+len(name)+2) + keySuffixBytes)
	var ends [len(keySuffixes)]int
	for i, suffix := range keySuffixes {
		b.WriteString(prefix)
		b.WriteByte('{')
		b.WriteString(name)
		b.WriteByte('}')
		b.WriteString(suffix)
		ends[i] = b.Len()
	}
	all := b.String()
	key := func(i keyIndex) string {
		if i == 0 {
			return all[:ends[0]]
		}
		return all[ends[i-1]:ends[i]]
	}
	return keys{
		name: name, text: shortText(name), lock: key(keyLock), queue: key(keyQueue), semQueue: key(keySemQueue),
		gone: key(keyGone), channel: key(keyChannel), grantPrefix: key(keyGrantPrefix), rwIndex: key(keyRWIndex),
		semIndex: key(keySemIndex),
	}, nil
}

// keyIndex orders keySuffixes.
type keyIndex int

const (
	keyLock keyIndex = iota
	keyQueue
	keySemQueue
	keyGone
	keyChannel
	keyGrantPrefix
	keyRWIndex
	keySemIndex
)

// keySuffixes follow the hash tag {name} in each key, by keyIndex.
var keySuffixes = [...]string{
	keyLock: "", keyQueue: ":queue", keySemQueue: ":squeue", keyGone: ":gone",
	keyChannel: ":released", keyGrantPrefix: ":grant:",
	keyRWIndex:  ":rw",
	keySemIndex: ":sem",
}

// keySuffixBytes is the length of all keySuffixes together.
var keySuffixBytes = func() int {
	n := 0
	for _, s := range keySuffixes {
		n += len(s)
	}
	return n
}()

// newToken makes an owner token: 88 random bits as 15 base64url
// characters. Tokens are short because they sit in every hold record,
// which must stay within a listpack value (64 bytes) to keep a held lock
// small; 88 bits keep two random owners apart for good.
func newToken() string { return randomID(11) }

// newShortID makes a client or attempt id: 64 random bits as 11
// base64url characters. They only need to differ among the clients and
// calls of one lock name at a time.
func newShortID() string { return randomID(8) }

// randomID encodes n random bytes as unpadded base64url, whose alphabet
// holds neither a tab nor a slash (the separators of the hold records and
// of an attempt's mode).
func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("locks: crypto/rand failed: " + err.Error()) // the runtime guarantees it does not
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

var errNilContext = errors.New("nil context; pass context.Background() or a context with a deadline")

// checkCtx rejects a nil context before it reaches go-redis. The call is
// named in two parts so that the common case builds no string.
func checkCtx(ctx context.Context, name, call string) error {
	if ctx == nil {
		return fmt.Errorf("locks: %s: %s: %w", name, call, errNilContext)
	}
	return nil
}

// wrapCtx makes a context error recognisable with errors.Is(err, ctx.Err()).
func wrapCtx(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%s: %w (%v)", what, ctxErr, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func isNil(err error) bool { return errors.Is(err, redis.Nil) }
