package simulate

import (
	"fmt"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

	"github.com/redlua/redlua/internal/cmdtable"
)

// command is redis.call (raise) and redis.pcall: arguments become strings
// as Redis makes them, the command runs, and an error reply is raised or
// returned as an error table.
func (sb *sandbox) command(L *lua.LState, raiseErr bool) int {
	n := L.GetTop()
	if n == 0 {
		return callFailed(L, raiseErr, sb.srv.profile.text(errNoArgs))
	}
	argv := make([]string, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			argv[i-1] = string(v)
		case lua.LNumber:
			argv[i-1] = formatArgNumber(float64(v))
		default:
			return callFailed(L, raiseErr, sb.srv.profile.text(errBadArgType))
		}
	}
	r := sb.exec(L, argv)
	if r.Kind == KindError {
		return commandFailed(L, raiseErr, errorReplyText("-"+r.Str))
	}
	L.Push(toLua(L, r, sb.resp, sb.srv.profile))
	return 1
}

// commandFailed is callFailed for an error the command itself (or the
// checks before it) gave: Redis adds ignore_error_stats_update = true to the
// error table, which pairs() shows.
func commandFailed(L *lua.LState, raiseErr bool, msg string) int {
	t := errorTable(L, msg)
	t.RawSetString("ignore_error_stats_update", lua.LTrue)
	if raiseErr {
		L.Error(t, 0)
	}
	L.Push(t)
	return 1
}

func callFailed(L *lua.LState, raiseErr bool, msg string) int {
	t := errorTable(L, msg)
	if raiseErr {
		L.Error(t, 0)
	}
	L.Push(t)
	return 1
}

// exec applies the checks Redis makes before a script's command runs
// (scriptCall in script.c, in its order), then the simulator's key
// discipline, then runs the command on the keyspace.
func (sb *sandbox) exec(L *lua.LState, argv []string) Reply {
	run := sb.run
	var r Reply
	cmd, ok := sb.lookup(argv)
	switch {
	case !ok:
		r = errorReply(sb.srv.profile.text(errUnknownCmd))
	case !cmd.ArityOK(len(argv)) && !sb.srv.profile.getKeysOfBareCommand(argv):
		r = errorReply(sb.srv.profile.text(errScriptArity))
	case cmd.DeniedInScripts() && !sb.srv.profile.scriptMayBlock(cmd.Name):
		r = errorReply(errNoScript)
	case run.readOnly && (cmd.IsWrite() || cmd.MayReplicate()):
		r = errorReply(errReadOnlyWrite)
	case !sb.srv.ks.Implemented(cmd.Name):
		r = errorReply(fmt.Sprintf(errNotImplemented, cmd.Name))
	default:
		if sb.srv.keyDiscipline {
			if key, bad := run.undeclaredKey(cmd, argv); bad {
				run.violation = undeclaredKeyError(run.id, currentLine(L), key)
				L.Error(errorTable(L, "ERR "+run.violation.Error()), 0)
			}
		}
		r = sb.srv.execMetered(&sb.cc, argv)
	}
	sb.srv.addTrace(TraceEntry{Script: run.id, Args: argv, Reply: r})
	return r
}

// lookup finds the command (or subcommand) argv names, with a small cache
// by the exact spelling the script used, so that the usual upper-case
// names cost no allocation per call.
func (sb *sandbox) lookup(argv []string) (*cmdtable.Command, bool) {
	if c, ok := sb.cmdCache[argv[0]]; ok {
		return c, true
	}
	c, ok := sb.srv.profile.lookupCommand(argv)
	if ok && !containers[c.Name] && c.Container == "" && len(sb.cmdCache) < 4096 {
		sb.cmdCache[argv[0]] = c
	}
	return c, ok
}

// containers are the commands with subcommands ("client", "script", ...).
var containers = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range cmdtable.All() {
		if c.Container != "" {
			m[c.Container] = true
		}
	}
	return m
}()

// lookupCommand is Redis's lookupCommand: a container needs a known
// subcommand in argv[1].
func lookupCommand(argv []string) (*cmdtable.Command, bool) {
	c, ok := cmdtable.Lookup(argv[0])
	if !ok {
		return nil, false
	}
	if !containers[c.Name] || len(argv) < 2 {
		return c, true
	}
	return cmdtable.LookupSub(c.Name, strings.ToLower(argv[1]))
}

// currentLine is the line of the innermost Lua function on the stack.
func currentLine(L *lua.LState) int {
	for level := 1; level < 8; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("l", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			return dbg.CurrentLine
		}
	}
	return 0
}
