package lockbench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The quorum peers run against three independent servers, and Interleaved
// gives each locker its own rate.
func TestQuorumInterleaved(t *testing.T) {
	needServer(t)
	addrs, stop, err := StartServers(3)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var lockers []Locker
	for _, c := range QuorumContenders() {
		l, err := c.New(addrs)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		defer l.Close()
		lockers = append(lockers, l)
	}
	got, err := Interleaved(context.Background(), lockers, "t:q", 2, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got.Rates {
		if r <= 0 || got.Errs[i] != nil {
			t.Errorf("%s: %v pairs/s, %v", QuorumContenders()[i].Name, r, got.Errs[i])
		}
		if len(got.Rounds[i]) != 2 || got.Rounds[i][0] <= 0 || got.Rounds[i][1] <= 0 {
			t.Errorf("%s: per-round rates %v, want two positive rates", QuorumContenders()[i].Name, got.Rounds[i])
		}
	}
	if _, err := Interleaved(context.Background(), lockers, "t:q", 0, time.Millisecond); err == nil {
		t.Error("0 rounds accepted")
	}
}

// Plain and replica-acknowledged redlua both work on a primary with a replica.
func TestReplicaContenders(t *testing.T) {
	needServer(t)
	addr, stop, err := StartPrimaryReplica()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	info, err := rc.Info(context.Background(), "replication").Result()
	if err != nil || !strings.Contains(info, "connected_slaves:1") {
		t.Fatalf("the primary has no replica: %v\n%s", err, info)
	}
	for _, c := range ReplicaContenders() {
		l, err := c.New(addr)
		if err != nil && strings.Contains(err.Error(), "WithReplicas needs a backend") {
			// locks offers WithReplicas before evalsha can send WAIT with a
			// script; the cost row then reports this error, and so does this.
			t.Skipf("%s: not usable with this locks/evalsha yet: %v", c.Name, err)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		rate, err := Uncontended(context.Background(), l, "t:replica:"+c.Name, 50*time.Millisecond)
		l.Close()
		if err != nil || rate <= 0 {
			t.Fatalf("%s on the primary: %v, %v", c.Name, rate, err)
		}
	}
}

// A round in which either locker had failed (rate 0) gives no ratio; the
// median of an even count is the mean of the middle two.
func TestRoundRatiosAndSpread(t *testing.T) {
	ratios := RoundRatios([]float64{10, 9, 0, 12, 8}, []float64{10, 10, 10, 0, 4})
	if want := []float64{1, 0.9, 2}; !slices.Equal(ratios, want) {
		t.Fatalf("RoundRatios = %v, want %v", ratios, want)
	}
	if m, lo, hi := Spread(ratios); m != 1 || lo != 0.9 || hi != 2 {
		t.Errorf("Spread(%v) = %v, %v, %v; want 1, 0.9, 2", ratios, m, lo, hi)
	}
	if m, _, _ := Spread([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", m)
	}
	if m, lo, hi := Spread(nil); m != 0 || lo != 0 || hi != 0 {
		t.Errorf("Spread(nil) = %v, %v, %v; want zeros", m, lo, hi)
	}
}
