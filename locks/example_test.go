package locks_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

func newExampleClient(opts ...locks.Option) (*locks.Client, func()) {
	mr, _ := miniredis.Run()
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	c, _ := locks.New(rc, opts...)
	return c, func() { c.Close(); rc.Close(); mr.Close() }
}

func ExampleMutex() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	ctx := context.Background()

	m, _ := c.Mutex("invoice:42")
	lease, err := m.Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	// While we hold it, nobody else gets it.
	_, err = m.TryLock(ctx)
	fmt.Println(errors.Is(err, locks.ErrNotAcquired))

	fmt.Println(lease.Unlock(ctx))
	// Output:
	// true
	// <nil>
}

// Do runs a function under the lock, with the lease's context and its
// fencing token, and releases the lock however the function returns.
func ExampleMutex_Do() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	ctx := context.Background()

	m, _ := c.Mutex("invoice:42")
	err := m.Do(ctx, func(work context.Context, lease *locks.Lease) error {
		// Pass work to the guarded calls: it ends if the lease is lost.
		fmt.Println("holding", lease.Name(), work.Err())
		return nil
	})
	fmt.Println(err)
	// Released: another caller takes it at once.
	lease, err := m.TryLock(ctx)
	fmt.Println(err)
	_ = lease.Unlock(ctx)
	// Output:
	// holding invoice:42 <nil>
	// <nil>
	// <nil>
}

// A deferred Unlock releases the lock even when the request's context was
// cancelled before the handler returned: Unlock keeps the context's values,
// not its cancellation, and has a timeout of its own (WithReleaseTimeout).
func ExampleLease_Unlock() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	m, _ := c.Mutex("invoice:42")

	ctx, clientGone := context.WithCancel(context.Background())
	handle := func(ctx context.Context) error {
		lease, err := m.Lock(ctx)
		if err != nil {
			return err
		}
		defer lease.Unlock(ctx)
		clientGone() // the request is cancelled while the handler works
		return ctx.Err()
	}
	fmt.Println(handle(ctx))

	// The next request takes the lock at once.
	lease, err := m.TryLock(context.Background())
	fmt.Println(err)
	_ = lease.Unlock(context.Background())
	// Output:
	// context canceled
	// <nil>
}

// In fair mode waiters acquire in arrival order; the release hands the lock
// straight to the next one.
func ExampleWithFair() {
	c, done := newExampleClient(locks.WithFair(2*time.Second), locks.WithTTL(10*time.Second))
	defer done()
	ctx := context.Background()
	m, _ := c.Mutex("printer")
	first, _ := m.Lock(ctx)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var order []string
	for i, who := range []string{"ann", "bob", "cat"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, _ := m.Lock(ctx)
			mu.Lock()
			order = append(order, who)
			mu.Unlock()
			l.Unlock(ctx)
		}()
		for { // let each waiter queue before the next arrives
			if info, _ := c.Inspect(ctx, "printer"); info.Waiters == int64(i+1) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	first.Unlock(ctx)
	wg.Wait()
	fmt.Println(order)
	// Output: [ann bob cat]
}

// The watchdog renews the lease while the work runs; Context ends the work
// if the lease is lost.
func ExampleWithWatchdog() {
	c, done := newExampleClient()
	defer done()
	ctx := context.Background()
	m, _ := c.Mutex("nightly-report", locks.WithTTL(time.Second), locks.WithWatchdog(1.0/3))
	lease, err := m.Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	work, stop := lease.Context(ctx)
	defer stop()
	select {
	case <-time.After(50 * time.Millisecond): // the work
		fmt.Println("work finished while the lock was held")
	case <-work.Done():
		fmt.Println("lost the lock:", context.Cause(work))
	}
	fmt.Println(lease.Unlock(ctx))
	// Output:
	// work finished while the lock was held
	// <nil>
}

// Fencing tokens grow with every acquisition, so storage can refuse a write
// from a holder whose lease ran out while it was paused.
func ExampleLease_Token() {
	c, done := newExampleClient()
	defer done()
	ctx := context.Background()
	m, _ := c.Mutex("account:7")
	highest := int64(0)
	write := func(who string, token int64) string {
		if token <= highest {
			return "rejected the stale write of " + who
		}
		highest = token
		return "accepted the write of " + who
	}
	a, _ := m.Lock(ctx)
	a.Unlock(ctx)
	b, _ := m.Lock(ctx)
	fmt.Println(write("the current holder", b.Token()))
	fmt.Println(write("the earlier holder", a.Token())) // a late write
	b.Unlock(ctx)
	// Output:
	// accepted the write of the current holder
	// rejected the stale write of the earlier holder
}

func ExampleClient_Inspect() {
	c, done := newExampleClient()
	defer done()
	ctx := context.Background()
	m, _ := c.Mutex("import", locks.WithLabel("importer"), locks.WithTTL(time.Minute))
	lease, _ := m.Lock(ctx)
	defer lease.Unlock(ctx)
	info, _ := c.Inspect(ctx, "import")
	fmt.Println(info.Held, info.Holder.Label, info.Token == lease.Token(), info.TTL > 0)
	// Output: true importer true true
}

func ExampleRWMutex() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	ctx := context.Background()
	rw, _ := c.RWMutex("catalog")

	r1, _ := rw.RLock(ctx)
	r2, _ := rw.RLock(ctx) // readers share the lock
	_, err := rw.TryLock(ctx)
	fmt.Println("writer while two read:", errors.Is(err, locks.ErrNotAcquired))
	r1.Unlock(ctx)
	r2.Unlock(ctx)

	w, _ := rw.Lock(ctx)
	_, err = rw.TryRLock(ctx)
	fmt.Println("reader while one writes:", errors.Is(err, locks.ErrNotAcquired))
	w.Unlock(ctx)
	// Output:
	// writer while two read: true
	// reader while one writes: true
}

// Each permit is a lease: a crashed holder's permits come back by themselves.
func ExampleSemaphore() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	ctx := context.Background()
	sem, _ := c.Semaphore("api-quota", 3)

	two, _ := sem.Acquire(ctx, 2)
	_, err := sem.TryAcquire(ctx, 2)
	fmt.Println("2 more of 3:", errors.Is(err, locks.ErrNotAcquired))
	one, _ := sem.TryAcquire(ctx, 1)
	fmt.Println("the last one:", one != nil)
	two.Unlock(ctx)
	one.Unlock(ctx)
	// Output:
	// 2 more of 3: true
	// the last one: true
}

// A MultiLock holds all its locks or none.
func ExampleMultiLock() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	ctx := context.Background()
	transfer, _ := c.MultiLock([]string{"account:1", "account:2"})
	lease, err := transfer.Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("holding", len(lease.Leases), "locks")
	// The order a contended Lock takes them in; code that nests Mutexes
	// over these names should follow it.
	fmt.Println("order:", transfer.Names())
	other, _ := c.MultiLock([]string{"account:2", "account:3"})
	_, err = other.TryLock(ctx)
	fmt.Println("overlapping set:", errors.Is(err, locks.ErrNotAcquired))
	info, _ := c.Inspect(ctx, "account:3")
	fmt.Println("account:3 held:", info.Held)
	lease.Unlock(ctx)
	// Output:
	// holding 2 locks
	// order: [account:2 account:1]
	// overlapping set: true
	// account:3 held: false
}

// An owner token names the holder for operators (Inspect reports it), but
// without WithReentrant each Lock or TryLock call of that owner is its own
// holder: a second call waits, and an Unlock releases only its own call's
// hold.
func ExampleWithOwner() {
	c, done := newExampleClient(locks.WithTTL(10 * time.Second))
	defer done()
	ctx := context.Background()

	m, _ := c.Mutex("report:nightly", locks.WithOwner("worker-7"))
	first, _ := m.Lock(ctx)
	_, err := m.TryLock(ctx) // the same owner, another call
	fmt.Println(errors.Is(err, locks.ErrNotAcquired))

	info, _ := c.Inspect(ctx, "report:nightly")
	fmt.Println(info.Owner)
	fmt.Println(first.Unlock(ctx))
	// Output:
	// true
	// worker-7
	// <nil>
}
