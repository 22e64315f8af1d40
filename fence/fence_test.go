package fence_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/simulate"
)

// lease is a Holder of a test's own.
type lease struct {
	name, owner string
	token       int64
}

func (l lease) Name() string  { return l.name }
func (l lease) Token() int64  { return l.token }
func (l lease) Owner() string { return l.owner }

func TestAdmit(t *testing.T) {
	high := fence.Mark{Token: 100, Owner: "a"}
	for _, c := range []struct {
		l    lease
		pass bool
	}{
		{lease{"n", "b", 101}, true},
		{lease{"n", "a", 100}, true},  // the same lease again
		{lease{"n", "b", 100}, false}, // equal, another owner
		{lease{"n", "a", 99}, false},
		{lease{"n", "b", 1}, false},
	} {
		err := fence.Admit(c.l, high)
		if (err == nil) != c.pass {
			t.Errorf("Admit(%+v, %+v) = %v, want pass %v", c.l, high, err, c.pass)
		}
		if err != nil {
			var se *fence.StaleError
			if !errors.Is(err, fence.ErrStale) || !errors.As(err, &se) || se.Highest != high || se.Token != c.l.token {
				t.Errorf("Admit(%+v): %v is not a StaleError naming both tokens", c.l, err)
			}
			if !strings.Contains(err.Error(), `"n"`) || !strings.Contains(err.Error(), "100") {
				t.Errorf("the error %q does not name the lock and the highest token", err)
			}
		}
	}
	if err := fence.Admit(lease{"n", "x", 1}, fence.Mark{}); err != nil {
		t.Errorf("a first write was refused: %v", err)
	}
}

func TestOptionsRefuseBadValues(t *testing.T) {
	for _, o := range []fence.Option{fence.WithTable("x; drop"), fence.WithMaxAhead(-1), fence.WithLockTimeout(0),
		fence.WithRetries(0), fence.WithClock(nil), fence.WithRetryable(nil), nil} {
		if _, err := fence.NewRedis(simulate.New(), o); !errors.Is(err, fence.ErrInvalidArgument) {
			t.Errorf("an invalid option: %v, want ErrInvalidArgument", err)
		}
	}
	if _, err := fence.NewSQL(nil, fence.Postgres); !errors.Is(err, fence.ErrInvalidArgument) {
		t.Errorf("NewSQL(nil): %v", err)
	}
	if _, err := fence.TableSQL(fence.Dialect(9), "t"); !errors.Is(err, fence.ErrInvalidArgument) {
		t.Errorf("TableSQL of an unknown dialect: %v", err)
	}
}

// scripters are the Redis fence's backends: the simulator, miniredis and
// a real redis-server.
func scripters(t *testing.T) map[string]fence.Scripter {
	mr := miniredis.RunT(t)
	mc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { mc.Close() })
	out := map[string]fence.Scripter{"simulator": simulate.New(), "miniredis": must(evalsha.New(mc))}
	if _, ok := redistest.Available(); ok || os.Getenv("REDLUA_REQUIRE_SERVER") == "1" {
		out["redis-server"] = must(evalsha.New(redistest.Standalone(t).Client()))
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestRedisFence(t *testing.T) {
	ctx := context.Background()
	for name, sc := range scripters(t) {
		t.Run(name, func(t *testing.T) {
			f, err := fence.NewRedis(sc)
			if err != nil {
				t.Fatal(err)
			}
			a := lease{"job", "a", 1_700_000_000_000_000}
			b := lease{"job", "b", a.token + 5}
			reply, err := f.Write(ctx, a, "t", fence.Set("{t}:v", "A1"), fence.IncrBy("{t}:n", 1), fence.Get("{t}:v"))
			if err != nil || len(reply) != 3 || reply[0] != "OK" || reply[1] != int64(1) || reply[2] != "A1" {
				t.Fatalf("A's first write: %v, %v", reply, err)
			}
			if _, err := f.Write(ctx, a, "t", fence.Set("{t}:v", "A2")); err != nil {
				t.Fatalf("A writing again: %v", err)
			}
			if err := f.Advance(ctx, b, "t"); err != nil {
				t.Fatalf("B's Advance: %v", err)
			}
			_, err = f.Write(ctx, a, "t", fence.Set("{t}:v", "stale"))
			var se *fence.StaleError
			if !errors.As(err, &se) || se.Highest != (fence.Mark{Token: b.token, Owner: "b"}) {
				t.Fatalf("A after B's Advance: %v, want a StaleError naming B's token", err)
			}
			if _, err := f.Write(ctx, lease{"job", "c", b.token}, "t", fence.Set("{t}:v", "C")); !errors.Is(err, fence.ErrStale) {
				t.Fatalf("an equal token from another owner: %v", err)
			}
			reply, err = f.Write(ctx, b, "t", fence.Get("{t}:v"), fence.HSet("{t}:h", "f", "1"), fence.Del("{t}:n"))
			if err != nil || reply[0] != "A2" || reply[1] != int64(1) || reply[2] != int64(1) {
				t.Fatalf("B's write: %v, %v (the stale writes must have left A2)", reply, err)
			}
			// Keys outside the fence's slot, and tokens ahead of the clock.
			if _, err := f.Write(ctx, b, "t", fence.Set("{u}:v", "x")); !errors.Is(err, fence.ErrInvalidArgument) {
				t.Errorf("a key of another hash tag: %v", err)
			}
			ahead, err := fence.NewRedis(sc, fence.WithMaxAhead(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			future := lease{"job", "f", time.Now().Add(time.Hour).UnixMicro()}
			if _, err := ahead.Write(ctx, future, "t", fence.Set("{t}:v", "x")); !errors.Is(err, fence.ErrTokenAhead) {
				t.Errorf("a token an hour ahead: %v", err)
			}
		})
	}
}

// The script refuses, for callers that are not this package, keys outside
// the fence key's hash tag and commands it does not run, before writing.
func TestRedisScriptRefusesWhatTheClientWould(t *testing.T) {
	ctx := context.Background()
	for name, sc := range scripters(t) {
		t.Run(name, func(t *testing.T) {
			s := must(fence.Script())
			for _, c := range []struct {
				keys []string
				args []any
				want string
			}{
				{[]string{"nofence"}, []any{"5", "o", "0"}, "has no hash tag"},
				{[]string{"{a}f", "{b}x"}, []any{"5", "o", "0", "SET", "2", "1", "v"}, "does not carry the fence key's hash tag"},
				{[]string{"{a}f", "{a}x"}, []any{"5", "o", "0", "FLUSHALL", "2", "0"}, "is not one fence.write runs"},
				{[]string{"{a}f", "{a}x"}, []any{"5", "o", "0", "SET", "1", "1", "v"}, "key index must name a data key"},
				{[]string{"{a}f"}, []any{"x", "o", "0"}, "token must be a whole number"},
			} {
				err := sc.Run(ctx, s, c.keys, c.args...).Err()
				// The simulator refuses keys of two slots before the script runs.
				if err == nil || !strings.Contains(err.Error(), c.want) && !strings.Contains(err.Error(), "different cluster slots") {
					t.Errorf("%v %v: %v, want %q", c.keys, c.args, err, c.want)
				}
			}
		})
	}
}
