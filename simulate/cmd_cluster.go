package simulate

import (
	"fmt"
	"strings"

	"github.com/redlua/redlua/internal/cmdtable"
)

// The cluster commands a script may call. The simulator is one
// redis-server without cluster support, so they answer as such a server
// does: after the usual subcommand and arity checks, an error.

const errClusterDisabled = "ERR This instance has cluster support disabled"

func init() {
	disabled := func(ks *Keyspace, cc *CallContext, a []string) Reply {
		if ks.profile == Valkey80 && (strings.EqualFold(a[0], "readonly") || strings.EqualFold(a[0], "readwrite")) {
			return okReply() // Valkey 8 accepts READONLY and READWRITE outside a cluster
		}
		return errorReply(errClusterDisabled)
	}
	for _, name := range []string{"asking", "readonly", "readwrite"} {
		commands[name] = disabled
	}
	commands["cluster"] = cmdCluster
	registerSubcommands("cluster", cmdCluster)
	commands["cluster|myshardid"] = cmdCluster  // 7.2's
	commands["cluster|slot-stats"] = cmdCluster // Valkey 8's
}

func cmdCluster(ks *Keyspace, cc *CallContext, a []string) Reply {
	if len(a) > 1 {
		// A subcommand a later line adds (7.2's MYSHARDID, Valkey 8's
		// SLOT-STATS) is not in 7.0's table.
		name := "cluster|" + strings.ToLower(a[1])
		if c, ok := laterCommands[ks.profile][name]; ok {
			if !c.ArityOK(len(a)) {
				return errorReply(fmt.Sprintf(errWrongArgs, name))
			}
			return errorReply(errClusterDisabled)
		}
	}
	if _, bad := subcommand(a); bad != nil {
		return *bad
	}
	return errorReply(errClusterDisabled)
}

// registerSubcommands registers h under every subcommand of container
// that scripts may call, the names scripts check.
func registerSubcommands(container string, h handler) {
	for _, c := range cmdtable.All() {
		if c.Container == container && !c.DeniedInScripts() {
			commands[c.Name] = h
		}
	}
}
