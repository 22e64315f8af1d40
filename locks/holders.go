package locks

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Holder metadata lives apart from the holds (issue 45 item 2): a hold
// record carries "~" where the Client's metadata (host, pid, label) would
// be, and the Client writes that metadata once under its holder key,
// "<key prefix>{redlua-holders}:<client id>" (holder.write), with a TTL of
// holderTTL, rewritten when older than half of it. Inspect joins the two
// (holder.read). A lock with a label of its own (WithLabel on the lock,
// not the Client) carries {"label":...} and takes host and pid from the
// holder record. So a hold's value stays short enough for Redis to keep a
// lock's hash as a listpack (no value over 64 bytes).
const (
	// holderPlaceholder is the metadata of a hold whose Client's holder
	// record has it.
	holderPlaceholder = "~"
	// holderTTL is how long a holder record lives unless rewritten.
	holderTTL = 24 * time.Hour
	// holderRetry is how soon a failed holder write is tried again.
	holderRetry = time.Minute
	// holderTag is the holder keys' hash tag: every holder key is in its slot.
	holderTag = "{redlua-holders}:"
	// maxHolderKeys is the most holder keys one holder.read call reads.
	maxHolderKeys = 1000
)

// holderState is when a Client's holder record is due.
type holderState struct {
	mu   sync.Mutex
	due  time.Time // the zero time: never written
	busy bool      // a write is under way
}

// holderKey is the holder key of the Client with id.
func (c *Client) holderKey(id string) string { return c.defaults.keyPrefix + holderTag + id }

// keepHolderRecord writes the Client's holder record on node when it is
// due (the first acquire, then every holderTTL/2): every acquisition calls
// it before it runs its script. A quorum Client keeps no holder record
// (c.holders is nil): its holds carry the whole metadata. A failed write is
// not the acquire's failure: Inspect then reports the holder as unknown,
// and the write is tried again after holderRetry. Concurrent first
// acquires do not wait for one another's write.
func (c *Client) keepHolderRecord(ctx context.Context, node Backend) {
	if c.holders == nil || ctx.Err() != nil {
		return
	}
	st := &c.holders[0]
	now := c.clock.Now()
	st.mu.Lock()
	if st.busy || (!st.due.IsZero() && now.Before(st.due)) {
		st.mu.Unlock()
		return
	}
	st.busy = true
	st.mu.Unlock()
	err := node.Run(ctx, c.scripts.holderWrite, []string{c.holderKey(c.id)}, c.holderRecord, holderTTL.Milliseconds()).Err()
	st.mu.Lock()
	st.busy = false
	if err == nil {
		st.due = now.Add(holderTTL / 2)
	} else {
		st.due = now.Add(holderRetry)
	}
	st.mu.Unlock()
}

// labelMeta is the hold metadata of a lock whose label is not its
// Client's: the label alone (host and pid are in the holder record).
func labelMeta(label string) string {
	b, _ := json.Marshal(struct {
		Label string `json:"label"`
	}{label}) // cannot fail: a string
	return string(b)
}

// holderRef is a hold whose metadata Inspect joins with its Client's
// holder record.
type holderRef struct {
	client string
	meta   *Metadata
}

// needsHolder says a hold's stored metadata leaves host and pid to the
// holder record ("~", or a label alone).
func needsHolder(m Metadata) bool { return m.Host == "" && m.PID == 0 && m.Raw == "" }

// joinHolders fills the metadata of refs from their Clients' holder records
// on node, reading at most maxHolderKeys keys a call. A record that is
// missing or unreadable leaves the hold's metadata as stored (unknown):
// not an error, and neither is a failed read.
func (c *Client) joinHolders(ctx context.Context, node Backend, refs []holderRef) {
	var ids []string
	index := map[string]int{}
	for _, r := range refs {
		if r.client == "" || !needsHolder(*r.meta) {
			continue
		}
		if _, ok := index[r.client]; !ok {
			index[r.client] = len(ids)
			ids = append(ids, r.client)
		}
	}
	if len(ids) == 0 {
		return
	}
	found := make([]*Metadata, len(ids))
	for start := 0; start < len(ids); start += maxHolderKeys {
		batch := ids[start:min(start+maxHolderKeys, len(ids))]
		keys := make([]string, len(batch))
		for i, id := range batch {
			keys[i] = c.holderKey(id)
		}
		reply, err := node.Run(ctx, c.scripts.holderRead, keys).Slice()
		if err != nil {
			return
		}
		for i, v := range reply {
			if s, ok := v.(string); ok && i < len(batch) && s != "" {
				m := parseMetadata(s)
				found[start+i] = &m
			}
		}
	}
	for _, r := range refs {
		i, ok := index[r.client]
		if !ok || found[i] == nil || !needsHolder(*r.meta) {
			continue
		}
		label := r.meta.Label
		*r.meta = *found[i]
		if label != "" {
			r.meta.Label = label
		}
	}
}
