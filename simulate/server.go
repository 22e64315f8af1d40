package simulate

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/registry"
	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"
)

// Server is an offline Redis 7.0 for scripts: a keyspace, a clock and
// Redis's Lua sandbox. It is safe for concurrent use; each script runs
// atomically, as in Redis (one lock covers the keyspace for the whole run).
//
// Scripts meet Lua 5.1's and Redis's limits with their error texts: at most
// 7,999 values from unpack(t) ("too many results to unpack"; Go functions
// may hold 8,000 values, arguments included), 16,384 nested calls on a
// fresh interpreter and 20,000 after its first "stack overflow" (SCRIPT
// FLUSH starts a fresh one, as in Redis), 200 nested calls through
// metamethods, pcall and other Go functions ("C stack overflow"), and
// sources nested past the parser's 200 levels ("chunk has too many syntax
// levels"; within two levels of that limit the simulator may compile what
// Redis refuses). Where
// Redis's Lua allocates until memory runs out, the simulator has a budget:
// a string of at most 512 MiB (string.rep, "..", table.concat,
// string.format, string.gsub, the encoders) and table parts of at most
// 2^24 slots; past it a script fails with Lua's memory error, "ERR Error
// running script <sha>, not enough memory", which pcall catches as
// "not enough memory". A Go panic inside a run (a simulator bug) fails
// that run with "ERR Error running script <sha>, <panic>" and the server
// carries on with a fresh interpreter.
type Server struct {
	mu             sync.Mutex
	ks             *Keyspace
	clock          Clock
	keyDiscipline  bool
	crossSlot      bool
	protocol       int
	rand           lrand48
	seed           int64
	undefinedOrder UndefinedOrder
	sb             *sandbox
	scripts        map[string]*compiled
	functions      *functionStore
	trace          ring[TraceEntry]
	logs           ring[LogLine]
	subs           subscribers
	work           meter
	profile        Profile // the server line reproduced (profile.go)
	configErr      error   // a refused option, returned by every call
}

// Option configures a Server.
type Option func(*Server)

// WithClock makes the server read time from c; use a *VirtualClock to make
// TTLs pass in tests without waiting. The default, and what a nil c gives,
// is the wall clock.
func WithClock(c Clock) Option {
	return func(s *Server) {
		if vc, ok := c.(*VirtualClock); ok && vc == nil {
			c = nil // a nil *VirtualClock is no clock: the wall clock it is
		}
		s.clock = c
	}
}

// WithKeyDiscipline switches the check that scripts only touch keys passed
// in KEYS (default on). A violation fails the run with a *DisciplineError.
func WithKeyDiscipline(on bool) Option { return func(s *Server) { s.keyDiscipline = on } }

// WithCrossSlotCheck switches the check that a script's KEYS share one
// cluster slot (default on; scripts declaring allow-cross-slot-keys are exempt).
func WithCrossSlotCheck(on bool) Option { return func(s *Server) { s.crossSlot = on } }

// WithProtocol chooses the RESP version the replies take on their way to
// Go values: 3 (the default, as go-redis v9 speaks) or 2. It changes, for
// example, whether a script's {double=1.5} arrives as float64 or "1.5".
// Values other than 2 are taken as 3.
func WithProtocol(v int) Option {
	return func(s *Server) {
		s.protocol = 3
		if v == 2 {
			s.protocol = 2
		}
	}
}

// WithSeed seeds math.random as math.randomseed(seed) would. Without it the
// generator starts where a fresh redis-server's does.
// It also seeds UndefinedOrderShuffled and the picks of SRANDMEMBER,
// ZRANDMEMBER, HRANDFIELD and RANDOMKEY.
func WithSeed(seed int64) Option {
	return func(s *Server) {
		s.rand.seed(int32(seed))
		s.seed = seed
		s.ks.rng = rand.New(rand.NewSource(seed))
	}
}

// WithTraceLimit sets how many commands (and, separately, log lines) the
// server remembers for Trace and Logs, newest kept (default 10,000; 0 turns
// recording off).
func WithTraceLimit(n int) Option {
	return func(s *Server) { s.trace.limit, s.logs.limit = n, n }
}

// New returns an empty server.
func New(opts ...Option) *Server {
	s := &Server{
		ks:            NewKeyspace(),
		clock:         WallClock{},
		keyDiscipline: true,
		crossSlot:     true,
		protocol:      3,
		rand:          lrand48{x: lrandInit},
		scripts:       map[string]*compiled{},
		functions:     newFunctionStore(),
		trace:         ring[TraceEntry]{limit: 10000},
		logs:          ring[LogLine]{limit: 10000},
	}
	for _, o := range opts {
		if o != nil { // New has no error to return; a nil Option changes nothing
			o(s)
		}
	}
	if s.clock == nil {
		s.clock = WallClock{}
	}
	if s.undefinedOrder == UndefinedOrderShuffled {
		s.ks.shuffle = newShuffler(s.seed)
	}
	return s
}

// Clock returns the server's clock.
func (s *Server) Clock() Clock {
	if s == nil {
		return nil
	}
	return s.clock
}

// sandbox returns the Lua interpreter, creating it on first use. The
// caller holds s.mu.
func (s *Server) sandbox() *sandbox {
	if s.sb == nil {
		s.sb = newSandbox(s)
	}
	return s.sb
}

// checkCall refuses, with an error saying which, a call the server cannot
// serve: a nil or zero Server (one not made by New), a nil context, or a
// context that has ended (the error wraps ctx.Err()). what and name name
// the call in the error, as in "run script ratelimit@1"; they are joined
// only for an error, so a call that passes allocates nothing.
func (s *Server) checkCall(ctx context.Context, what, name string) error {
	if s == nil || s.ks == nil {
		return fmt.Errorf("simulate: %s%s: the Server is nil or was not made by simulate.New; create one with simulate.New()", what, name)
	}
	if ctx == nil {
		return fmt.Errorf("simulate: %s%s: nil context: pass context.Background() or a context with a deadline", what, name)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("simulate: %s%s: %w", what, name, err)
	}
	if s.configErr != nil {
		return s.configErr
	}
	return nil
}

// errNilScript is what Run and FunctionRunner.Run answer a nil script.
var errNilScript = errors.New("simulate: Run needs a script; got nil (load one with registry.New or registry.ParseScript)")

// Run runs a registry script as EVALSHA would (loading it first if needed),
// with the flags of its "#!lua" line. A call with fewer or more keys or
// args than the script's header declares is refused before it runs, as
// evalsha.Runner refuses it. keys become KEYS and args ARGV,
// converted as go-redis converts them (see the package documentation).
// The reply has the Go shape go-redis gives: int64, string, []any,
// redis.Nil, or an error carrying Redis's exact text. A script that breaks
// the key discipline fails with a *DisciplineError; other errors (but
// redis.Nil) are *evalsha.ScriptError, as evalsha.Runner returns them.
func (s *Server) Run(ctx context.Context, script *registry.Script, keys []string, args ...any) *redis.Cmd {
	if script == nil {
		cmd := redis.NewCmd(ctx, "evalsha")
		cmd.SetErr(errNilScript)
		return cmd
	}
	if err := evalsha.CheckCall(script, len(keys), len(args)); err != nil {
		// As evalsha.Runner does, so both backends refuse the same calls.
		cmd := redis.NewCmd(ctx, "evalsha", script.SHA1, len(keys))
		cmd.SetErr(err)
		return cmd
	}
	if err := s.checkCall(ctx, "run script ", script.ID()); err != nil {
		cmd := redis.NewCmd(ctx, "evalsha", script.SHA1, len(keys))
		cmd.SetErr(err)
		return cmd
	}
	cmd := s.run(ctx, script.Source, script.SHA1, script, keys, args, false)
	var discipline *DisciplineError
	if err := cmd.Err(); err != nil && err != redis.Nil && !errors.As(err, &discipline) {
		// evalsha's error type and text, "name@version: <server text>", so
		// errors.As(err, &scriptErr) holds offline as against real Redis. A
		// DisciplineError (no real server raises it) already names the script.
		cmd.SetErr(&evalsha.ScriptError{Script: script.ID(), Err: err})
	}
	return cmd
}

// RunSource runs Lua source as EVAL would: a "#!lua" first line sets its
// flags. Errors and the trace name the script by the SHA1 of src.
func (s *Server) RunSource(ctx context.Context, src string, keys []string, args ...any) *redis.Cmd {
	sha := sha1Hex(src)
	return s.run(ctx, src, sha, nil, keys, args, false)
}

// run runs src (whose SHA1 is sha); script is the registry script it comes
// from, or nil for RunSource.
func (s *Server) run(ctx context.Context, src, sha string, script *registry.Script, keys []string, args []any, ro bool) *redis.Cmd {
	cmd := redis.NewCmd(ctx, "evalsha", sha, len(keys))
	if err := s.checkCall(ctx, "run script ", sha); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	reply, err := s.runScript(ctx, src, sha, script, keys, args, ro)
	return s.complete(cmd, reply, err)
}

// runScript compiles src (whose SHA1 is sha) and runs it: a compile error
// comes back as the error reply Redis gives, err is for what is not a reply.
// Run, RunSource and RunReply share it.
func (s *Server) runScript(ctx context.Context, src, sha string, script *registry.Script, keys []string, args []any, ro bool) (Reply, error) {
	argv, err := argStrings(make([]string, 0, len(args)), args, true)
	if err != nil {
		return Reply{}, err
	}
	var pubs []publication
	reply, err := s.locked(scriptPanic, sha, func() (Reply, error) {
		c, errText := s.compile(src, sha)
		if errText != "" {
			return errorReply(errText), nil
		}
		var (
			reply Reply
			err   error
		)
		reply, pubs, err = s.runLocked(ctx, c, c.idFor(script), keys, argv, ro)
		return reply, err
	})
	s.deliver(pubs)
	return reply, err
}

// locked runs fn with s.mu held and releases it however fn ends. A Go
// panic inside fn (a bug of the simulator, never the caller's fault) comes
// back as an error reply, format filled with name and the first 100 bytes
// of the panic's text, as Redis reports a script that failed outside Lua
// ("ERR Error running script <sha>, <message>"). The interpreters it may have left
// half-way are discarded, so the next call gets fresh ones; the keyspace
// keeps what ran before the panic, as Redis keeps the writes of a script
// that fails.
func (s *Server) locked(format, name string, fn func() (Reply, error)) (reply Reply, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			s.recoverPanic()
			msg := fmt.Sprint(p)
			if ae, ok := p.(*lua.ApiError); ok {
				msg = luaMessage(ae.Object.String()) // without the Go traceback
			}
			reply, err = errorReply(noNewlines(fmt.Sprintf(format, truncate(name, 64), truncate(msg, 100)))), nil
		}
	}()
	return fn()
}

// The error replies of a run that panicked (see locked): a script's (or a
// function's), in Redis's words for a script that failed outside Lua, and
// a command's.
const (
	scriptPanic  = "ERR Error running script %s, %s"
	commandPanic = "ERR simulate: command '%s' failed inside the simulator: %s"
)

// truncate cuts s to at most n bytes, as Redis's "%.100s" does.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// recoverPanic discards the interpreters after a Go panic (s.mu held):
// a panic may have left a run half-way, with the run state set.
func (s *Server) recoverPanic() {
	if s.sb != nil {
		s.sb.run = nil
		s.sb = nil
	}
	if s.functions != nil && s.functions.eng != nil {
		s.functions.restart(s)
	}
}

// Do runs one command directly, as a client would (to seed data or inspect
// it). EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH run
// scripts through the same sandbox as Run; FUNCTION LOAD/DELETE/LIST/
// FLUSH/DUMP/RESTORE, FCALL and FCALL_RO run Redis 7 function libraries in
// the functions engine's own interpreter, as Redis keeps them apart.
func (s *Server) Do(ctx context.Context, args ...any) *redis.Cmd {
	reply, err := s.do(ctx, "Do", args)
	return s.complete(redis.NewCmd(ctx, args...), reply, err)
}

// do runs one command for Do or DoReply (caller names it in errors).
func (s *Server) do(ctx context.Context, caller string, args []any) (Reply, error) {
	if err := s.checkCall(ctx, caller, ""); err != nil {
		return Reply{}, err
	}
	argv, err := argStrings(make([]string, 0, len(args)), args, false)
	if err != nil {
		return Reply{}, err
	}
	if len(argv) == 0 {
		return Reply{}, fmt.Errorf("simulate: %s needs a command name", caller)
	}
	var pubs []publication
	reply, err := s.locked(commandPanic, argv[0], func() (Reply, error) {
		reply, err, ok := s.scriptCommand(ctx, argv, &pubs)
		if !ok {
			cc := CallContext{Now: s.clock.Now(), Clock: s.clock, Publish: s.publisher(&pubs), RESP: s.protocol, profile: s.profile}
			reply = s.execMetered(&cc, argv)
		}
		return reply, err
	})
	s.deliver(pubs)
	return reply, err
}

// Dump returns the live keys with their values and TTLs, for tests that
// compare keyspaces.
func (s *Server) Dump() []KeyDump {
	if s == nil || s.ks == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ks.Dump(s.clock.Now())
}

// complete stores in cmd the error err, or else the reply r in go-redis's
// shape for the server's protocol, and returns cmd.
func (s *Server) complete(cmd *redis.Cmd, r Reply, err error) *redis.Cmd {
	if err != nil {
		cmd.SetErr(err)
		return cmd
	}
	if s.protocol == 2 {
		r = downgrade(r, s.profile)
	}
	if r.Kind == KindNil {
		cmd.SetErr(redis.Nil)
		return cmd
	}
	if err := goMapKeys(r); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	v, err := ToGo(r)
	if err != nil {
		cmd.SetErr(err)
		return cmd
	}
	cmd.SetVal(v)
	return cmd
}

// goMapKeys rejects a RESP3 map whose key is an aggregate, which a script
// can return ({map = {[{1}] = 1}}) but no Go map can hold: go-redis panics
// reading one from a real server; the simulator reports it instead.
func goMapKeys(r Reply) error {
	if r.Kind == KindMap {
		for i := 0; i < len(r.Elems); i += 2 {
			switch r.Elems[i].Kind {
			case KindArray, KindMap, KindSet:
				return errors.New("simulate: the reply is a map with a table as a key, which go-redis cannot represent " +
					"(it panics on such a reply from a real server); use string or number keys, or WithProtocol(2)")
			}
		}
	}
	for i := range r.Elems {
		if err := goMapKeys(r.Elems[i]); err != nil {
			return err
		}
	}
	return nil
}
