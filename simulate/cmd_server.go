package simulate

import (
	"fmt"
	"strconv"
)

func init() {
	commands["time"] = cmdTime
	commands["ping"] = cmdPing
	commands["echo"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return bulkReply(a[1]) }
	commands["dbsize"] = func(ks *Keyspace, cc *CallContext, a []string) Reply { return intReply(int64(len(ks.Dump(cc.Now)))) }
	commands["flushall"] = cmdFlush(true)
}

// cmdTime reads the clock, not the frozen script time, as Redis's TIME does.
func cmdTime(ks *Keyspace, cc *CallContext, a []string) Reply {
	now := cc.Now
	if cc.Clock != nil {
		now = cc.Clock.Now()
	}
	us := now.UnixMicro()
	return arrayReply([]Reply{bulkReply(strconv.FormatInt(us/1e6, 10)), bulkReply(strconv.FormatInt(us%1e6, 10))})
}

func cmdPing(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) > 2 {
		return errorReply(fmt.Sprintf(errWrongArgs, "ping"))
	}
	if len(a) > 1 {
		return bulkReply(a[1])
	}
	return statusReply("PONG")
}
