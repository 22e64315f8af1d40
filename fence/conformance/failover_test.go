package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/internal/redistest"
)

// sqlKinds are the databases of the failover trials.
var sqlKinds = []string{"postgres", "mysql", "sqlite"}

// failoverTrials is how many failovers each SQL backend sees.
const failoverTrials = 20

// failoverFigures is what a run of failover trials saw.
type failoverFigures struct {
	trials, doubleGrants, tokensNotAbove int
	staleWrites, staleRefused            int // writes of the old holder after the new one locked
	legitWrites, legitRefused            int // the old holder's write before the failover, the new holder's Advance and writes
	valueLost                            int // trials whose key did not hold the new holder's value at the end
	took                                 time.Duration
}

func (f failoverFigures) String() string {
	return fmt.Sprintf("%d trials in %v: %d double grants (%d with the new token not above the old), stale writes refused %d of %d, legitimate writes refused %d of %d, new holder's value lost in %d",
		f.trials, f.took.Round(time.Millisecond), f.doubleGrants, f.tokensNotAbove, f.staleRefused, f.staleWrites, f.legitRefused, f.legitWrites, f.valueLost)
}

// runFailover runs the fault suite's failover trial (locks/fault_failover_test.go)
// with a database as the resource, in worker processes: holder A locks on
// the primary of a pair whose replication stream is held, so the replica
// never receives A's lock; A writes; the primary dies and the replica is
// promoted by hand; B locks the same name on the promoted server (a
// double grant: A's lease still runs for 10 s and A believes it holds),
// raises the fence (Advance) and writes, and A writes between B's steps
// and after them. Every write of A after B locked is stale; A's first write
// and every write of B are legitimate. With unfenced, A's late writes skip
// the fence (the broken mode).
func runFailover(t *testing.T, s spec, trials int, unfenced bool) failoverFigures {
	pair := redistest.NewLaggingPair(t, redistest.WithArgs("--repl-diskless-sync", "no"))
	a := startHolder(t, s, pair.Primary.Addr, "")
	b := startHolder(t, s, pair.Primary.Addr, "")
	check := mustOpenShared(t, s)
	ctx := context.Background()
	var fig failoverFigures
	legit := func(w *faulttest.Worker, kind, what string, i int) {
		t.Helper()
		fig.legitWrites++
		if r := w.Next(kind, reportWait); r.Err != "" {
			fig.legitRefused++
			t.Errorf("trial %d: %s was refused: %s", i, what, r.Err)
		}
	}
	lateWrite := func(value string, i int) {
		t.Helper()
		if unfenced {
			a.Send("rawwrite k" + fmt.Sprint(i) + " " + value)
		} else {
			a.Send("write k" + fmt.Sprint(i) + " " + value + " bare")
		}
		fig.staleWrites++
		if r := a.Next("wrote", reportWait); strings.HasPrefix(r.Err, "stale: ") {
			fig.staleRefused++
		} else if !unfenced {
			t.Errorf("trial %d: A's write after B locked (%s): %q, want a stale refusal", i, value, r.Err)
		}
	}
	start := time.Now()
	for i := range trials {
		name, key := fmt.Sprintf("failover%d", i), fmt.Sprintf("k%d", i)
		// The replica lags by everything from here to the primary's death.
		pair.Link.Hold()
		a.Send("connect " + pair.Primary.Addr)
		a.Send("lock " + name + " 10000")
		ta := a.Next("locked", reportWait).Token
		a.Send("write " + key + " A bare")
		legit(a, "wrote", "A's write before the failover", i)

		pair.Failover(t) // kills the primary with the held stream, promotes the replica

		b.Send("connect " + pair.Primary.Addr)
		b.Send("trylock " + name + " 10000")
		r := b.Next("trylocked", reportWait)
		if r.Err != "" {
			t.Fatalf("trial %d: B's TryLock on the promoted replica: %s; the replica had A's lock, so the trial has no power", i, r.Err)
		}
		fig.doubleGrants++
		tb := r.Token
		if tb <= ta {
			fig.tokensNotAbove++
			t.Errorf("trial %d: B's token %d is not above A's %d", i, tb, ta)
		}
		b.Send("advance")
		legit(b, "advanced", "B's Advance", i)
		lateWrite("A-late1", i) // before B's first data write: Advance is what refuses it
		b.Send("write " + key + " B")
		legit(b, "wrote", "B's write", i)
		lateWrite("A-late2", i)

		if v, err := check.get(ctx, key); err != nil || v != "B" {
			fig.valueLost++
			if !unfenced {
				t.Errorf("trial %d: %s = %q, %v; want B's value", i, key, v, err)
			}
		}
		if m, err := check.sqlF.Highest(ctx, name); !unfenced && (err != nil || m.Token != tb) {
			t.Errorf("trial %d: the fence of %s is %+v (%v), want B's token %d", i, name, m, err, tb)
		}
		pair.Rejoin(t)
	}
	fig.trials = trials
	fig.took = time.Since(start)
	a.Stop(5 * time.Second)
	b.Stop(5 * time.Second)
	return fig
}

// The fault suite's failover trials with PostgreSQL, MariaDB and SQLite
// as the resource: after the primary died with A's lock unreplicated and
// B was granted the lock on the promoted replica, every write of A is
// refused (also the one between B's Advance and B's first data write),
// and no write of A before the failover nor of B is refused.
func TestFailoverStaleHolderIsRefused(t *testing.T) {
	for _, kind := range sqlKinds {
		t.Run(kind, func(t *testing.T) {
			fig := runFailover(t, newSpec(t, kind), failoverTrials, false)
			t.Logf("%s: %v", kind, fig)
			if fig.doubleGrants != fig.trials || fig.staleRefused != fig.staleWrites || fig.legitRefused > 0 || fig.valueLost > 0 {
				t.Errorf("%s: %v", kind, fig)
			}
		})
	}
}

// The trials catch a resource that does not fence: the same trial with A's
// late writes made without the fence leaves A's value, not B's.
func TestFailoverCheckSeesAnUnfencedWrite(t *testing.T) {
	fig := runFailover(t, newSpec(t, "sqlite"), 1, true)
	if fig.valueLost != 1 || fig.staleRefused != 0 {
		t.Fatalf("unfenced late writes: %v; want the trial's check to see B's value lost", fig)
	}
}
