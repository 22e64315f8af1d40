package lockbench

import (
	"context"
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
	rates, errs, err := Interleaved(context.Background(), lockers, "t:q", 2, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rates {
		if r <= 0 || errs[i] != nil {
			t.Errorf("%s: %v pairs/s, %v", QuorumContenders()[i].Name, r, errs[i])
		}
	}
	if _, _, err := Interleaved(context.Background(), lockers, "t:q", 0, time.Millisecond); err == nil {
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
