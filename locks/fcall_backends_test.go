package locks_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// The suite also runs with every script called as a Redis 7 function
// (FCALL/FCALL_RO of the registry's function library) instead of
// EVALSHA: on a real server through evalsha.FunctionRunner, and on the
// simulator through simulate.FunctionRunner.
func init() {
	extraBackends = append(extraBackends,
		struct {
			name string
			make func(t *testing.T) fixture
		}{"redis-server-fcall", realFunctionFixture},
		struct {
			name string
			make func(t *testing.T) fixture
		}{"simulator-fcall", simulatorFunctionFixture},
	)
}

func scriptRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func realFunctionFixture(t *testing.T) fixture {
	srv := redistest.Standalone(t)
	reg := scriptRegistry(t)
	wrap := func(t *testing.T, w func(locks.Backend) locks.Backend, opts ...locks.Option) *locks.Client {
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: suiteIOTimeout, ReadTimeout: suiteIOTimeout, WriteTimeout: suiteIOTimeout})
		runner, err := evalsha.NewFunctionRunner(rc, reg)
		if err != nil {
			t.Fatal(err)
		}
		var b locks.Backend = runner
		if w != nil {
			b = w(b)
		}
		c, err := locks.NewWithBackend(b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { runner.Close(); rc.Close() })
		return c
	}
	return fixture{
		client: func(t *testing.T, opts ...locks.Option) *locks.Client { return wrap(t, nil, opts...) },
		wrap:   wrap,
		elapse: time.Sleep,
		real:   srv,
		scale:  1,
	}
}

func simulatorFunctionFixture(t *testing.T) fixture {
	clock := simulate.NewVirtualClock(time.Now())
	srv := simulate.New(simulate.WithClock(clock))
	runner, err := simulate.NewFunctionRunner(srv, scriptRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(t *testing.T, w func(locks.Backend) locks.Backend, opts ...locks.Option) *locks.Client {
		var b locks.Backend = runner
		if w != nil {
			b = w(b)
		}
		c, err := locks.NewWithBackend(b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return fixture{
		client: func(t *testing.T, opts ...locks.Option) *locks.Client { return wrap(t, nil, opts...) },
		wrap:   wrap,
		elapse: clock.Advance,
		// The simulator backend runs the stress tests in full through
		// EVALSHA; through FCALL a quarter of them is enough.
		scale: 4,
	}
}
