package explore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlua/redlua/simulate"
)

// callResult is a memoised run: its reply and the keyspace after it.
type callResult struct {
	reply simulate.Reply
	after *simulate.Snapshot
}

// maxMemoCalls bounds the run memo; past it, runs are simply not remembered.
const maxMemoCalls = 1 << 20

// errPrimaryDown is the reply to every call while no primary is up.
const errPrimaryDown = "ERR explore: the primary is down (it crashed and the replica is not promoted yet)"

// call runs one script or command on c's primary and records its writes
// for the replica.
func (e *engine) call(c *node, st *Step, args []any) (simulate.Reply, error) {
	if c.down {
		return simulate.Reply{Kind: simulate.KindError, Str: errPrimaryDown}, nil
	}
	cmd := st.Command
	if st.Script == nil && st.Call != nil {
		cmd = args
	}
	if st.Script == nil && len(cmd) > 0 {
		if name, ok := cmd[0].(string); ok && strings.EqualFold(name, "WAIT") {
			return e.wait(c), nil
		}
	}
	memo := e.callKey(c, st, args, cmd)
	hit, ok := e.calls[string(memo)]
	if !ok {
		e.srv.Restore(c.primary)
		e.clock.Set(time.UnixMilli(startMs + c.now))
		var err error
		if st.Script != nil {
			hit.reply, err = e.srv.RunReply(e.ctx, st.Script, st.Keys, args...)
		} else {
			hit.reply, err = e.srv.DoReply(e.ctx, cmd...)
		}
		if err != nil {
			return hit.reply, err
		}
		hit.after = e.srv.Snapshot()
		if e.calls == nil {
			e.calls = map[string]callResult{}
		}
		if len(e.calls) < maxMemoCalls {
			e.calls[string(memo)] = hit
		}
	}
	reply, after := hit.reply, hit.after
	if d := simulate.Diff(c.primary, after); !d.Empty() {
		c.primary = after
		if c.replica != nil {
			c.pending = append(append([]*simulate.Delta(nil), c.pending...), d)
		}
	}
	return reply, nil
}

// callKey encodes what a run depends on: the script (or command), its
// keys and arguments, the clock and the whole keyspace.
func (e *engine) callKey(c *node, st *Step, args, cmd []any) []byte {
	b := e.callBuf[:0]
	if st.Script != nil {
		b = append(b, st.Script.SHA1...)
		for _, k := range st.Keys {
			b = appendWord(b, k)
		}
		b = append(b, '|')
	} else {
		args = cmd
	}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			b = appendWord(b, v)
		case int:
			b = appendWord(b, strconv.Itoa(v))
		case int64:
			b = appendWord(b, strconv.FormatInt(v, 10))
		default:
			b = appendWord(b, fmt.Sprintf("%T:%v", v, v))
		}
	}
	b = appendInt(b, c.now)
	b = c.primary.AppendCanonical(b)
	e.callBuf = b
	return b
}

func appendWord(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// wait answers WAIT: with a replica, everything pending arrives and one
// replica acknowledges; without one, none does.
func (e *engine) wait(c *node) simulate.Reply {
	if c.replica == nil {
		return simulate.Reply{Kind: simulate.KindInt, Int: 0}
	}
	for _, d := range c.pending {
		c.replica = c.replica.Apply(d)
	}
	c.replica = c.replica.Live(time.UnixMilli(startMs + c.now))
	c.pending = nil
	return simulate.Reply{Kind: simulate.KindInt, Int: 1}
}
