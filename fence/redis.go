package fence

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// Scripter runs a registry script: an *evalsha.Runner on a real Redis, a
// *simulate.Server offline.
type Scripter interface {
	Run(ctx context.Context, script *registry.Script, keys []string, args ...any) *redis.Cmd
}

// ScriptID is the script the Redis fence runs.
const ScriptID = "fence.write@1"

// MaxCommands is the most commands one Redis fenced write runs.
const MaxCommands = 64

var fenceScript = sync.OnceValues(func() (*registry.Script, error) {
	reg, err := registry.New(lua.FS)
	if err != nil {
		return nil, fmt.Errorf("fence: embedded scripts: %w", err)
	}
	return reg.Lookup(ScriptID)
})

// Cmd is one command of a Redis fenced write: a write (or read) of one
// key. Build it with the functions below (Set, HSet, Del, ...).
type Cmd struct {
	name string
	key  string
	args []string
}

// Command returns a Cmd of any command fence.write@1 runs (see the
// script's header): name, its key, then its other arguments.
func Command(name, key string, args ...string) Cmd {
	return Cmd{name: strings.ToUpper(name), key: key, args: args}
}

// Set is SET key value.
func Set(key, value string) Cmd { return Command("SET", key, value) }

// Get is GET key: its reply is the value as the write found it.
func Get(key string) Cmd { return Command("GET", key) }

// Del is DEL key.
func Del(key string) Cmd { return Command("DEL", key) }

// HSet is HSET key field value [field value ...].
func HSet(key string, fieldValues ...string) Cmd { return Command("HSET", key, fieldValues...) }

// IncrBy is INCRBY key n: its reply is the new value.
func IncrBy(key string, n int64) Cmd { return Command("INCRBY", key, strconv.FormatInt(n, 10)) }

// Redis fences writes to keys of a Redis server with the script
// fence.write@1: one call checks the holder's token against the name's
// fence hash, raises it, and runs the writes, so no other write can come
// between the check and the data. The fence hash and every data key of
// one call carry the same hash tag, so the call runs on one cluster slot.
//
// The fence lives in the data Redis: a data Redis that loses its data
// (a restart without persistence, a failover to a replica that lagged)
// loses the fence with it, and a stale holder can write once more until
// the next holder writes. Persist with appendfsync always where that
// matters, or keep the data in a database fenced by SQL.
type Redis struct {
	r Scripter
	s settings
}

// NewRedis returns a Redis fence that runs its script through r.
func NewRedis(r Scripter, opts ...Option) (*Redis, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: NewRedis got a nil Scripter; pass evalsha.New(client) or a simulate.Server", ErrInvalidArgument)
	}
	f := &Redis{r: r, s: defaults()}
	if err := f.s.apply(opts); err != nil {
		return nil, err
	}
	if _, err := fenceScript(); err != nil {
		return nil, err
	}
	return f, nil
}

// Key returns the fence key of lock name in the slot of hash tag tag:
// "{tag}fence:name".
func Key(tag, name string) string { return "{" + tag + "}fence:" + name }

// Write checks h's token against the fence of h.Name() in the slot of
// tag and, when it passes, runs cmds, all in one script call. Every key of
// cmds must carry the hash tag {tag}. It returns the commands' replies in
// order, or a *StaleError (ErrStale) when a newer holder wrote, with
// nothing written. A command that fails on the server (a key of the
// wrong type) stops the call there: the fence is raised and the commands
// before it have run, as with any Redis script.
func (f *Redis) Write(ctx context.Context, h Holder, tag string, cmds ...Cmd) ([]any, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: a nil context; pass context.Background() or a request's context", ErrInvalidArgument)
	}
	if err := checkHolder(h); err != nil {
		return nil, err
	}
	if tag == "" || strings.ContainsAny(tag, "{}") {
		return nil, fmt.Errorf("%w: hash tag %q: pass the tag every key of the write carries, without braces (\"orders\" for keys \"{orders}:...\")", ErrInvalidArgument, tag)
	}
	if len(cmds) > MaxCommands {
		return nil, fmt.Errorf("%w: %d commands: a fenced write runs at most %d (MaxCommands)", ErrInvalidArgument, len(cmds), MaxCommands)
	}
	fenceKey := Key(tag, h.Name())
	keys := []string{fenceKey}
	index := map[string]int{}
	args := []any{strconv.FormatInt(h.Token(), 10), h.Owner(), strconv.FormatInt(f.s.maxAhead.Microseconds(), 10)}
	for i, c := range cmds {
		if c.name == "" {
			return nil, fmt.Errorf("%w: command %d is empty; build it with fence.Set, fence.Command, ...", ErrInvalidArgument, i+1)
		}
		if got := hashTag(c.key); got != tag {
			return nil, fmt.Errorf("%w: command %d (%s %s): the key must carry the hash tag {%s}, as the fence does, so the write runs on one cluster slot", ErrInvalidArgument, i+1, c.name, c.key, tag)
		}
		k, ok := index[c.key]
		if !ok {
			keys = append(keys, c.key)
			k = len(keys)
			index[c.key] = k
		}
		args = append(args, c.name, strconv.Itoa(k), strconv.Itoa(len(c.args)))
		for _, a := range c.args {
			args = append(args, a)
		}
	}
	script, err := fenceScript()
	if err != nil {
		return nil, err
	}
	reply, err := f.r.Run(ctx, script, keys, args...).Slice()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fence: %s on %q: %w (%w)", ScriptID, h.Name(), ctx.Err(), err)
		}
		return nil, fmt.Errorf("fence: %s on %q: %w", ScriptID, h.Name(), err)
	}
	if len(reply) == 0 {
		return nil, fmt.Errorf("fence: %s on %q: an empty reply", ScriptID, h.Name())
	}
	switch code, _ := reply[0].(int64); code {
	case 1:
		return reply[1:], nil
	case 0:
		if len(reply) == 3 {
			high, _ := reply[1].(int64)
			owner, _ := reply[2].(string)
			return nil, &StaleError{Name: h.Name(), Token: h.Token(), Owner: h.Owner(), Highest: Mark{Token: high, Owner: owner}}
		}
	case -1:
		if len(reply) == 2 {
			now, _ := reply[1].(int64)
			return nil, fmt.Errorf("%w: %q: token %d is %d µs ahead of the Redis server's clock, more than the %v allowed (WithMaxAhead); check the lock server's clock",
				ErrTokenAhead, h.Name(), h.Token(), h.Token()-now, f.s.maxAhead)
		}
	}
	return nil, fmt.Errorf("fence: %s on %q: unexpected reply %v", ScriptID, h.Name(), reply)
}

// Advance raises the fence of h.Name() in the slot of tag to h's token,
// writing no data: call it right after Lock.
func (f *Redis) Advance(ctx context.Context, h Holder, tag string) error {
	_, err := f.Write(ctx, h, tag)
	return err
}

// hashTag is the part of key between its first "{" and the next "}", as
// Redis Cluster hashes it ("" when there is none).
func hashTag(key string) string {
	s := strings.IndexByte(key, '{')
	if s < 0 {
		return ""
	}
	e := strings.IndexByte(key[s+1:], '}')
	if e <= 0 {
		return ""
	}
	return key[s+1 : s+1+e]
}
