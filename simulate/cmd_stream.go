package simulate

import (
	"fmt"
	"math"
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
}

// stream keeps entries in ID order; last survives deletions because Redis
// never reuses an ID.
type stream struct {
	entries []streamEntry
	last    streamID
}

const (
	errStreamID        = "ERR Invalid stream ID specified as stream command argument"
	errStreamTooLow    = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errStreamZeroID    = "ERR The ID specified in XADD must be greater than 0-0"
	errStreamExhausted = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errStreamTooLarge  = "ERR Elements are too large to be stored"
	errStreamLimit     = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	errStreamApprox    = "ERR simulate: approximate (~) stream trimming is not implemented"
	errStreamMaxLen    = "ERR The MAXLEN argument must be >= 0."
)

func init() {
	commands["xadd"] = cmdXAdd
	commands["xlen"] = cmdXLen
	commands["xrange"] = cmdXRange(false)
	commands["xrevrange"] = cmdXRange(true)
	commands["xdel"] = cmdXDel
	commands["xtrim"] = cmdXTrim
}

// parseStreamID parses "ms" or "ms-seq"; a missing seq becomes missingSeq.
func parseStreamID(s string, missingSeq uint64) (streamID, bool) {
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return streamID{}, false
	}
	if !hasSeq {
		return streamID{ms, missingSeq}, true
	}
	seq, err := strconv.ParseUint(seqPart, 10, 64)
	if err != nil {
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
}

// parseTrim reads a trim clause at a[i]; it returns the index after it.
func parseTrim(a []string, i int) (trimSpec, int, *Reply) {
	fail := func(text string) (trimSpec, int, *Reply) { r := errorReply(text); return trimSpec{}, 0, &r }
	t := trimSpec{set: true, byID: strings.EqualFold(a[i], "minid")}
	i++
	approx := false
	if i < len(a) && (a[i] == "~" || a[i] == "=") {
		approx = a[i] == "~"
		i++
	}
	if i >= len(a) {
		return fail(errSyntax)
	}
	if t.byID {
		id, ok := parseStreamID(a[i], 0)
		if !ok {
			return fail(errStreamID)
		}
		t.minID = id
	} else {
		n, ok := parseInt(a[i])
		if !ok {
			return fail(errNotInteger)
		}
		if n < 0 {
			return fail(errStreamMaxLen)
		}
		t.maxLen = n
	}
	i++
	if i+1 < len(a) && strings.EqualFold(a[i], "limit") {
		if !approx {
			return fail(errStreamLimit)
		}
		i += 2
	}
	if approx {
		return fail(errStreamApprox)
	}
	return t, i, nil
}

func (s *stream) trim(t trimSpec) int64 {
	drop := 0
	if t.byID {
		for drop < len(s.entries) && s.entries[drop].id.less(t.minID) {
			drop++
		}
	} else if int64(len(s.entries)) > t.maxLen {
		drop = len(s.entries) - int(t.maxLen)
	}
	// Reslicing is enough: append reallocates with only the live entries
	// once capacity runs out, so a capped stream stays bounded.
	clear(s.entries[:drop])
	s.entries = s.entries[drop:]
	return int64(drop)
}

func cmdXAdd(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	noMk := false
	var trim trimSpec
	i := 2
opts:
	for ; i < len(a); i++ {
		switch strings.ToLower(a[i]) {
		case "nomkstream":
			noMk = true
			continue
		case "maxlen", "minid":
			t, next, bad := parseTrim(a, i)
			if bad != nil {
				return *bad
			}
			trim, i = t, next-1
			continue
		}
		break opts
	}
	if i >= len(a) {
		return errorReply(errSyntax)
	}
	idArg, fields := a[i], a[i+1:]
	if len(fields) == 0 || len(fields)%2 != 0 {
		return errorReply("ERR wrong number of arguments for 'xadd' command")
	}
	var last streamID
	if v != nil {
		last = v.stream.last
	}
	if last == (streamID{math.MaxUint64, math.MaxUint64}) {
		return errorReply(errStreamExhausted)
	}
	var id streamID
	switch {
	case idArg == "*":
		now := uint64(cc.Now.UnixMilli())
		if now > last.ms {
			id = streamID{now, 0}
		} else if last.seq == math.MaxUint64 {
			// Redis's streamIncrID carries into the milliseconds.
			id = streamID{last.ms + 1, 0}
		} else {
			id = streamID{last.ms, last.seq + 1}
		}
	case strings.HasSuffix(idArg, "-*"):
		ms, err := strconv.ParseUint(strings.TrimSuffix(idArg, "-*"), 10, 64)
		if err != nil {
			return errorReply(errStreamID)
		}
		id = streamID{ms, 0}
		if ms == last.ms && v != nil {
			if last.seq == math.MaxUint64 {
				return errorReply(errStreamTooLarge)
			}
			id.seq = last.seq + 1
		} else if ms == 0 {
			id.seq = 1
		}
	default:
		var ok bool
		if id, ok = parseStreamID(idArg, 0); !ok {
			return errorReply(errStreamID)
		}
	}
	if id == (streamID{}) {
		return errorReply(errStreamZeroID)
	}
	if !last.less(id) {
		return errorReply(errStreamTooLow)
	}
	if v == nil {
		if noMk {
			return nilReply()
		}
		v = &value{kind: kindStream, stream: &stream{}}
		ks.keys[a[1]] = v
	}
	v.stream.entries = append(v.stream.entries, streamEntry{id: id, fields: append([]string(nil), fields...)})
	v.stream.last = id
	if trim.set {
		v.stream.trim(trim)
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

// parseRangeID reads a range bound: "-", "+", an ID, or "(ID" (exclusive).
func parseRangeID(s string, isStart bool) (streamID, bool) {
	switch s {
	case "-":
		return streamID{}, true
	case "+":
		return streamID{math.MaxUint64, math.MaxUint64}, true
	}
	missing := uint64(0)
	if !isStart {
		missing = math.MaxUint64
	}
	exclusive := strings.HasPrefix(s, "(")
	id, ok := parseStreamID(strings.TrimPrefix(s, "("), missing)
	if !ok {
		return id, false
	}
	if exclusive {
		if isStart {
			if id == (streamID{math.MaxUint64, math.MaxUint64}) {
				return id, false
			}
			if id.seq == math.MaxUint64 {
				id = streamID{id.ms + 1, 0}
			} else {
				id.seq++
			}
		} else {
			if id == (streamID{}) {
				return id, false
			}
			if id.seq == 0 {
				id = streamID{id.ms - 1, math.MaxUint64}
			} else {
				id.seq--
			}
		}
	}
	return id, true
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
		start, ok1 := parseRangeID(startArg, true)
		end, ok2 := parseRangeID(endArg, false)
		if !ok1 || !ok2 {
			return errorReply(errStreamID)
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

func cmdXDel(ks *Keyspace, cc *CallContext, a []string) Reply {
	ids := make([]streamID, 0, len(a)-2)
	for _, s := range a[2:] {
		id, ok := parseStreamID(s, 0)
		if !ok {
			return errorReply(errStreamID)
		}
		ids = append(ids, id)
	}
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	if v == nil {
		return intReply(0)
	}
	var n int64
	for _, id := range ids {
		for j, e := range v.stream.entries {
			if e.id == id {
				v.stream.entries = append(v.stream.entries[:j:j], v.stream.entries[j+1:]...)
				n++
				break
			}
		}
	}
	return intReply(n)
}

func cmdXTrim(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	if !strings.EqualFold(a[2], "maxlen") && !strings.EqualFold(a[2], "minid") {
		return errorReply(errSyntax)
	}
	t, next, bad := parseTrim(a, 2)
	if bad != nil {
		return *bad
	}
	if next != len(a) {
		return errorReply(errSyntax)
	}
	if v == nil {
		return intReply(0)
	}
	return intReply(v.stream.trim(t))
}

func dumpStream(s *stream) []StreamEntry {
	out := make([]StreamEntry, len(s.entries))
	for i, e := range s.entries {
		out[i] = StreamEntry{ID: e.id.String(), Fields: append([]string(nil), e.fields...)}
	}
	return out
}
