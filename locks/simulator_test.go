package locks_test

import (
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// The simulator, with a virtual clock, is the suite's third backend: server
// time passes only when a test says so.
func init() {
	extraBackends = append(extraBackends, struct {
		name string
		make func(t *testing.T) fixture
	}{"simulator", simulatorFixture})
}

func simulatorFixture(t *testing.T) fixture {
	clock := simulate.NewVirtualClock(time.Now())
	srv := simulate.New(simulate.WithClock(clock))
	wrap := func(t *testing.T, w func(locks.Backend) locks.Backend, opts ...locks.Option) *locks.Client {
		var b locks.Backend = srv
		if w != nil {
			b = w(b)
		}
		c, err := locks.NewWithBackend(b, append([]locks.Option{locks.WithClock(clock)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return fixture{
		client:  func(t *testing.T, opts ...locks.Option) *locks.Client { return wrap(t, nil, opts...) },
		wrap:    wrap,
		elapse:  clock.Advance,
		virtual: true,
		scale:   1,
	}
}
