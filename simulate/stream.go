package simulate

import (
	"fmt"
	"slices"
)

// StreamEntry is one stream entry as Dump reports it.
type StreamEntry struct {
	ID     string
	Fields []string // field, value, field, value...
}

type streamID struct{ ms, seq uint64 }

func (id streamID) String() string { return fmt.Sprintf("%d-%d", id.ms, id.seq) }

func (id streamID) less(o streamID) bool {
	return id.ms < o.ms || (id.ms == o.ms && id.seq < o.seq)
}

type streamEntry struct {
	id     streamID
	fields []string
	node   *streamNode
}

// stream keeps entries in ID order; last survives deletions because Redis
// never reuses an ID. nodes mirror Redis's radix-tree nodes (see
// streamNode), which approximate trimming removes whole.
type stream struct {
	entries []streamEntry
	nodes   []*streamNode
	last    streamID
	// added counts every entry ever added (XSETID may set it), and
	// maxDeleted is the largest ID XDEL removed: Redis derives a consumer
	// group's lag from them.
	added      uint64
	maxDeleted streamID
	groups     []*streamGroup // by name, in byte order, as Redis's radix tree lists them
}

// streamNode is one node of a Redis stream's radix tree: a listpack
// holding up to stream-node-max-entries entries (live or deleted) in at
// most stream-node-max-bytes bytes, Redis's defaults. bytes follows the
// listpack's size as Redis encodes it, so entries land in the same nodes.
type streamNode struct {
	live, deleted int
	bytes         int
	master        streamID // the first entry's ID
	fields        []string // the master entry's field names
	last          streamID // the ID of the last entry added, even if deleted since
}

const (
	streamNodeMaxEntries = 100  // stream-node-max-entries
	streamNodeMaxBytes   = 4096 // stream-node-max-bytes
	streamApproxLimit    = 100 * streamNodeMaxEntries
)

// trim is Redis's streamTrim: it removes whole nodes from the head while
// what stays still satisfies the threshold, then (unless approx) the
// entries of the next node that must go.
func (s *stream) trim(t trimSpec) int64 {
	var deleted int64
	for len(s.nodes) > 0 {
		if !t.byID && int64(len(s.entries)) <= t.maxLen {
			break
		}
		n := s.nodes[0]
		if t.limit != 0 && deleted+int64(n.live) > t.limit {
			break
		}
		var remove bool
		if t.byID {
			remove = n.last.less(t.minID)
		} else {
			remove = int64(len(s.entries)-n.live) >= t.maxLen
		}
		if remove {
			s.dropHead(n.live)
			s.nodes = s.nodes[1:]
			deleted += int64(n.live)
			continue
		}
		if t.approx {
			break
		}
		for len(s.entries) > 0 && s.entries[0].node == n {
			if t.byID && !s.entries[0].id.less(t.minID) || !t.byID && int64(len(s.entries)) <= t.maxLen {
				break
			}
			s.dropHead(1)
			n.live--
			n.deleted++
			deleted++
		}
		break
	}
	return deleted
}

// dropHead removes the first k entries. Reslicing is enough: append
// reallocates with only the live entries once capacity runs out, so a
// capped stream stays bounded.
func (s *stream) dropHead(k int) {
	clear(s.entries[:k])
	s.entries = s.entries[k:]
}

// add appends an entry, to the tail node if it has room as
// streamAppendItem judges it, else to a new node.
func (s *stream) add(id streamID, fields []string) {
	var tail *streamNode
	if len(s.nodes) > 0 {
		tail = s.nodes[len(s.nodes)-1]
		size := 0
		for _, f := range fields {
			size += len(f)
		}
		if tail.bytes+size >= streamNodeMaxBytes || tail.live+tail.deleted >= streamNodeMaxEntries {
			tail = nil
		}
	}
	names := make([]string, 0, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		names = append(names, fields[i])
	}
	same := true
	if tail == nil {
		tail = &streamNode{master: id, fields: names, bytes: 6 + 1} // header and end byte
		tail.bytes += lpIntSize(1) + lpIntSize(0) + lpIntSize(int64(len(names))) + lpIntSize(0)
		for _, f := range names {
			tail.bytes += lpStrSize(f)
		}
		s.nodes = append(s.nodes, tail)
	} else {
		same = slices.Equal(names, tail.fields)
	}
	numFields := int64(len(names))
	lpCount := numFields + 3
	b := lpIntSize(2) + lpIntSize(int64(id.ms-tail.master.ms)) + lpIntSize(int64(id.seq-tail.master.seq))
	if !same {
		lpCount += numFields + 1
		b += lpIntSize(numFields)
	}
	for i, f := range fields {
		if i%2 == 1 || !same {
			b += lpStrSize(f)
		}
	}
	tail.bytes += b + lpIntSize(lpCount)
	tail.live++
	tail.last = id
	s.entries = append(s.entries, streamEntry{id: id, fields: append([]string(nil), fields...), node: tail})
	s.last = id
	s.added++
}

// remove deletes entry j, as XDEL marks it deleted in its node; a node
// left without live entries goes.
func (s *stream) remove(j int) {
	n := s.entries[j].node
	s.entries = append(s.entries[:j:j], s.entries[j+1:]...)
	n.live--
	n.deleted++
	if n.live == 0 {
		s.nodes = slices.DeleteFunc(s.nodes, func(x *streamNode) bool { return x == n })
	}
}

// lpIntSize is the size of an integer element in a listpack, backlen included.
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1 + 1
	case v >= -4096 && v <= 4095:
		return 2 + 1
	case v >= -32768 && v <= 32767:
		return 3 + 1
	case v >= -8388608 && v <= 8388607:
		return 4 + 1
	case v >= -2147483648 && v <= 2147483647:
		return 5 + 1
	}
	return 9 + 1
}

// lpStrSize is the size of a string element in a listpack: a string that
// reads as an integer is stored as one.
func lpStrSize(s string) int {
	if n, ok := parseInt(s); ok {
		return lpIntSize(n)
	}
	enc := 5 + len(s)
	if len(s) < 64 {
		enc = 1 + len(s)
	} else if len(s) < 4096 {
		enc = 2 + len(s)
	}
	switch {
	case enc <= 127:
		return enc + 1
	case enc < 16383:
		return enc + 2
	case enc < 2097151:
		return enc + 3
	case enc < 268435455:
		return enc + 4
	}
	return enc + 5
}
