package conformance

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redlua/redlua/fence"
)

// lease is a Holder of the suite's own.
type lease struct {
	name, owner string
	token       int64
}

func (l lease) Name() string  { return l.name }
func (l lease) Token() int64  { return l.token }
func (l lease) Owner() string { return l.owner }

// The rule, on every backend: above the highest passes, equal passes for
// the same owner only, below is refused and writes nothing; Advance raises
// the fence without data.
func TestConformanceRule(t *testing.T) {
	ctx := context.Background()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			b := mustOpen(t, newSpec(t, kind))
			base := time.Now().UnixMicro()
			a := lease{"job", "a", base}
			bb := lease{"job", "b", base + 10}
			c := lease{"job", "c", base + 20}
			step := func(what string, err error, stale bool) {
				t.Helper()
				if stale != errors.Is(err, fence.ErrStale) || (!stale && err != nil) {
					t.Fatalf("%s: %v, want stale %v", what, err, stale)
				}
			}
			step("A writes", b.set(ctx, a, "k", "A1"), false)
			step("A writes again", b.set(ctx, a, "k", "A2"), false)
			step("an equal token of another owner", b.set(ctx, lease{"job", "x", base}, "k", "X"), true)
			step("B writes", b.set(ctx, bb, "k", "B"), false)
			step("A after B", b.set(ctx, a, "k", "A3"), true)
			step("C advances", b.advance(ctx, c), false)
			step("B after C's Advance", b.set(ctx, bb, "k", "B2"), true)
			step("another name is fenced apart", b.set(ctx, lease{"other", "a", base}, "k2", "v"), false)
			if v, err := b.get(ctx, "k"); err != nil || v != "B" {
				t.Fatalf("k = %q, %v; want B (every stale write refused, nothing written)", v, err)
			}
			var se *fence.StaleError
			err := b.set(ctx, a, "k", "A4")
			if !errors.As(err, &se) || se.Name != "job" || se.Token != a.token || se.Highest.Token != c.token {
				t.Fatalf("the refusal %v does not name the lock, the token and the highest", err)
			}
		})
	}
}

// DoAll takes the fence rows of a MultiLock's names in the order of the
// names, whatever order the caller gives, and refuses the whole write when
// one token is stale.
func TestConformanceSQLMultiNames(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			b := mustOpen(t, newSpec(t, kind))
			base := time.Now().UnixMicro()
			write := func(hs []fence.Holder, v string) error {
				return b.sqlF.DoAll(ctx, hs, func(tx *sql.Tx) error { return b.upsert(ctx, tx, "k", v) })
			}
			if err := write([]fence.Holder{lease{"z", "a", base}, lease{"m", "a", base}}, "1"); err != nil {
				t.Fatal(err)
			}
			if err := b.sqlF.Advance(ctx, lease{"m", "b", base + 5}); err != nil {
				t.Fatal(err)
			}
			if err := write([]fence.Holder{lease{"m", "a", base}, lease{"z", "a", base}}, "2"); !errors.Is(err, fence.ErrStale) {
				t.Fatalf("one stale name of two: %v", err)
			}
			if v, _ := b.get(ctx, "k"); v != "1" {
				t.Fatalf("k = %q after a refused multi-name write", v)
			}
			if m, err := b.sqlF.Highest(ctx, "z"); err != nil || m != (fence.Mark{Token: base, Owner: "a"}) {
				t.Fatalf("the refused write moved z's fence: %+v, %v", m, err)
			}
			if err := write([]fence.Holder{lease{"m", "a", base}, lease{"m", "a", base}}, "3"); !errors.Is(err, fence.ErrInvalidArgument) {
				t.Fatalf("a name given twice: %v", err)
			}
		})
	}
}

// Many goroutines increment one counter through one lease (the same
// holder writing again) at every isolation level: reads are plain SELECTs,
// so only the fence row orders the transactions. Every increment that
// returned nil is in the final value, no more, no less.
func TestConformanceSQLIsolationLevels(t *testing.T) {
	ctx := context.Background()
	cases := []struct{ kind, iso string }{
		{"postgres", "rc"}, {"postgres", "rr"}, {"postgres", "ser"},
		{"mysql", "rc"}, {"mysql", "rr"}, {"mysql", "ser"},
		{"sqlite", ""},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.iso, func(t *testing.T) {
			s := newSpec(t, c.kind)
			s.Isolate = c.iso
			b := mustOpen(t, s, fence.WithRetries(50), fence.WithLockTimeout(2*time.Second))
			l := lease{"counter", "a", time.Now().UnixMicro()}
			const goroutines, each = 4, 8
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok, failed := 0, 0
			var firstErr error
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						_, err := b.incr(ctx, l, "")
						mu.Lock()
						if err == nil {
							ok++
						} else {
							failed++
							firstErr = errors.Join(firstErr, err)
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			v, err := b.get(ctx, counterKey)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := strconv.Atoi(v); n != ok {
				t.Fatalf("counter %d, but %d increments committed (%d failed: %v)", n, ok, failed, firstErr)
			}
			if failed > 0 {
				t.Fatalf("%d of %d increments failed (with 50 tries each): %v", failed, goroutines*each, firstErr)
			}
			t.Logf("%s %s: %d increments, counter %s", c.kind, c.iso, ok, v)
		})
	}
}

// WithMaxAhead refuses a token far in the resource's future on every
// backend.
func TestConformanceTokenAhead(t *testing.T) {
	ctx := context.Background()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			b := mustOpen(t, newSpec(t, kind), fence.WithMaxAhead(time.Minute))
			future := lease{"job", "f", time.Now().Add(time.Hour).UnixMicro()}
			if err := b.set(ctx, future, "k", "x"); !errors.Is(err, fence.ErrTokenAhead) {
				t.Fatalf("a token an hour ahead: %v", err)
			}
			if err := b.set(ctx, lease{"job", "n", time.Now().UnixMicro()}, "k", "x"); err != nil {
				t.Fatalf("a token of now: %v", err)
			}
		})
	}
}
