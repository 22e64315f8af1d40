package simulate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redlua/redlua/internal/cmdtable"
)

// Consumer groups and the commands that read streams (t_stream.c).

func init() {
	commands["xread"] = cmdXRead(false)
	commands["xreadgroup"] = cmdXRead(true)
	commands["xack"] = cmdXAck
	commands["xpending"] = cmdXPending
	commands["xclaim"] = cmdXClaim
	commands["xautoclaim"] = cmdXAutoClaim
	commands["xsetid"] = cmdXSetID
	// Scripts check subcommands by their full name; Exec dispatches on the container.
	for _, c := range []string{"xgroup", "xgroup|create", "xgroup|setid", "xgroup|destroy", "xgroup|createconsumer", "xgroup|delconsumer", "xgroup|help"} {
		commands[c] = cmdXGroup
	}
	for _, c := range []string{"xinfo", "xinfo|stream", "xinfo|groups", "xinfo|consumers", "xinfo|help"} {
		commands[c] = cmdXInfo
	}
}

// Error texts of consumer groups (t_stream.c).
const (
	errStreamNoGroupKey    = "NOGROUP No such key '%s' or consumer group '%s'"
	errStreamNoGroupRead   = "NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option"
	errStreamNoGroup       = "NOGROUP No such consumer group '%s' for key name '%s'"
	errStreamBusyGroup     = "BUSYGROUP Consumer Group name already exists"
	errStreamGroupNeedsKey = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	errStreamEntriesRead   = "ERR value for ENTRIESREAD must be positive or -1"
	errStreamBlockInScript = "ERR %s command is not allowed with BLOCK option from scripts"
	errStreamUnbalanced    = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
	errStreamGroupOption   = "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
	errStreamNoAckOption   = "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
	errStreamMissingGroup  = "ERR Missing GROUP option for XREADGROUP"
	errStreamDollarGroup   = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
	errStreamGreaterID     = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
	errTimeoutNotInt       = "ERR timeout is not an integer or out of range"
	errStreamMinIdle       = "ERR Invalid min-idle-time argument for %s"
	errStreamClaimOption   = "ERR Invalid %s option argument for XCLAIM"
	errStreamClaimUnknown  = "ERR Unrecognized XCLAIM option '%s'"
	errStreamAutoCount     = "ERR COUNT must be > 0"
	errStreamAutoMemory    = "ERR Insufficient memory, failed allocating transient memory, COUNT too high."
	errSetIDAdded          = "ERR entries_added must be positive"
	errSetIDMaxDeleted     = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
	errSetIDTop            = "ERR The ID specified in XSETID is smaller than the target stream top item"
	errSetIDLength         = "ERR The entries_added specified in XSETID is smaller than the target stream length"
)

var maxStreamID = streamID{math.MaxUint64, math.MaxUint64}

// clockMs is the time consumer groups record (delivery, seen time): like
// Redis's mstime() it reads the clock, not the instant a script froze.
func clockMs(cc *CallContext) int64 {
	if cc.Clock != nil {
		return cc.Clock.Now().UnixMilli()
	}
	return cc.Now.UnixMilli()
}

// subcommand checks a container's subcommand as Redis's command lookup
// does for a direct call: it must exist and get its arity.
func subcommand(a []string) (string, *Reply) {
	container := strings.ToLower(a[0])
	sub := strings.ToLower(a[1])
	meta, ok := cmdtable.LookupSub(container, sub)
	if !ok {
		r := errorReply(fmt.Sprintf(errUnknownSubcommand, a[1], strings.ToUpper(a[0])))
		return "", &r
	}
	if !meta.ArityOK(len(a)) {
		r := errorReply(fmt.Sprintf(errWrongArgs, container+"|"+sub))
		return "", &r
	}
	return sub, nil
}

// subcommandSyntax is addReplySubcommandSyntaxError.
func subcommandSyntax(a []string) Reply {
	return errorReply(fmt.Sprintf(errSubcommandSyntax, a[1], strings.ToUpper(a[0])))
}

// helpReply is addReplyHelp: a header, the lines, and HELP's own.
func (ks *Keyspace) helpReply(a []string, lines ...string) Reply {
	if own, ok := profileHelp[ks.profile][strings.ToLower(a[0])]; ok {
		out := make([]Reply, len(own))
		for i, l := range own {
			out[i] = statusReply(l)
		}
		return arrayReply(out)
	}
	out := []Reply{statusReply(strings.ToUpper(a[0]) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")}
	for _, l := range lines {
		out = append(out, statusReply(l))
	}
	return arrayReply(append(out, statusReply("HELP"), statusReply(ks.profile.helpLine())))
}

// parseStrictID is streamParseStrictIDOrReply without seq_given.
func parseStrictID(s string) (streamID, bool) {
	if s == "-" || s == "+" {
		return streamID{}, false
	}
	return parseStreamID(s, 0)
}

// parseLooseID is streamParseIDOrReply: "-" and "+" are the extremes.
func parseLooseID(s string, missingSeq uint64) (streamID, bool) {
	switch s {
	case "-":
		return streamID{}, true
	case "+":
		return maxStreamID, true
	}
	return parseStreamID(s, missingSeq)
}

func cmdXGroup(ks *Keyspace, cc *CallContext, a []string) Reply {
	sub, bad := subcommand(a)
	if bad != nil {
		return *bad
	}
	if sub == "help" {
		return ks.helpReply(a,
			"CREATE <key> <groupname> <id|$> [option]",
			"    Create a new consumer group. Options are:",
			"    * MKSTREAM",
			"      Create the empty stream if it does not exist.",
			"    * ENTRIESREAD entries_read",
			"      Set the group's entries_read counter (internal use).",
			"CREATECONSUMER <key> <groupname> <consumer>",
			"    Create a new consumer in the specified group.",
			"DELCONSUMER <key> <groupname> <consumer>",
			"    Remove the specified consumer.",
			"DESTROY <key> <groupname>",
			"    Remove the specified group.",
			"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
			"    Set the current group ID and entries_read counter.")
	}
	mkstream := false
	entriesRead := int64(entriesReadUnknown)
	for i := 5; i < len(a); {
		switch {
		case sub == "create" && strings.EqualFold(a[i], "mkstream"):
			mkstream = true
			i++
		case (sub == "create" || sub == "setid") && strings.EqualFold(a[i], "entriesread") && i+1 < len(a):
			n, ok := parseInt(a[i+1])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n < 0 && n != entriesReadUnknown {
				return errorReply(errStreamEntriesRead)
			}
			entriesRead = n
			i += 2
		default:
			return subcommandSyntax(a)
		}
	}
	v, wrong := ks.streamFor(cc, a[2])
	if wrong != nil {
		return *wrong
	}
	key, name := a[2], a[3]
	var g *streamGroup
	if !mkstream {
		if v == nil {
			return errorReply(errStreamGroupNeedsKey)
		}
		if g = v.stream.group(name); g == nil && (sub == "setid" || sub == "createconsumer" || sub == "delconsumer") {
			return errorReply(fmt.Sprintf(errStreamNoGroup, name, key))
		}
	}
	now := clockMs(cc)
	switch {
	case sub == "create" && len(a) <= 8:
		var id streamID
		if a[4] == "$" {
			if v != nil {
				id = v.stream.last
			}
		} else {
			var ok bool
			if id, ok = parseStrictID(a[4]); !ok {
				return errorReply(errStreamID)
			}
		}
		if v == nil {
			v = &value{kind: kindStream, lru: lruClock(cc.Now), stream: &stream{}}
			ks.keys[key] = v
		}
		if !v.stream.createGroup(name, id, entriesRead) {
			return errorReply(errStreamBusyGroup)
		}
		return okReply()
	case sub == "setid" && (len(a) == 5 || len(a) == 7):
		id := v.stream.last
		if a[4] != "$" {
			var ok bool
			if id, ok = parseLooseID(a[4], 0); !ok {
				return errorReply(errStreamID)
			}
		}
		g.lastID, g.entriesRead = id, entriesRead
		return okReply()
	case sub == "destroy":
		return intReply(boolInt(g != nil && v.stream.destroyGroup(name)))
	case sub == "createconsumer":
		return intReply(boolInt(g.createConsumer(a[4], now) != nil))
	case sub == "delconsumer":
		c := g.consumer(a[4], now, false)
		if c == nil {
			return intReply(0)
		}
		return intReply(int64(g.deleteConsumer(c)))
	}
	return subcommandSyntax(a)
}

// cmdXRead is XREAD and XREADGROUP. Neither blocks: from a script BLOCK is
// an error, as in Redis; from Do a read that finds nothing answers at once
// with the null a timeout gives, as a client that may not block gets.
func cmdXRead(group bool) handler {
	return func(ks *Keyspace, cc *CallContext, a []string) Reply {
		var count int64
		streamsArg, n := 0, 0
		noack, hasGroup := false, false
		var groupName, consumerName string
	parse:
		for i := 1; i < len(a); i++ {
			more := len(a) - i - 1
			switch o := a[i]; {
			case strings.EqualFold(o, "block") && more > 0:
				if cc.InScript && !ks.profile.since74Valkey8() {
					return errorReply(fmt.Sprintf(errStreamBlockInScript, a[0]))
				}
				i++
				t, ok := parseInt(a[i])
				if !ok {
					return errorReply(errTimeoutNotInt)
				}
				if t < 0 {
					return errorReply(errTimeoutNegative)
				}
			case strings.EqualFold(o, "count") && more > 0:
				i++
				c, ok := parseInt(a[i])
				if !ok {
					return errorReply(errNotInteger)
				}
				count = max(c, 0)
			case strings.EqualFold(o, "streams") && more > 0:
				streamsArg = i + 1
				n = len(a) - streamsArg
				if n%2 != 0 {
					return errorReply(errStreamUnbalanced)
				}
				n /= 2
				break parse
			case strings.EqualFold(o, "group") && more >= 2:
				if !group {
					return errorReply(errStreamGroupOption)
				}
				groupName, consumerName, hasGroup = a[i+1], a[i+2], true
				i += 2
			case strings.EqualFold(o, "noack"):
				if !group {
					return errorReply(errStreamNoAckOption)
				}
				noack = true
			default:
				return errorReply(errSyntax)
			}
		}
		if streamsArg == 0 {
			return errorReply(errSyntax)
		}
		if group && !hasGroup {
			return errorReply(errStreamMissingGroup)
		}
		ids := make([]streamID, n)
		groups := make([]*streamGroup, n)
		for i := streamsArg + n; i < len(a); i++ {
			j := i - streamsArg - n
			key := a[i-n]
			v, wrong := ks.streamFor(cc, key)
			if wrong != nil {
				return *wrong
			}
			if hasGroup {
				if v == nil || v.stream.group(groupName) == nil {
					return errorReply(fmt.Sprintf(errStreamNoGroupRead, key, groupName))
				}
				groups[j] = v.stream.group(groupName)
			}
			switch a[i] {
			case "$":
				if group {
					return errorReply(errStreamDollarGroup)
				}
				if v != nil {
					ids[j] = v.stream.last
				}
				continue
			case ">":
				if !group {
					return errorReply(errStreamGreaterID)
				}
				ids[j] = maxStreamID
				continue
			case "+":
				if !group && ks.profile.since74Valkey8() {
					// XREAD's "+" reads the last entry: from just before it.
					if v != nil {
						ids[j] = v.stream.last.prev()
					}
					continue
				}
			}
			id, ok := parseStrictID(a[i])
			if !ok {
				return errorReply(errStreamID)
			}
			ids[j] = id
		}
		now := clockMs(cc)
		var out []Reply
		for i := 0; i < n; i++ {
			key := a[streamsArg+i]
			v := ks.lookup(cc.Now, key)
			if v == nil {
				continue
			}
			s := v.stream
			gt, serve, history := ids[i], false, false
			switch {
			case hasGroup && gt != maxStreamID:
				serve, history = true, true
			case hasGroup && len(s.entries) > 0:
				if g := groups[i]; g.lastID.less(s.entries[len(s.entries)-1].id) {
					serve, gt = true, g.lastID
				}
			case !hasGroup && len(s.entries) > 0:
				serve = gt.less(s.entries[len(s.entries)-1].id)
			}
			if !serve {
				continue
			}
			start, _ := gt.incr()
			var entries []Reply
			switch {
			case history:
				c := groups[i].lookupOrCreateConsumer(consumerName, now)
				entries = s.readHistory(groups[i], c, start, count, now)
			case hasGroup:
				c := groups[i].lookupOrCreateConsumer(consumerName, now)
				entries = s.readNew(groups[i], c, start, count, noack, now)
			default:
				entries = s.readNew(nil, nil, start, count, false, now)
			}
			if cc.RESP == 3 {
				out = append(out, bulkReply(key), arrayReply(entries))
			} else {
				out = append(out, arrayReply([]Reply{bulkReply(key), arrayReply(entries)}))
			}
		}
		if len(out) == 0 {
			return nilReply()
		}
		if cc.RESP == 3 {
			return Reply{Kind: KindMap, Elems: out}
		}
		return arrayReply(out)
	}
}

// readNew serves the entries from start on (at most count, 0: all), as
// streamReplyWithRange does: with a group it advances the group and, unless
// noack, puts each entry in the consumer's pending list.
func (s *stream) readNew(g *streamGroup, c *streamConsumer, start streamID, count int64, noack bool, now int64) []Reply {
	out := []Reply{}
	i, _ := s.entryIndex(start)
	for ; i < len(s.entries); i++ {
		e := s.entries[i]
		if g != nil {
			s.delivered(g, e.id)
		}
		out = append(out, entryReply(e))
		if g != nil && !noack {
			if p := g.pending(e.id); p != nil {
				p.assign(c)
				p.deliveryTime, p.deliveryCount = now, 1
			} else {
				g.addPending(&pendingEntry{id: e.id, consumer: c, deliveryTime: now, deliveryCount: 1})
			}
		}
		if count > 0 && int64(len(out)) == count {
			break
		}
	}
	if c != nil && len(out) > 0 {
		c.activeTime = now
	}
	return out
}

// readHistory serves a consumer's own pending entries from start on, as
// streamReplyWithRangeFromConsumerPEL does: a deleted entry comes back as
// its ID with a null, a served one counts as delivered again.
func (s *stream) readHistory(g *streamGroup, c *streamConsumer, start streamID, count int64, now int64) []Reply {
	out := []Reply{}
	for _, p := range g.pel[g.pelIndex(start):] {
		if count > 0 && int64(len(out)) >= count {
			break
		}
		if p.consumer != c {
			continue
		}
		if j, ok := s.entryIndex(p.id); ok {
			out = append(out, entryReply(s.entries[j]))
			p.deliveryTime = now
			p.deliveryCount++
		} else {
			out = append(out, arrayReply([]Reply{bulkReply(p.id.String()), nilReply()}))
		}
	}
	return out
}

func cmdXAck(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	var g *streamGroup
	if v != nil {
		g = v.stream.group(a[2])
	}
	if g == nil {
		return intReply(0)
	}
	ids := make([]streamID, 0, len(a)-3)
	for _, s := range a[3:] {
		id, ok := parseStrictID(s)
		if !ok {
			return errorReply(errStreamID)
		}
		ids = append(ids, id)
	}
	var n int64
	for _, id := range ids {
		if g.removePending(id) {
			n++
		}
	}
	return intReply(n)
}

func cmdXPending(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) != 3 && (len(a) < 6 || len(a) > 9) {
		return errorReply(errSyntax)
	}
	var start, end streamID
	var count, minIdle int64
	consumer, hasConsumer := "", false
	if len(a) >= 6 {
		at := 3
		if strings.EqualFold(a[3], "idle") {
			n, ok := parseInt(a[4])
			if !ok {
				return errorReply(errNotInteger)
			}
			minIdle = n
			if len(a) < 8 {
				return errorReply(errSyntax)
			}
			at += 2
		}
		c, ok := parseInt(a[at+2])
		if !ok {
			return errorReply(errNotInteger)
		}
		count = max(c, 0)
		var bad string
		if start, bad = parseRangeID(a[at], true); bad != "" {
			return errorReply(bad)
		}
		if end, bad = parseRangeID(a[at+1], false); bad != "" {
			return errorReply(bad)
		}
		if at+3 < len(a) {
			consumer, hasConsumer = a[at+3], true
		}
	}
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	var g *streamGroup
	if v != nil {
		g = v.stream.group(a[2])
	}
	if g == nil {
		return errorReply(fmt.Sprintf(errStreamNoGroupKey, a[1], a[2]))
	}
	now := clockMs(cc)
	if len(a) == 3 {
		if len(g.pel) == 0 {
			return arrayReply([]Reply{intReply(0), nilReply(), nilReply(), nilReply()})
		}
		owners := []Reply{}
		for _, c := range g.consumers {
			if c.pending > 0 {
				owners = append(owners, arrayReply([]Reply{bulkReply(c.name), bulkReply(strconv.Itoa(c.pending))}))
			}
		}
		return arrayReply([]Reply{intReply(int64(len(g.pel))), bulkReply(g.pel[0].id.String()), bulkReply(g.pel[len(g.pel)-1].id.String()), arrayReply(owners)})
	}
	var only *streamConsumer
	if hasConsumer {
		if only = g.consumer(consumer, now, false); only == nil {
			return arrayReply([]Reply{})
		}
	}
	out := []Reply{}
	for _, p := range g.pel[g.pelIndex(start):] {
		if count == 0 || end.less(p.id) {
			break
		}
		if only != nil && p.consumer != only {
			continue
		}
		if minIdle != 0 && now-p.deliveryTime < minIdle {
			continue
		}
		count--
		out = append(out, arrayReply([]Reply{bulkReply(p.id.String()), bulkReply(p.consumer.name), intReply(max(now-p.deliveryTime, 0)), intReply(int64(p.deliveryCount))}))
	}
	return arrayReply(out)
}

func cmdXClaim(ks *Keyspace, cc *CallContext, a []string) Reply {
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	var g *streamGroup
	if v != nil {
		g = v.stream.group(a[2])
	}
	if g == nil {
		return errorReply(fmt.Sprintf(errStreamNoGroupKey, a[1], a[2]))
	}
	minIdle, ok := parseInt(a[4])
	if !ok {
		return errorReply(fmt.Sprintf(errStreamMinIdle, "XCLAIM"))
	}
	minIdle = max(minIdle, 0)
	var ids []streamID
	j := 5
	for ; j < len(a); j++ {
		id, ok := parseStrictID(a[j])
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := clockMs(cc)
	var lastID streamID
	deliveryTime, retryCount := int64(-1), int64(-1)
	force, justID := false, false
	for ; j < len(a); j++ {
		more := len(a) - 1 - j
		opt := a[j]
		switch {
		case strings.EqualFold(opt, "force"):
			force = true
		case strings.EqualFold(opt, "justid"):
			justID = true
		case more > 0 && (strings.EqualFold(opt, "idle") || strings.EqualFold(opt, "time") || strings.EqualFold(opt, "retrycount")):
			j++
			n, ok := parseInt(a[j])
			if !ok {
				return errorReply(fmt.Sprintf(errStreamClaimOption, strings.ToUpper(opt)))
			}
			switch strings.ToLower(opt) {
			case "idle":
				deliveryTime = now - n
			case "time":
				deliveryTime = n
			default:
				retryCount = n
			}
		case strings.EqualFold(opt, "lastid") && more > 0:
			j++
			id, ok := parseStrictID(a[j])
			if !ok {
				return errorReply(errStreamID)
			}
			lastID = id
		default:
			return errorReply(fmt.Sprintf(errStreamClaimUnknown, opt))
		}
	}
	if g.lastID.less(lastID) {
		g.lastID = lastID
	}
	if deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	s := v.stream
	var c *streamConsumer
	out := []Reply{}
	for _, id := range ids {
		p := g.pending(id)
		e, exists := s.entryIndex(id)
		if !exists {
			if p != nil {
				g.removePending(id)
			}
			continue
		}
		if force && p == nil {
			p = &pendingEntry{id: id, deliveryTime: now, deliveryCount: 1}
			g.addPending(p)
		}
		if p == nil {
			continue
		}
		if p.consumer != nil && minIdle != 0 && now-p.deliveryTime < minIdle {
			continue
		}
		if c == nil {
			c = g.lookupOrCreateConsumer(a[3], now)
		}
		p.deliveryTime = deliveryTime
		switch {
		case retryCount >= 0:
			p.deliveryCount = uint64(retryCount)
		case !justID:
			p.deliveryCount++
		}
		p.assign(c)
		c.activeTime = now
		if justID {
			out = append(out, bulkReply(id.String()))
		} else {
			out = append(out, entryReply(s.entries[e]))
		}
	}
	return arrayReply(out)
}

// maxAutoClaimCount is LONG_MAX / max(sizeof(streamID), attempts factor).
const maxAutoClaimCount = math.MaxInt64 / 16

func cmdXAutoClaim(ks *Keyspace, cc *CallContext, a []string) Reply {
	minIdle, ok := parseInt(a[4])
	if !ok {
		return errorReply(fmt.Sprintf(errStreamMinIdle, "XAUTOCLAIM"))
	}
	minIdle = max(minIdle, 0)
	start, bad := parseRangeID(a[5], true)
	if bad != "" {
		return errorReply(bad)
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(a); j++ {
		switch {
		case strings.EqualFold(a[j], "count") && j+1 < len(a):
			n, ok := parseInt(a[j+1])
			if !ok || n < 1 || n > maxAutoClaimCount {
				return errorReply(errStreamAutoCount)
			}
			count = n
			j++
		case strings.EqualFold(a[j], "justid"):
			justID = true
		default:
			return errorReply(errSyntax)
		}
	}
	v, wrong := ks.streamFor(cc, a[1])
	if wrong != nil {
		return *wrong
	}
	var g *streamGroup
	if v != nil {
		g = v.stream.group(a[2])
	}
	if g == nil {
		return errorReply(fmt.Sprintf(errStreamNoGroupKey, a[1], a[2]))
	}
	// Redis allocates count IDs up front; past what an allocator can give
	// (here 1 TiB) it fails.
	if count > 1<<40/16 {
		return errorReply(errStreamAutoMemory)
	}
	s := v.stream
	now := clockMs(cc)
	attempts := count * 10
	var c *streamConsumer
	claimed, deleted := []Reply{}, []Reply{}
	i := g.pelIndex(start)
	for attempts > 0 && count > 0 && i < len(g.pel) {
		attempts--
		p := g.pel[i]
		e, exists := s.entryIndex(p.id)
		if !exists {
			g.removePending(p.id)
			deleted = append(deleted, bulkReply(p.id.String()))
			count--
			continue
		}
		i++
		if minIdle != 0 && now-p.deliveryTime < minIdle {
			continue
		}
		if c == nil {
			c = g.lookupOrCreateConsumer(a[3], now)
		}
		p.assign(c)
		c.activeTime = now
		p.deliveryTime = now
		if !justID {
			p.deliveryCount++
		}
		if justID {
			claimed = append(claimed, bulkReply(p.id.String()))
		} else {
			claimed = append(claimed, entryReply(s.entries[e]))
		}
		count--
	}
	next := streamID{}
	if i < len(g.pel) {
		next = g.pel[i].id
	}
	return arrayReply([]Reply{bulkReply(next.String()), arrayReply(claimed), arrayReply(deleted)})
}

func cmdXSetID(ks *Keyspace, cc *CallContext, a []string) Reply {
	id, ok := parseStrictID(a[2])
	if !ok {
		return errorReply(errStreamID)
	}
	added := int64(-1)
	var maxDeleted streamID
	for i := 3; i < len(a); i += 2 {
		more := len(a) - 1 - i
		switch {
		case strings.EqualFold(a[i], "entriesadded") && more > 0:
			n, ok := parseInt(a[i+1])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n < 0 {
				return errorReply(errSetIDAdded)
			}
			added = n
		case strings.EqualFold(a[i], "maxdeletedid") && more > 0:
			m, ok := parseStrictID(a[i+1])
			if !ok {
				return errorReply(errStreamID)
			}
			if id.less(m) {
				return errorReply(errSetIDMaxDeleted)
			}
			maxDeleted = m
		default:
			return errorReply(errSyntax)
		}
	}
	v, done, ok := ks.lookupOrReply(cc, a[1], kindStream, errorReply(errNoKey))
	if !ok {
		return done
	}
	s := v.stream
	if len(s.entries) > 0 {
		if id.less(s.entries[len(s.entries)-1].id) {
			return errorReply(errSetIDTop)
		}
		if added != -1 && int64(len(s.entries)) > added {
			return errorReply(errSetIDLength)
		}
	}
	s.last = id
	if added != -1 {
		s.added = uint64(added)
	}
	if maxDeleted != (streamID{}) {
		s.maxDeleted = maxDeleted
	}
	return okReply()
}

func cmdXInfo(ks *Keyspace, cc *CallContext, a []string) Reply {
	sub, bad := subcommand(a)
	if bad != nil {
		return *bad
	}
	if sub == "help" {
		return ks.helpReply(a,
			"CONSUMERS <key> <groupname>",
			"    Show consumers of <groupname>.",
			"GROUPS <key>",
			"    Show the stream consumer groups.",
			"STREAM <key> [FULL [COUNT <count>]",
			"    Show information about the stream.")
	}
	v, done, ok := ks.lookupOrReply(cc, a[2], kindStream, errorReply(errNoKey))
	if !ok {
		return done
	}
	s := v.stream
	now := clockMs(cc)
	switch sub {
	case "consumers":
		g := s.group(a[3])
		if g == nil {
			return errorReply(fmt.Sprintf(errStreamNoGroup, a[3], a[2]))
		}
		out := make([]Reply, 0, len(g.consumers))
		for _, c := range g.consumers {
			info := mapReply("name", bulkReply(c.name), "pending", intReply(int64(c.pending)), "idle", intReply(max(now-c.seenTime, 0)))
			if ks.profile.since72() {
				inactive := int64(-1)
				if c.activeTime != 0 {
					inactive = max(now-c.activeTime, 0)
				}
				info.Elems = append(info.Elems, bulkReply("inactive"), intReply(inactive))
			}
			out = append(out, info)
		}
		return arrayReply(out)
	case "groups":
		out := make([]Reply, 0, len(s.groups))
		for _, g := range s.groups {
			out = append(out, mapReply("name", bulkReply(g.name), "consumers", intReply(int64(len(g.consumers))), "pending", intReply(int64(len(g.pel))),
				"last-delivered-id", bulkReply(g.lastID.String()), "entries-read", entriesReadReply(g), "lag", s.lag(g, ks.profile)))
		}
		return arrayReply(out)
	}
	return xinfoStream(ks.profile, s, a)
}

func entriesReadReply(g *streamGroup) Reply {
	if g.entriesRead == entriesReadUnknown {
		return nilReply()
	}
	return intReply(g.entriesRead)
}

// mapReply builds a map reply from name, value pairs.
func mapReply(kv ...any) Reply {
	elems := make([]Reply, 0, len(kv))
	for i := 0; i < len(kv); i += 2 {
		elems = append(elems, bulkReply(kv[i].(string)), kv[i+1].(Reply))
	}
	return Reply{Kind: KindMap, Elems: elems}
}

// xinfoStream is XINFO STREAM key [FULL [COUNT count]].
func xinfoStream(p Profile, s *stream, a []string) Reply {
	full, count := false, int64(10)
	switch opts := a[3:]; {
	case len(opts) == 0:
	case len(opts) != 1 && len(opts) != 3, !strings.EqualFold(opts[0], "full"):
		return subcommandSyntax(a)
	case len(opts) == 3 && !strings.EqualFold(opts[1], "count"):
		return subcommandSyntax(a)
	default:
		full = true
		if len(opts) == 3 {
			n, ok := parseInt(opts[2])
			if !ok {
				return errorReply(errNotInteger)
			}
			if n < 0 {
				n = 10
			}
			count = n
		}
	}
	head := []any{"length", intReply(int64(len(s.entries))), "radix-tree-keys", intReply(int64(len(s.nodes))), "radix-tree-nodes", intReply(s.radixNodes()),
		"last-generated-id", bulkReply(s.last.String()), "max-deleted-entry-id", bulkReply(s.maxDeleted.String()),
		"entries-added", intReply(int64(s.added)), "recorded-first-entry-id", bulkReply(s.firstID().String())}
	if !full {
		first, last := nilReply(), nilReply()
		if len(s.entries) > 0 {
			first, last = entryReply(s.entries[0]), entryReply(s.entries[len(s.entries)-1])
		}
		return mapReply(append(head, "groups", intReply(int64(len(s.groups))), "first-entry", first, "last-entry", last)...)
	}
	limit := func(n int) int {
		if count == 0 || int64(n) < count {
			return n
		}
		return int(count)
	}
	entries := make([]Reply, 0, limit(len(s.entries)))
	for _, e := range s.entries[:limit(len(s.entries))] {
		entries = append(entries, entryReply(e))
	}
	groups := make([]Reply, 0, len(s.groups))
	for _, g := range s.groups {
		pel := []Reply{}
		for _, p := range g.pel[:limit(len(g.pel))] {
			pel = append(pel, arrayReply([]Reply{bulkReply(p.id.String()), bulkReply(p.consumer.name), intReply(p.deliveryTime), intReply(int64(p.deliveryCount))}))
		}
		consumers := make([]Reply, 0, len(g.consumers))
		for _, c := range g.consumers {
			own := []Reply{}
			for _, p := range g.pel {
				if count != 0 && int64(len(own)) >= count {
					break
				}
				if p.consumer == c {
					own = append(own, arrayReply([]Reply{bulkReply(p.id.String()), intReply(p.deliveryTime), intReply(int64(p.deliveryCount))}))
				}
			}
			info := mapReply("name", bulkReply(c.name), "seen-time", intReply(c.seenTime), "pel-count", intReply(int64(c.pending)), "pending", arrayReply(own))
			if p.since72() {
				active := c.activeTime
				if active == 0 {
					active = -1
				}
				info.Elems = append(info.Elems[:4], append([]Reply{bulkReply("active-time"), intReply(active)}, info.Elems[4:]...)...)
			}
			consumers = append(consumers, info)
		}
		groups = append(groups, mapReply("name", bulkReply(g.name), "last-delivered-id", bulkReply(g.lastID.String()), "entries-read", entriesReadReply(g),
			"lag", s.lag(g, p), "pel-count", intReply(int64(len(g.pel))), "pending", arrayReply(pel), "consumers", arrayReply(consumers)))
	}
	return mapReply(append(head, "entries", arrayReply(entries), "groups", arrayReply(groups))...)
}
