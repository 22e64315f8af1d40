package locks_test

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
)

func rwmutex(t *testing.T, c *locks.Client, name string, opts ...locks.Option) *locks.RWMutex {
	t.Helper()
	m, err := c.RWMutex(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Readers run together but never with a writer: a checker watches 16
// goroutines × 500 operations with random roles.
func TestSuiteRWMutexExclusion(t *testing.T) {
	mostlyWaits(t)
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 120*time.Second)
		c := f.client(t, locks.WithTTL(10*time.Second))
		var readers, writers, maxReaders atomic.Int32
		var violations atomic.Int32
		const workers = 16
		ops := 500 / f.scale
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				rw, _ := c.RWMutex("doc")
				for i := 0; i < ops; i++ {
					if rng.Intn(4) == 0 {
						l, err := rw.Lock(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						if writers.Add(1) != 1 || readers.Load() != 0 {
							violations.Add(1)
						}
						writers.Add(-1)
						if err := l.Unlock(ctx); err != nil {
							t.Error(err)
							return
						}
						continue
					}
					l, err := rw.RLock(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					n := readers.Add(1)
					if writers.Load() != 0 {
						violations.Add(1)
					}
					for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
					}
					time.Sleep(0)
					readers.Add(-1)
					if err := l.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}(int64(w))
		}
		wg.Wait()
		if v := violations.Load(); v != 0 {
			t.Fatalf("%d times a writer ran together with another holder", v)
		}
		t.Logf("at most %d readers at once", maxReaders.Load())
	})
}

// Readers really share the lock: eight of them hold it at the same time.
func TestSuiteRWMutexReadersShare(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t, locks.WithTTL(time.Minute))
		const n = 8
		var all sync.WaitGroup
		all.Add(n)
		held := make(chan *locks.Lease, n)
		for i := 0; i < n; i++ {
			go func() {
				l, err := rwmutex(t, c, "shared").RLock(ctx)
				if err != nil {
					t.Error(err)
				}
				held <- l
				all.Done()
			}()
		}
		all.Wait() // every reader holds its lease now
		for i := 0; i < n; i++ {
			if l := <-held; l != nil {
				if l.Err() != nil {
					t.Fatalf("a reader's lease ended early: %v", l.Err())
				}
				defer l.Unlock(ctx)
			}
		}
	})
}

// A writer is not starved by a steady stream of readers: its wait ends.
func TestSuiteRWMutexWriterNotStarved(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		c := f.client(t, locks.WithTTL(10*time.Second))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for r := 0; r < 6; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rw, _ := c.RWMutex("feed")
				for {
					select {
					case <-stop:
						return
					default:
					}
					l, err := rw.RLock(ctx)
					if err != nil {
						return
					}
					time.Sleep(time.Millisecond)
					l.Unlock(ctx)
				}
			}()
		}
		time.Sleep(20 * time.Millisecond) // the readers are streaming
		l, err := rwmutex(t, c, "feed").Lock(ctx)
		close(stop)
		if err != nil {
			t.Fatalf("the writer starved: %v", err)
		}
		l.Unlock(ctx)
		wg.Wait()
	})
}

// A reader that crashed frees the writer when its own lease expires.
func TestSuiteRWMutexCrashedReader(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		crashed := rwmutex(t, c, "cfg", locks.WithTTL(200*time.Millisecond))
		if _, err := crashed.RLock(ctx); err != nil { // never unlocked
			t.Fatal(err)
		}
		live := rwmutex(t, c, "cfg", locks.WithTTL(time.Minute))
		r, err := live.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r.Unlock(ctx)
		w := rwmutex(t, c, "cfg", locks.WithTTL(time.Minute))
		if _, err := w.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("TryLock while a reader holds = %v, want ErrNotAcquired", err)
		}
		f.elapse(300 * time.Millisecond)
		l, err := w.TryLock(ctx)
		if err != nil {
			t.Fatalf("after the crashed reader's lease expired: %v", err)
		}
		if _, err := live.TryRLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("TryRLock while a writer holds = %v, want ErrNotAcquired", err)
		}
		l.Unlock(ctx)
	})
}

// One owner: write, then read, then drop the write hold: a downgrade with no
// gap in which another writer could get in. Reentrant read holds count.
func TestSuiteRWMutexDowngradeAndReentry(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t, locks.WithTTL(time.Minute))
		me := rwmutex(t, c, "tree", locks.WithReentrant())
		w, err := me.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r1, err := me.RLock(ctx)
		if err != nil {
			t.Fatalf("read hold while writing (same owner): %v", err)
		}
		if err := w.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		other := rwmutex(t, c, "tree")
		if _, err := other.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("a writer got in after the downgrade: %v", err)
		}
		r2, err := other.TryRLock(ctx)
		if err != nil {
			t.Fatalf("another reader after the downgrade: %v", err)
		}
		r2.Unlock(ctx)
		again, err := me.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r1.Unlock(ctx)
		if _, err := other.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatal("one of two reentrant read holds released the whole read lease")
		}
		again.Unlock(ctx)
		l, err := other.TryLock(ctx)
		if err != nil {
			t.Fatalf("writer after all reads released: %v", err)
		}
		l.Unlock(ctx)
	})
}

// Writer preference holds new readers back while a writer waits; reader
// preference lets them in.
func TestSuiteRWMutexPreference(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		for _, readersFirst := range []bool{false, true} {
			ctx := timeout(t, 10*time.Second)
			var opts []locks.Option
			name := "pref-w"
			if readersFirst {
				opts, name = []locks.Option{locks.WithReaderPreference()}, "pref-r"
			}
			c := f.client(t, append(opts, locks.WithTTL(time.Minute))...)
			r, err := rwmutex(t, c, name).RLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			writerCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				l, err := rwmutex(t, c, name).Lock(writerCtx)
				if err == nil {
					l.Unlock(ctx)
				}
				done <- err
			}()
			waitFor(t, func() bool { return c.Stats().Contended >= 1 })
			_, err = rwmutex(t, c, name).TryRLock(ctx)
			if readersFirst && err != nil {
				t.Fatalf("reader preference: a new reader was held back: %v", err)
			}
			if !readersFirst && !errors.Is(err, locks.ErrNotAcquired) {
				t.Fatalf("writer preference: a new reader got in past a waiting writer: %v", err)
			}
			cancel()
			<-done
			r.Unlock(ctx)
			// The writer that gave up holds no one back.
			if l, err := rwmutex(t, c, name).TryRLock(ctx); err != nil {
				t.Fatalf("after the waiting writer gave up: %v", err)
			} else {
				l.Unlock(ctx)
			}
		}
	})
}

// Calls that share an owner token without WithReentrant (a process's
// identity, say) are separate holders of an RWMutex too, as of a Mutex:
// one call's write hold excludes the owner's other calls, readers or
// writers; the owner's read holds keep its writer out; and a call whose
// lease ran out cannot renew or release the hold another call of the same
// owner took since.
func TestSuiteRWMutexCallsOfOneOwner(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		c := f.client(t, locks.WithTTL(time.Minute))
		const name = "rw-one-owner"
		me := rwmutex(t, c, name, locks.WithOwner("worker-7"))
		w, err := me.TryLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Owner(); got != "worker-7" {
			t.Errorf("the write lease's Owner() = %q, want the WithOwner token", got)
		}
		if info, err := c.Inspect(ctx, name); err != nil || info.Owner != "worker-7" {
			t.Errorf("Inspect = %+v, %v; want owner worker-7", info, err)
		}
		if _, err := me.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("a second write call of the owner while the first writes = %v, want ErrNotAcquired", err)
		}
		if _, err := me.TryRLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("a read call of the owner while another of its calls writes = %v, want ErrNotAcquired", err)
		}
		if err := w.Unlock(ctx); err != nil {
			t.Fatal(err)
		}

		r1, err := me.TryRLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := me.TryRLock(ctx)
		if err != nil {
			t.Fatalf("two read calls of one owner share the lock: %v", err)
		}
		if _, err := me.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("a write call of the owner while its other calls read = %v, want ErrNotAcquired", err)
		}
		if err := r1.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := me.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("a write call of the owner while one of its calls still reads = %v, want ErrNotAcquired", err)
		}
		if err := r2.Unlock(ctx); err != nil {
			t.Fatal(err)
		}

		// A stale call: its lease ran out and another call of the owner
		// took the lock.
		short := rwmutex(t, c, name, locks.WithOwner("worker-7"), locks.WithTTL(200*time.Millisecond))
		for _, kind := range []string{"write", "read"} {
			take := func(m *locks.RWMutex) (*locks.Lease, error) {
				if kind == "write" {
					return m.TryLock(ctx)
				}
				return m.TryRLock(ctx)
			}
			stale, err := take(short)
			if err != nil {
				t.Fatal(err)
			}
			f.elapse(300 * time.Millisecond) // the stale call's lease runs out on the server
			fresh, err := take(me)
			if err != nil {
				t.Fatalf("%s: a call after the first lease ran out = %v, want the lock", kind, err)
			}
			if err := stale.Extend(ctx, time.Minute); !errors.Is(err, locks.ErrLockLost) {
				t.Fatalf("%s: the stale call's Extend = %v, want ErrLockLost", kind, err)
			}
			if err := stale.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
				t.Fatalf("%s: the stale call's Unlock = %v, want ErrLockLost", kind, err)
			}
			if _, err := rwmutex(t, f.client(t), name).TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
				t.Fatalf("%s: another owner's TryLock after the stale Unlock = %v, want ErrNotAcquired: the fresh call still holds it", kind, err)
			}
			// The fresh call's lease, marshalled, is released from another
			// client: the call's identity travels with it.
			s, err := fresh.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			resumed, err := f.client(t).Resume(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := resumed.Unlock(ctx); err != nil {
				t.Fatalf("%s: the fresh call's Unlock, resumed elsewhere = %v", kind, err)
			}
		}
		if l, err := rwmutex(t, f.client(t), name).TryLock(ctx); err != nil {
			t.Fatalf("another owner's TryLock once every call let go = %v", err)
		} else {
			l.Unlock(ctx)
		}
	})
}
