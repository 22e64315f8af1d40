package simulate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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

func init() {
	commands["xadd"] = cmdXAdd
	commands["xlen"] = cmdXLen
	commands["xrange"] = cmdXRange(false)
	commands["xrevrange"] = cmdXRange(true)
	commands["xdel"] = cmdXDel
	commands["xtrim"] = cmdXTrim
}

// string2ull parses an unsigned number as Redis's string2ull: strict
// decimal first, else strtoull (leading space, a sign, leading zeros; a
// minus negates modulo 2^64).
func string2ull(s string) (uint64, bool) {
	if n, ok := parseInt(s); ok {
		return uint64(n), n >= 0
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if t == "" || strings.TrimLeft(t, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseStreamID parses "ms" or "ms-seq" as streamGenericParseIDOrReply does
// (without "-" and "+"); a missing seq becomes missingSeq.
func parseStreamID(s string, missingSeq uint64) (streamID, bool) {
	if len(s) > 127 {
		return streamID{}, false
	}
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, ok := string2ull(msPart)
	if !ok {
		return streamID{}, false
	}
	if !hasSeq {
		return streamID{ms, missingSeq}, true
	}
	seq, ok := string2ull(seqPart)
	if !ok {
		return streamID{}, false
	}
	return streamID{ms, seq}, true
}

func (ks *Keyspace) streamFor(cc *CallContext, key string) (*value, *Reply) {
	return ks.getTyped(cc.Now, key, kindStream)
}

// trimSpec is MAXLEN/MINID with its threshold, shared by XADD and XTRIM.
type trimSpec struct {
	maxLen int64
	minID  streamID
	byID   bool
	set    bool
	approx bool  // "~": only whole nodes go
	limit  int64 // at most this many entries go; 0: no limit
}

// streamArgs are the parsed options of XADD or XTRIM.
type streamArgs struct {
	trim      trimSpec
	noMk      bool
	id        streamID
	idGiven   bool // not "*"
	seqGiven  bool // not "ms-*"
	idPos     int  // XADD: the index of the ID
	limitUsed bool
}

// parseStreamArgs reads the options of XADD (xadd) or XTRIM from a[2:],
// in any order, as streamParseAddOrTrimArgsOrReply does.
func parseStreamArgs(a []string, xadd bool) (streamArgs, *Reply) {
	fail := func(text string) (streamArgs, *Reply) { r := errorReply(text); return streamArgs{}, &r }
	var p streamArgs
	t := &p.trim
	i := 2
loop:
	for ; i < len(a); i++ {
		moreArgs := len(a) - 1 - i
		opt := strings.ToLower(a[i])
		switch {
		case xadd && a[i] == "*":
			break loop
		case (opt == "maxlen" || opt == "minid") && moreArgs > 0:
			if t.set {
				return fail(errStreamBothTrims)
			}
			t.approx = false
			if moreArgs >= 2 && (a[i+1] == "~" || a[i+1] == "=") {
				t.approx = a[i+1] == "~"
				i++
			}
			if opt == "maxlen" {
				n, ok := parseInt(a[i+1])
				if !ok {
					return fail(errNotInteger)
				}
				if n < 0 {
					return fail(errStreamMaxLen)
				}
				t.maxLen = n
			} else {
				id, ok := parseStreamID(a[i+1], 0)
				if !ok || a[i+1] == "-" || a[i+1] == "+" {
					return fail(errStreamID)
				}
				t.minID, t.byID = id, true
			}
			t.set = true
			i++
		case opt == "limit" && moreArgs > 0:
			n, ok := parseInt(a[i+1])
			if !ok {
				return fail(errNotInteger)
			}
			if n < 0 {
				return fail(errStreamLimitNeg)
			}
			t.limit, p.limitUsed = n, true
			i++
		case xadd && opt == "nomkstream":
			p.noMk = true
		case xadd:
			p.idGiven, p.seqGiven = true, true
			ms, seq, hasSeq := strings.Cut(a[i], "-")
			if hasSeq && seq == "*" && len(a[i]) <= 127 {
				n, ok := string2ull(ms)
				if !ok {
					return fail(errStreamID)
				}
				p.id, p.seqGiven = streamID{n, 0}, false
			} else {
				id, ok := parseStreamID(a[i], 0)
				if !ok {
					return fail(errStreamID)
				}
				p.id = id
			}
			break loop
		default:
			return fail(errSyntax)
		}
	}
	p.idPos = i
	switch {
	case t.limit != 0 && !t.set:
		return fail(errStreamLimitNoHow)
	case !xadd && !t.set:
		return fail(errStreamNoStrategy)
	case p.limitUsed && !t.approx:
		return fail(errStreamLimit)
	case !p.limitUsed && t.approx:
		t.limit = streamApproxLimit
	}
	return p, nil
}

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

func cmdXAdd(ks *Keyspace, cc *CallContext, a []string) Reply {
	p, bad := parseStreamArgs(a, true)
	if bad != nil {
		return *bad
	}
	fields := a[min(p.idPos+1, len(a)):]
	if len(fields) < 2 || len(fields)%2 != 0 || p.idPos >= len(a) {
		return errorReply(fmt.Sprintf(errWrongArgs, "xadd"))
	}
	if p.idGiven && p.seqGiven && p.id == (streamID{}) {
		return errorReply(errStreamZeroID)
	}
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	if v == nil && p.noMk {
		return nilReply()
	}
	var last streamID
	if v != nil {
		last = v.stream.last
	}
	if last == (streamID{math.MaxUint64, math.MaxUint64}) {
		return errorReply(errStreamExhausted)
	}
	id := p.id
	switch {
	case !p.idGiven:
		now := uint64(cc.Now.UnixMilli())
		if now > last.ms {
			id = streamID{now, 0}
		} else if last.seq == math.MaxUint64 {
			// Redis's streamIncrID carries into the milliseconds.
			id = streamID{last.ms + 1, 0}
		} else {
			id = streamID{last.ms, last.seq + 1}
		}
	case !p.seqGiven && id.ms == last.ms:
		if last.seq == math.MaxUint64 {
			return errorReply(errStreamTooLarge)
		}
		id.seq = last.seq + 1
	}
	if !last.less(id) {
		return errorReply(errStreamTooLow)
	}
	if v == nil {
		v = &value{kind: kindStream, stream: &stream{}}
		ks.keys[a[1]] = v
	}
	v.stream.add(id, fields)
	if p.trim.set {
		v.stream.trim(p.trim)
	}
	return bulkReply(id.String())
}

func cmdXLen(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	return intReply(int64(len(v.stream.entries)))
}

// parseRangeID reads a range bound: "-", "+", an ID, or "(ID" (exclusive,
// as streamParseIntervalIDOrReply reads it). bad is the error to reply.
func parseRangeID(s string, isStart bool) (id streamID, bad string) {
	missing := uint64(0)
	if !isStart {
		missing = math.MaxUint64
	}
	if len(s) <= 1 || s[0] != '(' {
		switch s {
		case "-":
			return streamID{}, ""
		case "+":
			return streamID{math.MaxUint64, math.MaxUint64}, ""
		}
		id, ok := parseStreamID(s, missing)
		if !ok {
			return id, errStreamID
		}
		return id, ""
	}
	id, ok := parseStreamID(s[1:], missing) // strict: "(-" and "(+" are invalid
	if !ok {
		return id, errStreamID
	}
	if isStart {
		if id == (streamID{math.MaxUint64, math.MaxUint64}) {
			return id, errStreamStartID
		}
		if id.seq == math.MaxUint64 {
			return streamID{id.ms + 1, 0}, ""
		}
		id.seq++
		return id, ""
	}
	if id == (streamID{}) {
		return id, errStreamEndID
	}
	if id.seq == 0 {
		return streamID{id.ms - 1, math.MaxUint64}, ""
	}
	id.seq--
	return id, ""
}

func entryReply(e streamEntry) Reply {
	f := make([]Reply, len(e.fields))
	for i, s := range e.fields {
		f[i] = bulkReply(s)
	}
	return arrayReply([]Reply{bulkReply(e.id.String()), arrayReply(f)})
}

func cmdXRange(rev bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		startArg, endArg := a[2], a[3]
		if rev {
			startArg, endArg = endArg, startArg
		}
		start, bad := parseRangeID(startArg, true)
		if bad != "" {
			return errorReply(bad)
		}
		end, bad := parseRangeID(endArg, false)
		if bad != "" {
			return errorReply(bad)
		}
		count := int64(-1)
		for i := 4; i < len(a); i++ {
			if strings.EqualFold(a[i], "count") && i+1 < len(a) {
				n, ok := parseInt(a[i+1])
				if !ok {
					return errorReply(errNotInteger)
				}
				if n < 0 {
					n = 0
				}
				count = n
				i++
				continue
			}
			return errorReply(errSyntax)
		}
		v, wrong := ks.streamFor(cc, a[1])
		if wrong != nil {
			return *wrong
		}
		out := []Reply{}
		if v == nil {
			return arrayReply(out)
		}
		if count == 0 {
			// Redis replies a null array to COUNT 0 (or negative) on an existing stream.
			return nilReply()
		}
		es := v.stream.entries
		for j := range es {
			e := es[j]
			if rev {
				e = es[len(es)-1-j]
			}
			if e.id.less(start) || end.less(e.id) {
				continue
			}
			out = append(out, entryReply(e))
			if count > 0 && int64(len(out)) == count {
				break
			}
		}
		return arrayReply(out)
	}
}

// cmdXDel looks the key up before it reads the IDs, as Redis does: on a
// missing key any IDs give 0.
func cmdXDel(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	ids := make([]streamID, 0, len(a)-2)
	for _, s := range a[2:] {
		id, ok := parseStreamID(s, 0)
		if !ok {
			return errorReply(errStreamID)
		}
		ids = append(ids, id)
	}
	var n int64
	for _, id := range ids {
		for j, e := range v.stream.entries {
			if e.id == id {
				v.stream.remove(j)
				n++
				break
			}
		}
	}
	return intReply(n)
}

func cmdXTrim(ks *Keyspace, cc *CallContext, a []string) Reply {
	p, bad := parseStreamArgs(a, false)
	if bad != nil {
		return *bad
	}
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	return intReply(v.stream.trim(p.trim))
}

func dumpStream(s *stream) []StreamEntry {
	out := make([]StreamEntry, len(s.entries))
	for i, e := range s.entries {
		out[i] = StreamEntry{ID: e.id.String(), Fields: append([]string(nil), e.fields...)}
	}
	return out
}
