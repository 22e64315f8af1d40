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

// frozenKinds are the backends of the frozen-holder proof (the simulator
// has no processes to freeze).
var frozenKinds = []string{"postgres", "mysql", "sqlite", "redis"}

// startHolder starts a holder worker on the backend s with the lock server
// at lockAddr.
func startHolder(t *testing.T, s spec, lockAddr, opts string) *faulttest.Worker {
	env := append(s.env(), "FENCE_LOCKS="+lockAddr, "FENCE_OPTS="+opts)
	return faulttest.StartWorker(t, "TestWorkerHolder", "holder", env...)
}

const reportWait = 60 * time.Second // a bound for a stuck worker, never reached by a healthy one

// Holder A locks with a short TTL and no watchdog, writes, and is frozen
// (SIGSTOP); B locks once A's lease ran out on the server and writes; A is
// continued and writes again. Every such late write must be refused and
// B's data left as B wrote it, and no write of a holder that held its lock
// (A's first, B's) may be refused. Nothing depends on wall time: B's Lock
// waits as long as the server says A holds.
func TestFrozenHolderIsRefused(t *testing.T) {
	const trials = 50
	for _, kind := range frozenKinds {
		t.Run(kind, func(t *testing.T) {
			s := newSpec(t, kind)
			lockSrv := redistest.Standalone(t)
			a := startHolder(t, s, lockSrv.Addr, "")
			b := startHolder(t, s, lockSrv.Addr, "")
			stale, legitRefused := 0, 0
			for i := range trials {
				name, key := fmt.Sprintf("job%d", i), fmt.Sprintf("k%d", i)
				a.Send("lock " + name + " 50")
				ta := a.Next("locked", reportWait).Token
				a.Send("write " + key + " A bare")
				if r := a.Next("wrote", reportWait); r.Err != "" {
					legitRefused++
					t.Errorf("trial %d: A's write while nobody else had locked was refused: %s", i, r.Err)
				}
				a.Freeze()
				b.Send("lock " + name + " 5000")
				tb := b.Next("locked", reportWait).Token
				b.Send("write " + key + " B")
				if r := b.Next("wrote", reportWait); r.Err != "" {
					legitRefused++
					t.Errorf("trial %d: B's write was refused: %s", i, r.Err)
				}
				a.Thaw()
				a.Send("write " + key + " A-late bare")
				if r := a.Next("wrote", reportWait); strings.HasPrefix(r.Err, "stale: ") {
					stale++
				} else {
					t.Errorf("trial %d: A's late write (token %d < B's %d): %q, want a stale refusal", i, ta, tb, r.Err)
				}
				if v, err := mustOpenShared(t, s).get(context.Background(), key); err != nil || v != "B" {
					t.Errorf("trial %d: %s = %q, %v; want B's value", i, key, v, err)
				}
			}
			t.Logf("%s: %d trials, stale writes refused %d, legitimate writes refused %d", kind, trials, stale, legitRefused)
			a.Stop(5 * time.Second)
			b.Stop(5 * time.Second)
		})
	}
}

var shared = map[string]*backend{}

// mustOpenShared is mustOpen once per spec and test.
func mustOpenShared(t *testing.T, s spec) *backend {
	if b, ok := shared[s.Prefix]; ok {
		return b
	}
	b := mustOpen(t, s)
	shared[s.Prefix] = b
	t.Cleanup(func() { delete(shared, s.Prefix) })
	return b
}

// The check above catches a resource that does not fence: a late write
// made without the fence overwrites B's value, which the trial's read
// sees. (The broken mode the proof must be able to fail on.)
func TestFrozenHolderCheckSeesAnUnfencedWrite(t *testing.T) {
	s := newSpec(t, "sqlite")
	b := mustOpen(t, s)
	ctx := context.Background()
	if err := b.set(ctx, lease{"job", "b", 100}, "k", "B"); err != nil {
		t.Fatal(err)
	}
	// A's late write without the fence, as an application that ignores it would do.
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.upsert(ctx, tx, "k", "A-late"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.get(ctx, "k"); v == "B" {
		t.Fatal("the trial's check would not see an unfenced late write")
	}
}

// Holder A is frozen inside its fenced transaction, holding the fence row.
// B locks after A's lease ran out and writes: it must neither write under
// A's token nor wait forever (its waits for the row time out and it tries
// again), and A's COMMIT must fail when A is continued. On PostgreSQL and
// MariaDB, A's transaction is fenced with a bare holder (no lease check
// before COMMIT): the database ends A's idle session (WithIdleTimeout). On
// SQLite there is no session to end: B gives up (ErrBusy) while A is
// frozen, A's lease check refuses the COMMIT, and B's next try writes.
func TestFrozenInsideTransaction(t *testing.T) {
	const trials = 5
	for _, kind := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			s := newSpec(t, kind)
			lockSrv := redistest.Standalone(t)
			opts := map[string]string{
				"postgres": "lock=300ms idle=1s tries=40",
				"mysql":    "lock=1s idle=2s tries=20",
				"sqlite":   "lock=200ms tries=3",
			}[kind]
			a := startHolder(t, s, lockSrv.Addr, opts)
			b := startHolder(t, s, lockSrv.Addr, opts)
			retries := 0
			for i := range trials {
				name, key := fmt.Sprintf("tx%d", i), fmt.Sprintf("t%d", i)
				a.Send("lock " + name + " 100")
				ta := a.Next("locked", reportWait).Token
				isBare := "1"
				if kind == "sqlite" {
					isBare = "0"
				}
				a.Send("intx " + key + " A " + isBare)
				a.Next("intx", reportWait)
				a.Freeze()
				b.Send("lock " + name + " 20000")
				tb := b.Next("locked", reportWait).Token
				b.Send("write " + key + " B")
				r := b.Next("wrote", reportWait)
				retries += int(r.N)
				if kind == "sqlite" {
					if !strings.Contains(r.Err, "fence row stayed busy") {
						t.Fatalf("trial %d: B's write while A holds SQLite's write lock: %q, want ErrBusy", i, r.Err)
					}
					a.Thaw()
					a.Send("commit")
					if c := a.Next("committed", reportWait); !strings.Contains(c.Err, "lease ended before commit") {
						t.Fatalf("trial %d: A's commit after its lease ran out: %q, want ErrLeaseLost", i, c.Err)
					}
					b.Send("write " + key + " B")
					r = b.Next("wrote", reportWait)
				} else {
					a.Thaw()
					a.Send("commit")
					if c := a.Next("committed", reportWait); c.Err == "" {
						t.Fatalf("trial %d: A's commit succeeded after B wrote", i)
					}
				}
				if r.Err != "" || r.N == 0 && kind != "sqlite" {
					t.Fatalf("trial %d: B's write: %q after %d retries; want success after at least one lock timeout", i, r.Err, r.N)
				}
				got := mustOpenShared(t, s)
				if v, err := got.get(context.Background(), key); err != nil || v != "B" {
					t.Fatalf("trial %d: %s = %q, %v; want B", i, key, v, err)
				}
				if m, err := got.sqlF.Highest(context.Background(), name); err != nil || m.Token != tb || m.Token == ta {
					t.Fatalf("trial %d: fence of %s at %d (%v); want B's token %d", i, name, m.Token, err, tb)
				}
			}
			t.Logf("%s: %d trials: A's commit failed in all, B wrote in all under its own token after %d lock timeouts in all", kind, trials, retries)
			a.Stop(5 * time.Second)
			b.Stop(5 * time.Second)
		})
	}
}
