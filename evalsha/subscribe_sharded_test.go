package evalsha_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// listener collects the payloads one channel delivers.
type listener chan string

func (l listener) deliver(p string) {
	select { // deliver must not block
	case l <- p:
	default:
	}
}

// next waits for the next payload, failing the test after 10 s.
func (l listener) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case p := <-l:
		return p
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing delivered within 10s", what)
		return ""
	}
}

// expect waits for payload, skipping empty wake-ups only when allowEmpty.
func (l listener) expect(t *testing.T, what, payload string) {
	t.Helper()
	for {
		p := l.next(t, what)
		if p == payload {
			return
		}
		if p != "" {
			t.Fatalf("%s: delivered %q, want %q", what, p, payload)
		}
	}
}

func TestShardedPubSubDefaults(t *testing.T) {
	_, c := miniClient(t)
	if newRunner(t, c).ShardedPubSub() {
		t.Error("a standalone client uses sharded pub/sub by default")
	}
	if !newRunner(t, c, evalsha.WithShardedPubSub(true)).ShardedPubSub() {
		t.Error("WithShardedPubSub(true) ignored")
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	if !newRunner(t, cc).ShardedPubSub() {
		t.Error("a cluster client does not use sharded pub/sub by default")
	}
	if newRunner(t, cc, evalsha.WithShardedPubSub(false)).ShardedPubSub() {
		t.Error("WithShardedPubSub(false) ignored")
	}
}

// Standalone Redis 7 has SSUBSCRIBE/SPUBLISH too.
func TestShardedPubSubStandalone(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := newRunner(t, srv.Client(), evalsha.WithShardedPubSub(true))
	spub := script(t, testRegistry(t), "spub")
	l := make(listener, 16)
	if _, err := r.Subscribe(ctx, "{s}ch", l.deliver); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Run(ctx, spub, []string{"{s}k"}, "{s}ch", "hi").Int64(); err != nil || n != 1 {
		t.Fatalf("SPUBLISH reached %d subscribers, %v; want 1", n, err)
	}
	l.expect(t, "{s}ch", "hi")
}

// On a cluster each node's channels share one SSUBSCRIBE connection to that
// node; a script's SPUBLISH reaches them, and after the node drops the
// connection the handlers get an empty wake-up and keep receiving, even
// though the node's channels live in different slots (go-redis's own
// re-subscription would be refused with CROSSSLOT).
func TestShardedPubSubCluster(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3})
	client := cl.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := newRunner(t, client)
	if !r.ShardedPubSub() {
		t.Fatal("cluster Runner does not use sharded pub/sub")
	}
	spub := script(t, testRegistry(t), "spub")

	// Two tags owned by one primary (in different slots), one by another.
	byNode := map[string][]string{}
	for i := 0; i < 30; i++ {
		tag := fmt.Sprintf("t%d", i)
		addr := addrOf(t, client, tag)
		byNode[addr] = append(byNode[addr], tag)
	}
	var sameNode []string
	var other string
	for _, node := range byNode {
		if len(node) >= 2 && sameNode == nil {
			sameNode = node[:2]
		} else {
			other = node[0]
		}
	}
	if sameNode == nil || other == "" {
		t.Fatalf("30 tags did not spread over the primaries: %v", byNode)
	}
	tags := append(append([]string{}, sameNode...), other)
	listeners := map[string]listener{}
	for _, tag := range tags {
		l := make(listener, 16)
		listeners[tag] = l
		if _, err := r.Subscribe(ctx, "{"+tag+"}ch", l.deliver); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(tag, payload string) {
		t.Helper()
		n, err := r.Run(ctx, spub, []string{"{" + tag + "}k"}, "{"+tag+"}ch", payload).Int64()
		if err != nil || n != 1 {
			t.Fatalf("SPUBLISH on {%s}ch reached %d subscribers, %v; want 1 (one connection per node)", tag, n, err)
		}
	}
	for _, tag := range tags {
		publish(tag, "before")
		listeners[tag].expect(t, tag, "before")
	}

	// Drop the shared connection to the first node.
	var node *redistest.Server
	for _, p := range cl.Primaries {
		if p.Addr == addrOf(t, client, sameNode[0]) {
			node = p
		}
	}
	if n, err := node.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Int64(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub on %s = %d, %v; want one connection killed", node.Addr, n, err)
	}
	for _, tag := range sameNode {
		if p := listeners[tag].next(t, tag+" after the kill"); p != "" {
			t.Fatalf("{%s}ch delivered %q after its connection was killed; want the empty wake-up", tag, p)
		}
		publish(tag, "after")
		listeners[tag].expect(t, tag, "after")
	}
	publish(other, "untouched")
	listeners[other].expect(t, other, "untouched")
}

func addrOf(t *testing.T, c *redis.ClusterClient, tag string) string {
	t.Helper()
	node, err := c.MasterForKey(context.Background(), "{"+tag+"}")
	if err != nil {
		t.Fatal(err)
	}
	return node.Options().Addr
}

// A node's connection that breaks while it holds no channel reconnects to a
// random node (go-redis routes a PubSub by its channels); the next
// subscription there is answered MOVED and must still succeed. Several
// rounds, since a random pick may hit the right node.
func TestShardedPubSubAfterIdleReconnect(t *testing.T) {
	cl := redistest.NewCluster(t, redistest.ClusterOptions{Primaries: 3})
	client := cl.Client()
	r := newRunner(t, client)
	spub := script(t, testRegistry(t), "spub")
	addr := addrOf(t, client, "idle")
	var node *redistest.Server
	for _, p := range cl.Primaries {
		if p.Addr == addr {
			node = p
		}
	}
	for round := 0; round < 6; round++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l := make(listener, 16)
		unsub, err := r.Subscribe(ctx, "{idle}ch", l.deliver)
		if err != nil {
			cancel()
			t.Fatalf("round %d: %v", round, err)
		}
		if n, err := r.Run(ctx, spub, []string{"{idle}k"}, "{idle}ch", "hi").Int64(); err != nil || n != 1 {
			cancel()
			t.Fatalf("round %d: SPUBLISH reached %d subscribers, %v", round, n, err)
		}
		l.expect(t, fmt.Sprintf("round %d", round), "hi")
		unsub()
		cancel()
		// Drop the idle connection (once the server has seen the SUNSUBSCRIBE).
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, err := node.Do(context.Background(), "PUBSUB", "SHARDNUMSUB", "{idle}ch").Slice()
			if err == nil && len(n) == 2 && n[1] == int64(0) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the channel still has a subscriber: %v %v", round, n, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// With no channel left it is no pub/sub client any more.
		if err := node.Do(context.Background(), "CLIENT", "KILL", "TYPE", "normal").Err(); err != nil {
			t.Fatal(err)
		}
	}
}
