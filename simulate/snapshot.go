package simulate

import (
	"context"
	"errors"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/redlua/redlua/registry"
)

// Snapshot is a frozen copy of a keyspace: the model checker (package
// explore) keeps one per explored state and puts it back with Restore
// before trying the next step from that state. A Snapshot is never
// changed after it is made; Restore and Apply copy what they take from it.
type Snapshot struct {
	entries []snapEntry // sorted by key
}

// snapEntry is one key: its value (nil in a Delta: deleted) and the
// value's canonical encoding, which decides equality.
type snapEntry struct {
	key string
	enc string
	v   *value
}

// Snapshot copies the server's live keys (keys expired by the server's
// clock are left out, as if Redis had already reclaimed them).
func (s *Server) Snapshot() *Snapshot {
	if s == nil || s.ks == nil {
		return &Snapshot{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now().UnixMilli()
	sn := &Snapshot{entries: make([]snapEntry, 0, len(s.ks.keys))}
	for k, v := range s.ks.keys {
		if v.expiredBy(now) {
			continue
		}
		c := v.clone()
		sn.entries = append(sn.entries, snapEntry{key: k, enc: string(c.appendCanonical(nil)), v: c})
	}
	sort.Slice(sn.entries, func(i, j int) bool { return sn.entries[i].key < sn.entries[j].key })
	return sn
}

// Restore replaces the server's keyspace with a copy of sn (a nil sn holds
// no keys). The server's scripts, clock and subscribers stay as they are.
func (s *Server) Restore(sn *Snapshot) {
	if s == nil || s.ks == nil {
		return
	}
	if sn == nil {
		sn = &Snapshot{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make(map[string]*value, len(sn.entries))
	for _, e := range sn.entries {
		keys[e.key] = e.v.clone()
	}
	s.ks.keys = keys
}

// Len returns the number of keys in the snapshot.
func (sn *Snapshot) Len() int {
	if sn == nil {
		return 0
	}
	return len(sn.entries)
}

// AppendCanonical appends an encoding of the snapshot to b in which two
// snapshots encode the same bytes exactly when they hold the same keys
// with the same values, value order (a hash's field order, a list's) and
// absolute expiry times. The model checker uses it as the keyspace's part
// of a state's memoisation key.
func (sn *Snapshot) AppendCanonical(b []byte) []byte { return sn.AppendCanonicalWithout(b, nil) }

// AppendCanonicalWithout is AppendCanonical leaving out the keys in skip:
// for values a model does not observe, such as a counter that only grows.
func (sn *Snapshot) AppendCanonicalWithout(b []byte, skip []string) []byte {
	if sn == nil {
		sn = &Snapshot{}
	}
next:
	for _, e := range sn.entries {
		for _, k := range skip {
			if e.key == k {
				continue next
			}
		}
		b = strconv.AppendInt(b, int64(len(e.key)), 10)
		b = append(b, ':')
		b = append(b, e.key...)
		b = append(b, e.enc...)
	}
	return b
}

// Live returns the snapshot without the keys expired at now (sn itself
// when none are).
func (sn *Snapshot) Live(now time.Time) *Snapshot {
	if sn == nil {
		return &Snapshot{}
	}
	ms := now.UnixMilli()
	for i, e := range sn.entries {
		if e.v.expiredBy(ms) {
			out := &Snapshot{entries: append([]snapEntry(nil), sn.entries[:i]...)}
			for _, e := range sn.entries[i+1:] {
				if !e.v.expiredBy(ms) {
					out.entries = append(out.entries, e)
				}
			}
			return out
		}
	}
	return sn
}

// Dump lists the snapshot's keys that are live at now, as Server.Dump does.
func (sn *Snapshot) Dump(now time.Time) []KeyDump {
	if sn == nil {
		return nil
	}
	ms := now.UnixMilli()
	out := make([]KeyDump, 0, len(sn.entries))
	for _, e := range sn.entries { // sorted by key, as Dump lists them
		if !e.v.expiredBy(ms) {
			out = append(out, dumpValue(e.key, e.v, now))
		}
	}
	return out
}

// Delta is what changed between two snapshots: each changed key with its
// new value, or deleted. It is the model checker's unit of asynchronous
// replication: the effect of one script on the primary, applied later (or
// never) to the replica, as Redis replicates a script by its effects.
type Delta struct {
	entries []snapEntry // v nil: deleted
}

// Diff returns the keys whose value or expiry differs from before to after.
func Diff(before, after *Snapshot) *Delta {
	if before == nil {
		before = &Snapshot{}
	}
	if after == nil {
		after = &Snapshot{}
	}
	d := &Delta{}
	i, j := 0, 0
	for i < len(before.entries) || j < len(after.entries) {
		switch {
		case j == len(after.entries) || (i < len(before.entries) && before.entries[i].key < after.entries[j].key):
			d.entries = append(d.entries, snapEntry{key: before.entries[i].key, enc: "-"})
			i++
		case i == len(before.entries) || after.entries[j].key < before.entries[i].key:
			d.entries = append(d.entries, after.entries[j])
			j++
		default:
			if before.entries[i].enc != after.entries[j].enc {
				d.entries = append(d.entries, after.entries[j])
			}
			i++
			j++
		}
	}
	return d
}

// Empty reports whether the delta changes nothing.
func (d *Delta) Empty() bool { return d == nil || len(d.entries) == 0 }

// AppendCanonical appends an encoding of the delta to b, equal for equal deltas.
func (d *Delta) AppendCanonical(b []byte) []byte {
	if d == nil {
		d = &Delta{}
	}
	b = append(b, '{')
	for _, e := range d.entries {
		b = strconv.AppendInt(b, int64(len(e.key)), 10)
		b = append(b, ':')
		b = append(b, e.key...)
		b = append(b, e.enc...)
	}
	return append(b, '}')
}

// Apply returns a new snapshot: sn with d's changes made.
func (sn *Snapshot) Apply(d *Delta) *Snapshot {
	if sn == nil {
		sn = &Snapshot{}
	}
	if d == nil {
		d = &Delta{}
	}
	out := &Snapshot{entries: make([]snapEntry, 0, len(sn.entries)+len(d.entries))}
	i, j := 0, 0
	for i < len(sn.entries) || j < len(d.entries) {
		switch {
		case j == len(d.entries) || (i < len(sn.entries) && sn.entries[i].key < d.entries[j].key):
			out.entries = append(out.entries, sn.entries[i])
			i++
		default:
			if i < len(sn.entries) && sn.entries[i].key == d.entries[j].key {
				i++
			}
			if d.entries[j].v != nil {
				out.entries = append(out.entries, d.entries[j])
			}
			j++
		}
	}
	return out
}

// RunReply runs a registry script as Run does and returns its raw reply,
// before the conversion to go-redis's Go values: a script's error comes
// back as a KindError reply, and err is only for what is not a reply (a
// refused call, a key-discipline violation, a canceled context).
func (s *Server) RunReply(ctx context.Context, script *registry.Script, keys []string, args ...any) (Reply, error) {
	if script == nil {
		return Reply{}, errors.New("simulate: RunReply needs a script; got nil (load one with registry.New or registry.ParseScript)")
	}
	if err := script.CheckCall(len(keys), len(args)); err != nil {
		return Reply{}, err // names the script and the fix
	}
	if err := s.checkCall(ctx, "run script ", script.ID()); err != nil {
		return Reply{}, err
	}
	return s.runScript(ctx, script.Source, script.SHA1, script, keys, args, false)
}

// DoReply runs one command as Do does and returns its raw reply (RESP3
// kinds as commands build them; see Downgrade).
func (s *Server) DoReply(ctx context.Context, args ...any) (Reply, error) {
	return s.do(ctx, "DoReply", args)
}

// clone returns a deep copy of v.
func (v *value) clone() *value {
	c := &value{kind: v.kind, str: v.str, exp: v.exp, lru: v.lru, big: v.big, strEnc: v.strEnc, setLP: v.setLP}
	switch v.kind {
	case kindHash:
		c.hash = make(map[string]string, len(v.hash))
		for f, x := range v.hash {
			c.hash[f] = x
		}
		c.fields = append([]string(nil), v.fields...)
	case kindZSet:
		c.zset = make(map[string]float64, len(v.zset))
		for m, s := range v.zset {
			c.zset[m] = s
		}
	case kindList:
		c.list = append([]string(nil), v.list...)
	case kindSet:
		c.set = make(map[string]struct{}, len(v.set))
		for m := range v.set {
			c.set[m] = struct{}{}
		}
		c.setOrder = append([]string(nil), v.setOrder...)
	case kindStream:
		c.stream = v.stream.clone()
	}
	return c
}

// clone copies a stream, its nodes included (entries point at their node).
func (st *stream) clone() *stream {
	c := &stream{last: st.last, added: st.added, maxDeleted: st.maxDeleted, groups: st.cloneGroups(), nodes: make([]*streamNode, len(st.nodes)), entries: make([]streamEntry, len(st.entries))}
	moved := make(map[*streamNode]*streamNode, len(st.nodes))
	for i, n := range st.nodes {
		nn := *n
		nn.fields = append([]string(nil), n.fields...)
		c.nodes[i] = &nn
		moved[n] = &nn
	}
	for i, e := range st.entries {
		c.entries[i] = streamEntry{id: e.id, fields: append([]string(nil), e.fields...), node: moved[e.node]}
	}
	return c
}

// appendCanonical appends v's kind, expiry and content, each string
// length-prefixed so that no two values share an encoding.
func (v *value) appendCanonical(b []byte) []byte {
	str := func(b []byte, s string) []byte {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		return append(b, s...)
	}
	b = append(b, byte('0'+v.kind))
	b = strconv.AppendInt(b, v.exp, 10)
	b = append(b, '|')
	switch v.kind {
	case kindString:
		b = str(b, v.str)
	case kindHash:
		for _, f := range v.fields {
			b = str(b, f)
			b = str(b, v.hash[f])
		}
	case kindZSet:
		for _, m := range sortedMembers(v.zset) {
			b = str(b, m.Member)
			b = strconv.AppendUint(b, math.Float64bits(m.Score), 16)
			b = append(b, ';')
		}
	case kindList:
		for _, x := range v.list {
			b = str(b, x)
		}
	case kindSet:
		for _, m := range sortedSet(v.set) {
			b = str(b, m)
		}
	case kindStream:
		b = strconv.AppendUint(b, v.stream.last.ms, 10)
		b = append(b, '-')
		b = strconv.AppendUint(b, v.stream.last.seq, 10)
		for _, e := range v.stream.entries {
			b = append(b, e.id.String()...)
			for _, f := range e.fields {
				b = str(b, f)
			}
		}
		b = v.stream.appendGroups(b)
	}
	return append(b, ';')
}

// NextExpiry returns the earliest key expiry in the snapshot that is later
// than now, and false when no key expires after now.
func (sn *Snapshot) NextExpiry(now time.Time) (time.Time, bool) {
	if sn == nil {
		return time.Time{}, false
	}
	ms, best := now.UnixMilli(), int64(0)
	for _, e := range sn.entries {
		if x := e.v.exp; x > ms && (best == 0 || x < best) {
			best = x
		}
	}
	if best == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(best), true
}

// Lookup returns one key of the snapshot as Dump would list it, if it is
// live at now.
func (sn *Snapshot) Lookup(key string, now time.Time) (KeyDump, bool) {
	if sn == nil {
		return KeyDump{}, false
	}
	i := sort.Search(len(sn.entries), func(i int) bool { return sn.entries[i].key >= key })
	if i == len(sn.entries) || sn.entries[i].key != key {
		return KeyDump{}, false
	}
	v := sn.entries[i].v
	if v.expiredBy(now.UnixMilli()) {
		return KeyDump{}, false
	}
	return dumpValue(key, v, now), true
}
