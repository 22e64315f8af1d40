package locks_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// Locks on a 3-primary Redis Cluster with a replica each: keys of one lock
// share a slot, wake-ups travel over sharded pub/sub (SPUBLISH/SSUBSCRIBE,
// so a release does not broadcast to every node), and a lock taken with
// WithReplicas survives a CLUSTER FAILOVER of its shard.
func TestCluster(t *testing.T) {
	mostlyWaits(t)
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3, ReplicasPerPrimary: 1})
	newClient := func(t *testing.T, opts ...locks.Option) *locks.Client {
		c, err := locks.New(cl.Client(func(o *redis.ClusterOptions) { o.MaxRedirects = 16 }), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("mutual exclusion across clients", func(t *testing.T) {
		for _, mode := range []struct {
			name string
			opts []locks.Option
		}{{"plain", nil}, {"fair", []locks.Option{locks.WithFair(0)}}} {
			t.Run(mode.name, func(t *testing.T) {
				ctx := timeout(t, 60*time.Second)
				var inside atomic.Int32
				counter := 0
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for w := 0; w < 8; w++ {
					c := newClient(t, append([]locks.Option{locks.WithTTL(10 * time.Second)}, mode.opts...)...)
					wg.Add(1)
					go func() {
						defer wg.Done()
						m, _ := c.Mutex("cluster:counter:" + mode.name)
						for i := 0; i < 50; i++ {
							l, err := m.Lock(ctx)
							if err != nil {
								errs <- err
								return
							}
							if inside.Add(1) != 1 {
								errs <- errors.New("two holders at once")
							}
							v := counter
							time.Sleep(0)
							counter = v + 1
							inside.Add(-1)
							if err := l.Unlock(ctx); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				if counter != 400 {
					t.Fatalf("counter = %d, want 400", counter)
				}
			})
		}
	})

	// The names of each pair sit in different slots, most on different
	// nodes: each MultiLock takes one group per slot, and a blocked one
	// queues on the blocking lock's node.
	t.Run("MultiLocks and Mutexes contending", func(t *testing.T) {
		contendMultiAndMutexes(t, timeout(t, time.Minute), newClient, 10, "cluster:multi:")
	})

	t.Run("wake-ups over sharded pub/sub", func(t *testing.T) {
		ctx := timeout(t, 30*time.Second)
		before := publishCounts(t, cl)
		holderC, waiterC := newClient(t, locks.WithTTL(time.Minute)), newClient(t, locks.WithTTL(time.Minute))
		// A waiter that refreshes only every 10 s and a holder lease of a
		// minute: a wake-up within 5 s can only be the release's message.
		m, _ := waiterC.Mutex("cluster:wake", locks.WithWaiterTTL(30*time.Second))
		rw, _ := waiterC.RWMutex("cluster:rw")
		sem, _ := waiterC.Semaphore("cluster:sem", 1)
		for _, tc := range []struct {
			name string
			hold func() (*locks.Lease, error)
			wait func(context.Context) (*locks.Lease, error)
		}{
			{"mutex", func() (*locks.Lease, error) { return mutex(t, holderC, "cluster:wake").Lock(ctx) }, m.Lock},
			{"rwmutex", func() (*locks.Lease, error) {
				w, _ := holderC.RWMutex("cluster:rw")
				return w.Lock(ctx)
			}, rw.RLock},
			{"semaphore", func() (*locks.Lease, error) {
				s, _ := holderC.Semaphore("cluster:sem", 1)
				return s.Acquire(ctx, 1)
			}, func(ctx context.Context) (*locks.Lease, error) { return sem.Acquire(ctx, 1) }},
		} {
			held, err := tc.hold()
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() {
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				l, err := tc.wait(wctx)
				if err == nil {
					err = l.Unlock(ctx)
				}
				got <- err
			}()
			waitFor(t, func() bool { return waiterC.Stats().Contended > 0 })
			time.Sleep(50 * time.Millisecond) // let the waiter settle into its wait
			if err := held.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("%s: the waiter was not woken by the release: %v", tc.name, err)
			}
		}
		after := publishCounts(t, cl)
		if after["spublish"] <= before["spublish"] {
			t.Errorf("no SPUBLISH ran on any node (%v -> %v)", before, after)
		}
		if after["publish"] != before["publish"] {
			t.Errorf("a release broadcast with PUBLISH (%v -> %v)", before, after)
		}
	})

	// A forced unlock on a cluster reaches the holder at once: the Client
	// grants over sharded pub/sub but hears revocations on its one revoke
	// channel with classic SUBSCRIBE (on any node), which lock.forceunlock
	// publishes with classic PUBLISH whatever the lock's slot; the holder
	// holds locks of three slots and keeps one subscription.
	t.Run("forced unlock over the classic revoke channel", func(t *testing.T) {
		ctx := timeout(t, 30*time.Second)
		holderC, operator := newClient(t, locks.WithTTL(time.Minute)), newClient(t)
		rw, _ := holderC.RWMutex("cluster:force:rw", locks.WithTTL(time.Minute))
		sem, _ := holderC.Semaphore("cluster:force:sem", 2, locks.WithTTL(time.Minute))
		var held []*locks.Lease
		for _, take := range []func() (*locks.Lease, error){
			func() (*locks.Lease, error) {
				return mutex(t, holderC, "cluster:force:m", locks.WithTTL(time.Minute)).TryLock(ctx)
			},
			func() (*locks.Lease, error) { return rw.TryRLock(ctx) },
			func() (*locks.Lease, error) { return sem.TryAcquire(ctx, 1) },
		} {
			l, err := take()
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, l)
		}
		revokeChannels := func() int {
			n := 0
			for _, node := range cl.Nodes {
				chs, err := node.Do(ctx, "PUBSUB", "CHANNELS", "redlua:revoke:*").StringSlice()
				if err != nil {
					t.Fatal(err)
				}
				n += len(chs)
			}
			return n
		}
		waitFor(t, func() bool { return revokeChannels() > 0 })
		if n := revokeChannels(); n != 1 {
			t.Fatalf("revoke channels subscribed over the nodes = %d with 3 locks held, want 1", n)
		}
		for i, name := range []string{"cluster:force:m", "cluster:force:rw", "cluster:force:sem"} {
			if revoked, err := operator.ForceUnlock(ctx, name, locks.WithGrace(time.Minute)); err != nil || !revoked {
				t.Fatalf("ForceUnlock %s = %v, %v", name, revoked, err)
			}
			select {
			case <-held[i].Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: the holder's lease still live 5s after ForceUnlock (its renewal is 20s away)", name)
			}
			if err := held[i].Unlock(ctx); !errors.Is(err, locks.ErrForced) {
				t.Fatalf("%s: Unlock = %v, want ErrForced", name, err)
			}
			for _, l := range held[i+1:] {
				if l.Err() != nil {
					t.Fatalf("ForceUnlock of %s ended another lease: %v", name, l.Err())
				}
			}
		}
	})

	// A manual CLUSTER FAILOVER waits for the replica to catch up, so this
	// shows that leases, renewals (WAIT routed to the slot's primary) and
	// releases follow the promotion; that WithReplicas prevents double grants
	// when the replica lags is shown by the fault suite (fault_*_test.go).
	t.Run("CLUSTER FAILOVER with WithReplicas", func(t *testing.T) {
		ctx := timeout(t, 60*time.Second)
		c := newClient(t, locks.WithTTL(30*time.Second), locks.WithReplicas(1, 2*time.Second))
		l, err := mutex(t, c, "cluster:failover").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		promoteReplicaOf(t, cl, "{cluster:failover}")
		other := newClient(t)
		if _, err := mutex(t, other, "cluster:failover").TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("after the failover another owner: %v, want ErrNotAcquired (the lock must survive)", err)
		}
		if err := l.Extend(ctx, 0); err != nil {
			t.Fatalf("Extend on the promoted replica: %v", err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("Unlock on the promoted replica: %v", err)
		}
	})
}

// publishCounts sums PUBLISH and SPUBLISH calls over the cluster's nodes.
func publishCounts(t *testing.T, cl *redistest.Cluster) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, n := range cl.Nodes {
		info, err := n.Do(context.Background(), "INFO", "commandstats").Text()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			for _, cmd := range []string{"publish", "spublish"} {
				if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
					var n int64
					for _, ch := range rest {
						if ch < '0' || ch > '9' {
							break
						}
						n = n*10 + int64(ch-'0')
					}
					out[cmd] += n
				}
			}
		}
	}
	return out
}

// promoteReplicaOf runs CLUSTER FAILOVER on the replica of the primary that
// owns key, and waits until that replica is a primary.
func promoteReplicaOf(t *testing.T, cl *redistest.Cluster, key string) {
	t.Helper()
	ctx := context.Background()
	slot, err := cl.Primaries[0].Do(ctx, "CLUSTER", "KEYSLOT", key).Int64()
	if err != nil {
		t.Fatal(err)
	}
	var owner *redistest.Server
	for _, p := range cl.Primaries {
		n, err := p.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", slot).Int64()
		if err == nil && n > 0 {
			owner = p
		}
	}
	if owner == nil {
		t.Fatalf("no primary holds a key in slot %d", slot)
	}
	for _, r := range cl.Replicas {
		role, err := r.Do(ctx, "ROLE").Slice()
		if err != nil || len(role) < 3 || role[0] != "slave" || role[2] != int64(owner.Port) {
			continue
		}
		if err := r.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if role, _ := r.Do(ctx, "ROLE").Slice(); len(role) > 0 && role[0] == "master" {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("the replica did not become a primary in 20s")
	}
	t.Fatalf("no replica of the primary on port %d", owner.Port)
}
