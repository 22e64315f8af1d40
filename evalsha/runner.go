package evalsha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

// Scripter runs registry scripts. *Runner (real Redis) and *simulate.Server
// (offline, virtual clock) both satisfy it, so code written against it runs
// the same way on both: replies have go-redis's shapes, a nil reply is
// redis.Nil, and script errors are *ScriptError.
type Scripter interface {
	Run(ctx context.Context, script *registry.Script, keys []string, args ...any) *redis.Cmd
}

var _ Scripter = (*Runner)(nil)

// Runner runs registry scripts on one go-redis client. It is safe for
// concurrent use; create one per client and share it.
type Runner struct {
	client redis.UniversalClient
	hook   func(Event)

	// What the server turned out not to support; learnt from errors.
	legacy atomic.Bool // cannot compile "#!lua": send LegacySource
	noRO   atomic.Bool // no EVALSHA_RO/EVAL_RO: send EVALSHA/EVAL

	calls, noScript, evals, readOnly, failures atomic.Uint64

	sharded    bool  // Subscribe uses SSUBSCRIBE
	shardedSet *bool // WithShardedPubSub's choice, if given

	batch  *batcher // nil when auto-pipelining is off
	optErr error    // the first invalid option, returned by New

	subOnce sync.Once
	sub     subscriber
	// classic is SubscribeClassic's multiplexer when Subscribe is sharded.
	classicOnce sync.Once
	classic     subscriber

	companions        []*registry.Script // WithCompanions
	companionsLoading atomic.Bool
	backgroundMu      sync.Mutex     // orders starting a companion load with Close
	closed            bool           // under backgroundMu: no background work may start
	background        sync.WaitGroup // the companion load under way; Close waits
}

// Option configures a Runner.
type Option func(*Runner)

// WithHook calls fn for every fallback and failure the Runner handles, for
// logging or metrics. fn runs on the goroutine that sent the call (with
// auto-pipelining, possibly another caller's) while the call holds its
// pipeline slot: it must be quick and must not run scripts on the Runner.
func WithHook(fn func(Event)) Option { return func(r *Runner) { r.hook = fn } }

// WithLegacyScripts makes the Runner send scripts without their "#!lua"
// line from the start, for servers known to predate Redis 7. Without it the
// Runner finds out from the first compile error.
func WithLegacyScripts() Option {
	return func(r *Runner) {
		r.legacy.Store(true)
		r.noRO.Store(true)
	}
}

// WithShardedPubSub forces Subscribe to use SSUBSCRIBE (sharded pub/sub,
// Redis 7) or plain SUBSCRIBE. Without it, cluster clients use sharded
// pub/sub and all other clients plain pub/sub; see Runner.ShardedPubSub.
func WithShardedPubSub(on bool) Option { return func(r *Runner) { r.shardedSet = &on } }

// EventKind says what a Runner event is about.
type EventKind int

// Event kinds.
const (
	// EventNoScript: the node did not have the script; it was re-sent as EVAL.
	EventNoScript EventKind = iota + 1
	// EventLegacyServer: the server cannot compile "#!lua"; legacy sources are used from now on.
	EventLegacyServer
	// EventNoReadOnlyCommands: the server has no EVALSHA_RO; EVALSHA is used from now on.
	EventNoReadOnlyCommands
	// EventError: the call failed (the error is in Event.Err). redis.Nil is not an error.
	EventError
	// EventCompanionLoadFailed: the background load of WithCompanions'
	// scripts failed (Event.Err; Event.Script is nil). Each script still
	// loads on its own first NOSCRIPT.
	EventCompanionLoadFailed
)

// String returns the kind's name, such as "NoScript", for logs.
func (k EventKind) String() string {
	switch k {
	case EventNoScript:
		return "NoScript"
	case EventLegacyServer:
		return "LegacyServer"
	case EventNoReadOnlyCommands:
		return "NoReadOnlyCommands"
	case EventError:
		return "Error"
	case EventCompanionLoadFailed:
		return "CompanionLoadFailed"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event describes something a Runner did beyond a plain EVALSHA.
type Event struct {
	Kind   EventKind
	Script *registry.Script
	Err    error
}

// Stats are counters since the Runner was created.
type Stats struct {
	Calls    uint64 // script calls made (Run, and each call of RunMany)
	NoScript uint64 // calls that came back NOSCRIPT and were re-sent with the source
	Evals    uint64 // EVAL/EVAL_RO commands sent (the source went over the wire)
	ReadOnly uint64 // calls sent as EVALSHA_RO or EVAL_RO
	Failures uint64 // calls that ended in an error other than redis.Nil
}

// New returns a Runner for client.
func New(client redis.UniversalClient, opts ...Option) (*Runner, error) {
	if client == nil {
		return nil, errors.New("evalsha: New needs a go-redis client (redis.NewClient, NewClusterClient, NewFailoverClient), got nil")
	}
	r := &Runner{client: client, batch: &batcher{max: defaultMaxInFlight}}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("evalsha: New got a nil Option; pass options such as evalsha.WithHook(fn)")
		}
		o(r)
	}
	if r.optErr != nil {
		return nil, r.optErr
	}
	if r.batch != nil {
		r.batch.r = r
	}
	if r.shardedSet != nil {
		r.sharded = *r.shardedSet
	} else {
		_, r.sharded = client.(*redis.ClusterClient)
	}
	return r, nil
}

// Client returns the client the Runner sends commands through (nil for a
// nil Runner).
func (r *Runner) Client() redis.UniversalClient {
	if r == nil {
		return nil
	}
	return r.client
}

// errNoRunner is what the methods of a nil Runner, or of one not made by
// New, return.
var errNoRunner = errors.New("evalsha: the Runner is nil or was not made by evalsha.New; create one with evalsha.New(client)")

// usable reports whether r was made by New.
func (r *Runner) usable() bool { return r != nil && r.client != nil }

// checkContext refuses a nil context and an ended one with an error that
// says which; an ended context's error wraps ctx.Err(), so
// errors.Is(err, context.Canceled) holds. what names the call.
func checkContext(ctx context.Context, what string) error {
	if ctx == nil {
		return fmt.Errorf("evalsha: %s: nil context: pass context.Background() or a context with a deadline", what)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("evalsha: %s: %w", what, err)
	}
	return nil
}

// scriptName names s in errors, also when it is nil.
func scriptName(s *registry.Script) string {
	if s == nil {
		return "<nil script>"
	}
	return s.ID()
}

// Stats returns the Runner's counters (zero for a nil Runner).
func (r *Runner) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	return Stats{
		Calls: r.calls.Load(), NoScript: r.noScript.Load(), Evals: r.evals.Load(),
		ReadOnly: r.readOnly.Load(), Failures: r.failures.Load(),
	}
}

// ScriptError is an error raised by (or while sending) a script, naming it.
type ScriptError struct {
	Script string // name@version
	Err    error  // the redis error (redis.Error), a context error, or a network error
}

func (e *ScriptError) Error() string {
	if e == nil || e.Err == nil {
		return "evalsha: script error without a cause"
	}
	var call *registry.CallError
	if errors.As(e.Err, &call) {
		return e.Err.Error() // it names the script already
	}
	return e.Script + ": " + e.Err.Error()
}

// Unwrap returns the underlying error, so errors.Is(err, context.Canceled)
// and errors.As(err, &redisErr) work.
func (e *ScriptError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Run runs script with keys and args and returns go-redis's *redis.Cmd, so
// the usual accessors apply (Int64, Text, Slice, ...). A nil reply is
// redis.Nil; other errors are *ScriptError. Concurrent calls share
// pipelines unless WithoutAutoPipelining was given (see the package doc); a
// call whose context ends while it waits for its batch returns the
// context's error at once, though the batch may still run it.
func (r *Runner) Run(ctx context.Context, script *registry.Script, keys []string, args ...any) *redis.Cmd {
	if !r.usable() {
		return failedCmd(ctx, errNoRunner)
	}
	r.calls.Add(1)
	if err := checkCall(script, keys, args); err != nil {
		return r.failed(ctx, script, err)
	}
	if ctx == nil || ctx.Err() != nil {
		return r.failed(ctx, script, &ScriptError{Script: script.ID(), Err: checkContext(ctx, "run")})
	}
	c := &Call{Script: script, Keys: keys, Args: args}
	if r.batch != nil {
		return r.batch.run(ctx, c)
	}
	return r.runOne(ctx, c)
}

// runOne sends one call on its own, with its fallbacks.
func (r *Runner) runOne(ctx context.Context, c *Call) *redis.Cmd {
	cmd := r.send(ctx, r.client, c, attemptEvalSha)
	if err := cmd.Err(); err != nil && err != redis.Nil {
		return r.recover(ctx, c, cmd)
	}
	return cmd
}

// recover handles a failed first attempt of a single call: NOSCRIPT, a
// missing *_RO command, or a server that cannot compile "#!lua".
func (r *Runner) recover(ctx context.Context, c *Call, cmd *redis.Cmd) *redis.Cmd {
	step := attemptEvalSha
	for round := 1; round < maxRounds; round++ {
		next, ok := r.nextAttempt(c.Script, step, cmd.Err())
		if !ok {
			return r.finish(c.Script, cmd)
		}
		step = next
		cmd = r.send(ctx, r.client, c, step)
		if err := cmd.Err(); err == nil || err == redis.Nil {
			return cmd
		}
	}
	return r.finish(c.Script, cmd)
}

type attempt int

const (
	attemptEvalSha    attempt = iota
	attemptEval               // EVAL with the source the server is believed to compile
	attemptEvalLegacy         // EVAL with the legacy source, after a shebang compile error
	attemptGiveUp
)

// nextAttempt decides, from the error of the attempt just made, what to send
// next. It is the one place that knows the fallbacks, shared by Run and
// RunMany. It records what it learns about the server; the decision itself
// depends only on the error, because in a pipeline several calls sent before
// the lesson was learnt fail the same way.
func (r *Runner) nextAttempt(s *registry.Script, last attempt, err error) (attempt, bool) {
	switch {
	case err == nil || err == redis.Nil:
		return attemptGiveUp, false
	case s.ReadOnly() && isUnknownCommand(err):
		if !r.noRO.Swap(true) {
			r.emit(Event{Kind: EventNoReadOnlyCommands, Script: s, Err: err})
		}
		return last, true
	case last == attemptEvalSha && IsNoScript(err):
		r.noScript.Add(1)
		r.emit(Event{Kind: EventNoScript, Script: s, Err: err})
		r.loadCompanions()
		return attemptEval, true
	case last == attemptEval && needsLegacySource(s, err):
		if !r.legacy.Swap(true) {
			r.emit(Event{Kind: EventLegacyServer, Script: s, Err: err})
		}
		return attemptEvalLegacy, true
	}
	return attemptGiveUp, false
}

// send queues (on a pipeliner) or sends (on the client) one attempt of c.
func (r *Runner) send(ctx context.Context, via redis.Cmdable, c *Call, a attempt) *redis.Cmd {
	ro := c.Script.ReadOnly() && !r.noRO.Load()
	if ro {
		r.readOnly.Add(1)
	}
	if a == attemptEval || a == attemptEvalLegacy {
		r.evals.Add(1)
		src := r.source(c.Script)
		if a == attemptEvalLegacy {
			src = c.Script.LegacySource()
		}
		if ro {
			return via.EvalRO(ctx, src, c.Keys, c.Args...)
		}
		return via.Eval(ctx, src, c.Keys, c.Args...)
	}
	if ro {
		return via.EvalShaRO(ctx, r.sha(c.Script), c.Keys, c.Args...)
	}
	return via.EvalSha(ctx, r.sha(c.Script), c.Keys, c.Args...)
}

func (r *Runner) sha(s *registry.Script) string {
	if r.legacy.Load() {
		return s.LegacySHA1()
	}
	return s.SHA1
}

func (r *Runner) source(s *registry.Script) string {
	if r.legacy.Load() {
		return s.LegacySource()
	}
	return s.Source
}

// finish wraps a final error with the script's name.
func (r *Runner) finish(s *registry.Script, cmd *redis.Cmd) *redis.Cmd {
	if err := cmd.Err(); err != nil && err != redis.Nil {
		var se *ScriptError
		if !errors.As(err, &se) {
			err = &ScriptError{Script: s.ID(), Err: err}
			cmd.SetErr(err)
		}
		r.failures.Add(1)
		r.emit(Event{Kind: EventError, Script: s, Err: err})
	}
	return cmd
}

// failedCmd is a command that failed before it was sent.
func failedCmd(ctx context.Context, err error) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}

func (r *Runner) failed(ctx context.Context, s *registry.Script, err error) *redis.Cmd {
	cmd := failedCmd(ctx, err)
	r.failures.Add(1)
	r.emit(Event{Kind: EventError, Script: s, Err: err})
	return cmd
}

func (r *Runner) emit(e Event) {
	if r.hook != nil {
		r.hook(e)
	}
}

// checkCall rejects bad input before anything goes over the wire.
func checkCall(s *registry.Script, keys []string, args []any) error {
	return CheckCall(s, len(keys), len(args))
}

var errNilScript = errors.New("evalsha: nil script; get scripts from a registry.Registry (reg.Get(\"name\"))")

// CheckCall returns the *ScriptError that Run returns, without sending
// anything, when a call with nkeys keys and nargs args does not match what
// the script's header declares, such as "ratelimit.bucket@1: takes exactly
// 3 ARGV (capacity, rate, now), got 2; pass what the header's keys: and
// args: lines declare". Offline backends (simulate) use it to refuse the
// same calls with the same error.
func CheckCall(s *registry.Script, nkeys, nargs int) error {
	if s == nil {
		return errNilScript
	}
	if err := s.CheckCall(nkeys, nargs); err != nil {
		return &ScriptError{Script: s.ID(), Err: err}
	}
	return nil
}

// IsNoScript reports whether err is the server's NOSCRIPT error. Some proxies
// prefix errors with "ERR ", so that prefix is tolerated.
func IsNoScript(err error) bool {
	if err == nil {
		return false
	}
	var se *ScriptError
	if errors.As(err, &se) {
		err = se.Err
	}
	msg := strings.TrimSpace(err.Error())
	msg = strings.TrimPrefix(msg, "ERR ")
	return strings.HasPrefix(msg, "NOSCRIPT")
}

func isUnknownCommand(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unknown command") && (strings.Contains(msg, "_ro'") || strings.Contains(msg, "_ro`"))
}
