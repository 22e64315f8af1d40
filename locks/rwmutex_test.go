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
