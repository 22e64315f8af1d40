package simulate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

func init() {
	commands["xadd"] = cmdXAdd
	commands["xlen"] = cmdLen(kindStream)
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
			if ks.profile.since72() {
				return errorReply(errStreamTooLow) // 7.2 compares before it increments
			}
			return errorReply(errStreamTooLarge)
		}
		id.seq = last.seq + 1
	}
	if !last.less(id) {
		return errorReply(errStreamTooLow)
	}
	if v == nil {
		v = &value{kind: kindStream, lru: lruClock(cc.Now), stream: &stream{}}
		ks.keys[a[1]] = v
	}
	v.stream.add(id, fields)
	if p.trim.set {
		v.stream.trim(p.trim)
	}
	return bulkReply(id.String())
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
		v, done, ok := ks.lookupOrReply(cc, a[1], kindStream, arrayReply([]Reply{}))
		if !ok {
			return done
		}
		out := []Reply{}
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
	v, done, ok := ks.lookupOrReply(cc, a[1], kindStream, intReply(0))
	if !ok {
		return done
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
				if v.stream.maxDeleted.less(id) {
					v.stream.maxDeleted = id
				}
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
	v, done, ok := ks.lookupOrReply(cc, a[1], kindStream, intReply(0))
	if !ok {
		return done
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
