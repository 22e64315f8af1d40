package conformance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/internal/redistest"
)

// counterOut is one operation's outcome in the linearizability history.
type counterOut struct {
	ok, unknown bool
	n           int64
}

// counterModel is a counter that increments return the new value of, and
// reads return the value of. An increment whose outcome is unknown (its
// worker was killed while it ran, or it failed in a way that says nothing
// about its commit) may have taken effect or not; an increment refused as
// stale took none.
var counterModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{int64(0)} },
	Step: func(state, input, output any) []any {
		s, o := state.(int64), output.(counterOut)
		switch {
		case input == "read":
			if o.n == s {
				return []any{s}
			}
			return nil
		case o.unknown:
			return []any{s, s + 1}
		case !o.ok:
			return []any{s} // refused: nothing written
		case o.n == s+1:
			return []any{o.n}
		}
		return nil
	},
}

// neverReturned is the return time of an increment whose worker was
// killed while it ran: it may take effect at any time after its call (a
// COMMIT the database received before the kill), so it is concurrent with
// everything that follows.
const neverReturned = math.MaxInt64

// holderRun is one worker process of a counter slot.
type holderRun struct {
	w       *faulttest.Worker
	slot    int
	client  int // porcupine client of this process
	pending *faulttest.Report
	killed  bool
	// stopsItself: the worker parks inside an increment, for the test to
	// kill it there.
	stopsItself bool
	stop        string // where: "read:N" or "after:N"
}

type counterMsg struct {
	run    *holderRun
	r      faulttest.Report
	exited bool
}

// opRecord is an increment and what its worker heard.
type opRecord struct {
	token   int64
	outcome string // ok, stale, unknown, killed
	stop    string // a killed increment's stop, "" at a random moment
}

// Three holder slots increment one counter, each increment a fenced
// read-modify-write under its own short lease (no watchdog), while the test
// freezes holders at random for up to four TTLs and kills one (SIGKILL)
// three times, each time starting a new worker in its place for the rest
// of its increments: once inside an increment's transaction before it
// wrote, once after an increment committed but before its worker reported
// it (both workers park there and report it, so the kill lands there), once
// at a random moment. The increment a killed worker had in flight is an
// operation of unknown outcome that never returns. Each increment also writes a
// marker row (key) in its transaction, so afterwards the test reads which
// increments committed: the final value equals the increments the resource
// committed (every acknowledged one, none refused, and those of unknown
// outcome that did), and the history of increments and the test's reads is
// linearizable (porcupine).
func TestCounterUnderFreezesAndRestarts(t *testing.T) {
	const holders, each = 3, 15
	for _, kind := range frozenKinds {
		t.Run(kind, func(t *testing.T) {
			s := newSpec(t, kind)
			lockSrv := redistest.Standalone(t)
			reader := mustOpenShared(t, s)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 46))
			msgs := make(chan counterMsg, 1024)
			clients := 0
			start := func(slot, n int, stop string) *holderRun {
				opts := "lock=300ms idle=1s tries=40"
				if stop != "" {
					opts += " stop=" + stop
				}
				run := &holderRun{w: startHolder(t, s, lockSrv.Addr, opts), slot: slot, client: clients, stopsItself: stop != "", stop: stop}
				clients++
				go func() {
					for r := range run.w.Reports() {
						msgs <- counterMsg{run: run, r: r}
					}
					msgs <- counterMsg{run: run, exited: true}
				}()
				run.w.Send(fmt.Sprintf("incr counter %d 60", n))
				return run
			}
			current := make([]*holderRun, holders)
			calls := make([]int, holders) // increments started in each slot, by all its workers
			done := make([]bool, holders)
			// Slot 0's first worker parks inside its third increment's
			// transaction, after the read; slot 1's after its fifth
			// increment returned, before it reports. The test kills each
			// where it parked: two increments in flight, one that cannot
			// have committed and one that (unless refused) did.
			for i, stop := range []string{"read:3", "after:5", ""} {
				current[i] = start(i, each, stop)
			}
			var history []porcupine.Operation
			var ops []opRecord
			accepted, refused, unknown, freezes, kills, killedInFlight, finished := 0, 0, 0, 0, 0, 0, 0
			events := 0
			kill := func(run *holderRun) {
				run.killed = true
				kills++
				if err := syscall.Kill(run.w.Pid, syscall.SIGKILL); err != nil {
					t.Fatalf("killing worker %d: %v", run.w.Pid, err)
				}
			}
			deadline := time.Now().Add(3 * time.Minute) // a bound for a stuck run
			nextEvent := time.After(time.Duration(5+rng.IntN(25)) * time.Millisecond)
			for finished < holders && time.Now().Before(deadline) {
				select {
				case x := <-msgs:
					run := x.run
					if x.exited {
						if !run.killed {
							if !done[run.slot] {
								t.Fatalf("worker %d exited unasked; stderr:\n%s", run.w.Pid, run.w.Stderr())
							}
							continue
						}
						if p := run.pending; p != nil {
							// Killed while the increment ran: unknown, never returned.
							unknown++
							killedInFlight++
							ops = append(ops, opRecord{p.Token, "killed", run.stop})
							history = append(history, porcupine.Operation{ClientId: run.client, Input: "incr", Call: p.Start.UnixNano(),
								Output: counterOut{unknown: true}, Return: neverReturned})
						}
						if rest := each - calls[run.slot]; rest > 0 {
							current[run.slot] = start(run.slot, rest, "")
						} else {
							done[run.slot] = true
							finished++
						}
						continue
					}
					switch x.r.Kind {
					case "call":
						r := x.r
						run.pending = &r
						calls[run.slot]++
					case "op":
						run.pending = nil
						out := counterOut{ok: x.r.Err == "", n: x.r.N}
						rec := opRecord{token: x.r.Token}
						switch {
						case out.ok:
							accepted++
							rec.outcome = "ok"
						case strings.HasPrefix(x.r.Err, "stale: "):
							refused++
							rec.outcome = "stale"
						default:
							out.unknown = true
							unknown++
							rec.outcome = "unknown"
						}
						ops = append(ops, rec)
						history = append(history, porcupine.Operation{ClientId: run.client, Input: "incr", Call: x.r.Start.UnixNano(), Output: out, Return: x.r.End.UnixNano()})
					case "incrdone":
						if !run.killed {
							done[run.slot] = true
							finished++
						}
					case "parked":
						kill(run)
					case "fatal":
						t.Fatalf("worker %d: %s", run.w.Pid, x.r.Err)
					}
				case <-nextEvent:
					nextEvent = time.After(time.Duration(5+rng.IntN(25)) * time.Millisecond)
					events++
					var live []*holderRun
					for i, run := range current {
						if done[i] || run.killed {
							continue
						}
						if run.stopsItself {
							continue // never frozen: it is killed where it parks
						}
						live = append(live, run)
					}
					if len(live) == 0 {
						continue
					}
					run := live[rng.IntN(len(live))]
					if events == 6 {
						// A worker killed wherever it is: waiting for the
						// lock, inside its transaction, between increments.
						kill(run)
						continue
					}
					// A random holder frozen for up to four TTLs, then a read.
					run.w.Freeze()
					freezes++
					time.Sleep(time.Duration(rng.IntN(240)) * time.Millisecond)
					run.w.Thaw()
					begin := time.Now()
					v, err := reader.get(context.Background(), counterKey)
					if err == nil {
						var n int64
						fmt.Sscan(v, &n)
						history = append(history, porcupine.Operation{ClientId: -1, Input: "read", Call: begin.UnixNano(), Output: counterOut{n: n}, Return: time.Now().UnixNano()})
					}
				}
			}
			if finished < holders {
				t.Fatalf("only %d of %d holder slots finished within the bound", finished, holders)
			}
			ctx := context.Background()
			v, err := reader.get(ctx, counterKey)
			if err != nil {
				t.Fatal(err)
			}
			var final int
			fmt.Sscan(v, &final)
			// Which increments committed, by their markers.
			committedUnknown := 0
			for _, op := range ops {
				m, err := reader.get(ctx, marker(op.token))
				if err != nil {
					t.Fatal(err)
				}
				switch committed := m != ""; {
				case op.outcome == "ok" && !committed:
					t.Errorf("the acknowledged increment under token %d left no marker", op.token)
				case op.outcome == "stale" && committed:
					t.Errorf("the increment under token %d was refused as stale but committed", op.token)
				case strings.HasPrefix(op.stop, "read:") && committed:
					t.Errorf("the increment under token %d, killed inside its transaction before it wrote, committed", op.token)
				case (op.outcome == "unknown" || op.outcome == "killed") && committed:
					committedUnknown++
				}
			}
			if final != accepted+committedUnknown {
				t.Fatalf("counter %d, but the resource committed %d increments (%d acknowledged, %d of %d of unknown outcome)",
					final, accepted+committedUnknown, accepted, committedUnknown, unknown)
			}
			if killedInFlight < 2 {
				t.Errorf("%d increments killed in flight, want 2: the run did not test restarts", killedInFlight)
			}
			if res := porcupine.CheckOperationsTimeout(counterModel.ToModel(), history, time.Minute); res != porcupine.Ok {
				t.Fatalf("the history of %d operations is not linearizable (%v)", len(history), res)
			}
			t.Logf("%s: %d increments started: %d acknowledged, %d refused as stale, %d of unknown outcome (%d killed in flight), %d of those committed; counter %d; %d freezes, %d workers killed and replaced; %d operations linearizable",
				kind, len(ops), accepted, refused, unknown, killedInFlight, committedUnknown, final, freezes, kills, len(history))
			for i, run := range current {
				if !run.killed {
					current[i].w.Stop(5 * time.Second)
				}
			}
		})
	}
}

// The model is what catches a lost update, and it needs the unknown
// outcome: a killed increment that committed is linearizable only as
// unknown, and two increments that both saw the counter at 0 are not.
func TestCounterModel(t *testing.T) {
	m := counterModel.ToModel()
	killed := porcupine.Operation{ClientId: 0, Input: "incr", Call: 0, Output: counterOut{unknown: true}, Return: neverReturned}
	later := porcupine.Operation{ClientId: 1, Input: "incr", Call: 10, Output: counterOut{ok: true, n: 2}, Return: 20}
	read := porcupine.Operation{ClientId: 2, Input: "read", Call: 30, Output: counterOut{n: 2}, Return: 40}
	if !porcupine.CheckOperations(m, []porcupine.Operation{killed, later, read}) {
		t.Error("a killed increment that committed before another was not linearizable as unknown")
	}
	asRefused := killed
	asRefused.Output = counterOut{}
	if porcupine.CheckOperations(m, []porcupine.Operation{asRefused, later, read}) {
		t.Error("modelled as refused, the killed increment that committed still checked: the model cannot tell")
	}
	lost := []porcupine.Operation{
		{ClientId: 0, Input: "incr", Call: 0, Output: counterOut{ok: true, n: 1}, Return: 10},
		{ClientId: 1, Input: "incr", Call: 5, Output: counterOut{ok: true, n: 1}, Return: 15},
	}
	if porcupine.CheckOperations(m, lost) {
		t.Error("a lost update (two increments that both returned 1) was linearizable")
	}
}
