package simulate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
)

func TestSSubscribe(t *testing.T) {
	ctx := context.Background()
	s := New()
	var shard, plain []string
	unsubShard, err := s.SSubscribe(ctx, "events", func(p string) { shard = append(shard, p) })
	if err != nil {
		t.Fatal(err)
	}
	unsubPlain, err := s.Subscribe(ctx, "events", func(p string) { plain = append(plain, p) })
	if err != nil {
		t.Fatal(err)
	}
	defer unsubPlain()
	src := "return redis.call('SPUBLISH', KEYS[1], ARGV[1])"
	if n, err := s.RunSource(ctx, src, []string{"events"}, "from-script").Int64(); err != nil || n != 1 {
		t.Fatalf("SPUBLISH from a script = %d, %v; want 1 receiver", n, err)
	}
	if n, err := s.Do(ctx, "SPUBLISH", "events", "from-do").Int64(); err != nil || n != 1 {
		t.Fatalf("SPUBLISH from Do = %d, %v; want 1 receiver", n, err)
	}
	if n, err := s.Do(ctx, "PUBLISH", "events", "plain").Int64(); err != nil || n != 1 {
		t.Fatalf("PUBLISH = %d, %v; want 1 receiver (the ordinary subscriber)", n, err)
	}
	if diff := cmp.Diff([]string{"from-script", "from-do"}, shard); diff != "" {
		t.Errorf("shard subscriber got (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"plain"}, plain); diff != "" {
		t.Errorf("ordinary subscriber got (-want +got):\n%s", diff)
	}
	unsubShard()
	if n, _ := s.Do(ctx, "SPUBLISH", "events", "late").Int64(); n != 0 || len(shard) != 2 {
		t.Errorf("after unsubscribe: %d receivers, %d deliveries; want 0 and 2", n, len(shard))
	}
	if _, err := s.SSubscribe(ctx, "", func(string) {}); err == nil {
		t.Errorf("SSubscribe with an empty channel succeeded")
	}
	if _, err := s.SSubscribe(ctx, "c", nil); err == nil {
		t.Errorf("SSubscribe without a deliver function succeeded")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.SSubscribe(canceled, "c", func(string) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("SSubscribe: err = %v; want one wrapping context.Canceled", err)
	}
}

// TestShardPublishMatchesRedis: with one shard subscriber and one ordinary
// subscriber on the same name, PUBLISH and SPUBLISH reach (and count) only
// their own kind, on redis-server as in the simulator.
func TestShardPublishMatchesRedis(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client()
	ctx := context.Background()
	ssub := client.SSubscribe(ctx, "ch")
	defer ssub.Close()
	psub := client.Subscribe(ctx, "ch")
	defer psub.Close()
	for _, ps := range []*redis.PubSub{ssub, psub} {
		if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
			t.Fatal(err)
		}
	}
	sim := New()
	var simShard, simPlain []string
	u1, _ := sim.SSubscribe(ctx, "ch", func(p string) { simShard = append(simShard, p) })
	defer u1()
	u2, _ := sim.Subscribe(ctx, "ch", func(p string) { simPlain = append(simPlain, p) })
	defer u2()
	for _, cmd := range [][]any{{"SPUBLISH", "ch", "s1"}, {"PUBLISH", "ch", "p1"}, {"SPUBLISH", "other", "x"}, {"SPUBLISH", "ch", "s2"}} {
		compareDo(t, t.Errorf, client, sim, cmd...)
	}
	recv := func(ps *redis.PubSub, n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			msg, err := ps.ReceiveTimeout(ctx, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := msg.(*redis.Message)
			if !ok {
				t.Fatalf("received %T %v; want a message", msg, msg)
			}
			out = append(out, m.Payload)
		}
		return out
	}
	if diff := cmp.Diff(recv(ssub, 2), simShard); diff != "" {
		t.Errorf("shard messages (-redis +simulator):\n%s", diff)
	}
	if diff := cmp.Diff(recv(psub, 1), simPlain); diff != "" {
		t.Errorf("ordinary messages (-redis +simulator):\n%s", diff)
	}
}
