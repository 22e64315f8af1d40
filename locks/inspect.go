package locks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// LockInfo is what Inspect reports about a lock.
type LockInfo struct {
	Name      string
	Held      bool
	Owner     string        // the holder's owner token
	Token     int64         // the holder's fencing token
	HoldCount int64         // reentrant holds
	TTL       time.Duration // the lease's remaining time
	Holder    Metadata      // who holds it
	Waiters   int64         // fair-mode waiters in the queue
}

// Metadata describes a holder, as recorded when it acquired the lock.
type Metadata struct {
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Label string `json:"label"`
}

// Inspect reports who holds the lock called name, for operators asking "who
// holds this lock?". It runs a read-only script (EVALSHA_RO, so replicas
// may answer it).
func (c *Client) Inspect(ctx context.Context, name string) (LockInfo, error) {
	if err := checkCtx(ctx, "inspect "+name); err != nil {
		return LockInfo{}, err
	}
	k, err := keysFor(name)
	if err != nil {
		return LockInfo{}, err
	}
	reply, err := c.backend().Run(ctx, c.scripts.mutexInspect, []string{k.lock, k.queue}).Slice()
	if err != nil {
		return LockInfo{}, wrapCtx(ctx, "locks: inspect "+name, err)
	}
	if len(reply) != 6 {
		return LockInfo{}, fmt.Errorf("locks: inspect %s: unexpected reply %v", name, reply)
	}
	info := LockInfo{Name: name}
	if owner, ok := reply[0].(string); ok {
		info.Held, info.Owner = true, owner
	}
	info.Token, _ = reply[1].(int64)
	info.HoldCount, _ = reply[2].(int64)
	if ms, _ := reply[3].(int64); ms > 0 {
		info.TTL = time.Duration(ms) * time.Millisecond
	}
	if meta, _ := reply[4].(string); meta != "" {
		_ = json.Unmarshal([]byte(meta), &info.Holder) // metadata is informational
	}
	info.Waiters, _ = reply[5].(int64)
	return info, nil
}
