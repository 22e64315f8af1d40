package simulate

import (
	"fmt"
	"math"
	"sort"
)

// entriesReadUnknown is Redis's SCG_INVALID_ENTRIES_READ: a group whose
// read counter cannot be known (its lag is then reported as null).
const entriesReadUnknown = -1

// streamGroup is a consumer group as Redis 7.0 keeps it: the last ID
// delivered, the logical read counter, the pending entries list (PEL) in ID
// order and the consumers in name order.
type streamGroup struct {
	name        string
	lastID      streamID
	entriesRead int64
	pel         []*pendingEntry
	consumers   []*streamConsumer
}

// pendingEntry is one delivered, not yet acknowledged entry: its owner,
// when it was last delivered (Unix ms) and how often.
type pendingEntry struct {
	id            streamID
	consumer      *streamConsumer
	deliveryTime  int64
	deliveryCount uint64
}

// streamConsumer is a consumer of a group; seenTime (Unix ms) is when a
// command last named it, which XINFO reports as idle time and seen-time.
type streamConsumer struct {
	name     string
	seenTime int64
	pending  int // entries of the group's PEL it owns
	// activeTime (Unix ms) is when it last got entries (read or claimed),
	// 0 before it did: 7.2's XINFO reports it as active-time and inactive.
	activeTime int64
}

// group finds a consumer group by name.
func (s *stream) group(name string) *streamGroup {
	i, ok := s.groupIndex(name)
	if !ok {
		return nil
	}
	return s.groups[i]
}

func (s *stream) groupIndex(name string) (int, bool) {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].name >= name })
	return i, i < len(s.groups) && s.groups[i].name == name
}

// createGroup adds a group, or returns false when the name is taken.
func (s *stream) createGroup(name string, last streamID, entriesRead int64) bool {
	i, ok := s.groupIndex(name)
	if ok {
		return false
	}
	g := &streamGroup{name: name, lastID: last, entriesRead: entriesRead}
	s.groups = append(s.groups[:i], append([]*streamGroup{g}, s.groups[i:]...)...)
	return true
}

// destroyGroup removes a group, reporting whether it existed.
func (s *stream) destroyGroup(name string) bool {
	i, ok := s.groupIndex(name)
	if ok {
		s.groups = append(s.groups[:i], s.groups[i+1:]...)
	}
	return ok
}

func (g *streamGroup) consumerIndex(name string) (int, bool) {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].name >= name })
	return i, i < len(g.consumers) && g.consumers[i].name == name
}

// consumer finds a consumer; refresh updates its seen time as Redis's
// streamLookupConsumer does unless told SLC_NO_REFRESH.
func (g *streamGroup) consumer(name string, now int64, refresh bool) *streamConsumer {
	i, ok := g.consumerIndex(name)
	if !ok {
		return nil
	}
	if refresh {
		g.consumers[i].seenTime = now
	}
	return g.consumers[i]
}

// createConsumer adds a consumer, or returns nil when it exists.
func (g *streamGroup) createConsumer(name string, now int64) *streamConsumer {
	i, ok := g.consumerIndex(name)
	if ok {
		return nil
	}
	c := &streamConsumer{name: name, seenTime: now}
	g.consumers = append(g.consumers[:i], append([]*streamConsumer{c}, g.consumers[i:]...)...)
	return c
}

// lookupOrCreateConsumer is what XREADGROUP, XCLAIM and XAUTOCLAIM do with
// the consumer they name.
func (g *streamGroup) lookupOrCreateConsumer(name string, now int64) *streamConsumer {
	if c := g.consumer(name, now, true); c != nil {
		return c
	}
	return g.createConsumer(name, now)
}

// deleteConsumer removes a consumer and its pending entries, returning
// how many it had.
func (g *streamGroup) deleteConsumer(c *streamConsumer) int {
	n := c.pending
	j := 0
	for _, p := range g.pel {
		if p.consumer != c {
			g.pel[j] = p
			j++
		}
	}
	clear(g.pel[j:])
	g.pel = g.pel[:j]
	if i, ok := g.consumerIndex(c.name); ok {
		g.consumers = append(g.consumers[:i], g.consumers[i+1:]...)
	}
	return n
}

// pelIndex is the position of the first pending entry with ID >= id.
func (g *streamGroup) pelIndex(id streamID) int {
	return sort.Search(len(g.pel), func(i int) bool { return !g.pel[i].id.less(id) })
}

// pending finds the pending entry of id.
func (g *streamGroup) pending(id streamID) *pendingEntry {
	i := g.pelIndex(id)
	if i < len(g.pel) && g.pel[i].id == id {
		return g.pel[i]
	}
	return nil
}

// addPending inserts a new pending entry, keeping ID order.
func (g *streamGroup) addPending(p *pendingEntry) {
	i := g.pelIndex(p.id)
	g.pel = append(g.pel, nil)
	copy(g.pel[i+1:], g.pel[i:])
	g.pel[i] = p
	if p.consumer != nil {
		p.consumer.pending++
	}
}

// removePending drops the pending entry of id, reporting whether there was one.
func (g *streamGroup) removePending(id streamID) bool {
	i := g.pelIndex(id)
	if i == len(g.pel) || g.pel[i].id != id {
		return false
	}
	if c := g.pel[i].consumer; c != nil {
		c.pending--
	}
	if i == 0 {
		// Acknowledging the oldest entry, as a queue's workers mostly do,
		// costs no copy.
		g.pel[0] = nil
		g.pel = g.pel[1:]
		return true
	}
	g.pel = append(g.pel[:i], g.pel[i+1:]...)
	return true
}

// assign gives a pending entry to another consumer.
func (p *pendingEntry) assign(c *streamConsumer) {
	if p.consumer == c {
		return
	}
	if p.consumer != nil {
		p.consumer.pending--
	}
	p.consumer = c
	c.pending++
}

// entryIndex finds the live entry with this ID.
func (s *stream) entryIndex(id streamID) (int, bool) {
	i := sort.Search(len(s.entries), func(i int) bool { return !s.entries[i].id.less(id) })
	return i, i < len(s.entries) && s.entries[i].id == id
}

// firstID is Redis's first_id: the first live entry, 0-0 when empty.
func (s *stream) firstID() streamID {
	if len(s.entries) == 0 {
		return streamID{}
	}
	return s.entries[0].id
}

// hasTombstones is streamRangeHasTombstones from start to the end.
func (s *stream) hasTombstonesFrom(start streamID) bool {
	if len(s.entries) == 0 || s.maxDeleted == (streamID{}) {
		return false
	}
	if s.maxDeleted.less(s.firstID()) {
		return false
	}
	return !s.maxDeleted.less(start)
}

// estimateRead is streamEstimateDistanceFromFirstEverEntry: the logical
// read counter of id, or entriesReadUnknown.
func (s *stream) estimateRead(id streamID) int64 {
	if s.added == 0 {
		return 0
	}
	if len(s.entries) == 0 && !s.last.less(id) {
		return int64(s.added)
	}
	switch {
	case id == s.last:
		return int64(s.added)
	case s.last.less(id):
		return entriesReadUnknown
	}
	first := s.firstID()
	if s.maxDeleted == (streamID{}) || s.maxDeleted.less(first) {
		if id.less(first) {
			return int64(s.added) - int64(len(s.entries))
		}
		if id == first {
			return int64(s.added) - int64(len(s.entries)) + 1
		}
	}
	return entriesReadUnknown
}

// lag is streamReplyWithCGLag: the entries not yet delivered to the
// group, or a null reply when that cannot be known.
func (s *stream) lag(g *streamGroup, p Profile) Reply {
	if s.added == 0 {
		return intReply(0)
	}
	// 8.0 also distrusts the counter of a group whose last ID is before
	// the stream's first entry.
	before := p == Redis80 && len(s.entries) > 0 && g.lastID.less(s.entries[0].id)
	if g.entriesRead != entriesReadUnknown && !s.hasTombstonesFrom(g.lastID) && !before {
		return intReply(int64(s.added) - g.entriesRead)
	}
	if read := s.estimateRead(g.lastID); read != entriesReadUnknown {
		return intReply(int64(s.added) - read)
	}
	return nilReply()
}

// delivered is what streamReplyWithRange does to a group for each entry
// it serves past the group's last ID.
func (s *stream) delivered(g *streamGroup, id streamID) {
	if !g.lastID.less(id) {
		return
	}
	if g.entriesRead != entriesReadUnknown && !s.hasTombstonesFrom(id) {
		g.entriesRead++
	} else if s.added != 0 {
		g.entriesRead = s.estimateRead(id)
	}
	g.lastID = id
}

// radixNodes is the node count of the radix tree Redis keys a stream's
// listpacks by (their master IDs, 16 bytes big-endian), as XINFO STREAM's
// radix-tree-nodes reports it: Redis's rax compresses every chain of
// single-child nodes into one node, so the count follows from the keys.
func (s *stream) radixNodes() int64 {
	keys := make([][16]byte, len(s.nodes))
	for i, n := range s.nodes {
		keys[i] = n.master.key()
	}
	return raxCount(keys, 0)
}

// key is the ID as Redis keys radix trees by it: big-endian, so that
// byte order is ID order.
func (id streamID) key() [16]byte {
	var k [16]byte
	for b := 0; b < 8; b++ {
		k[b] = byte(id.ms >> (56 - 8*b))
		k[8+b] = byte(id.seq >> (56 - 8*b))
	}
	return k
}

// raxCount counts the nodes of the subtree whose root stands after depth
// bytes of the keys it holds (sorted, as IDs in order are): one compressed node for a prefix all
// keys share, else one node branching on the next byte; a key's end is a
// node of its own.
func raxCount(keys [][16]byte, depth int) int64 {
	if len(keys) == 0 || depth == 16 {
		return 1
	}
	p := depth
	for p < 16 && keys[0][p] == keys[len(keys)-1][p] {
		p++
	}
	if p > depth {
		return 1 + raxCount(keys, p)
	}
	n := int64(1)
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j][depth] == keys[i][depth] {
			j++
		}
		n += raxCount(keys[i:j], depth+1)
		i = j
	}
	return n
}

// cloneGroups copies the consumer groups of a stream.
func (s *stream) cloneGroups() []*streamGroup {
	if s.groups == nil {
		return nil
	}
	out := make([]*streamGroup, len(s.groups))
	for i, g := range s.groups {
		ng := &streamGroup{name: g.name, lastID: g.lastID, entriesRead: g.entriesRead}
		moved := make(map[*streamConsumer]*streamConsumer, len(g.consumers))
		for _, c := range g.consumers {
			nc := *c
			moved[c] = &nc
			ng.consumers = append(ng.consumers, &nc)
		}
		for _, p := range g.pel {
			np := *p
			np.consumer = moved[p.consumer]
			ng.pel = append(ng.pel, &np)
		}
		out[i] = ng
	}
	return out
}

// incrID is streamIncrID; ok is false past the last possible ID.
func (id streamID) incr() (streamID, bool) {
	switch {
	case id.seq != math.MaxUint64:
		return streamID{id.ms, id.seq + 1}, true
	case id.ms != math.MaxUint64:
		return streamID{id.ms + 1, 0}, true
	}
	return streamID{}, false
}

// appendGroups appends the stream's counters and consumer groups to a
// snapshot's canonical form: two streams with the same entries but other
// group state are different states.
func (s *stream) appendGroups(b []byte) []byte {
	b = fmt.Appendf(b, "|%d|%s", s.added, s.maxDeleted)
	for _, g := range s.groups {
		b = fmt.Appendf(b, "|g%d:%s:%s:%d", len(g.name), g.name, g.lastID, g.entriesRead)
		for _, c := range g.consumers {
			b = fmt.Appendf(b, "|c%d:%s:%d", len(c.name), c.name, c.seenTime)
		}
		for _, p := range g.pel {
			b = fmt.Appendf(b, "|p%s:%d:%s:%d:%d", p.id, len(p.consumer.name), p.consumer.name, p.deliveryTime, p.deliveryCount)
		}
	}
	return b
}
