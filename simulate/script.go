package simulate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	lua "github.com/redlua/redlua/simulate/internal/third_party/gopherlua"

	"github.com/redlua/redlua/registry"
)

// scriptChunk is the chunk name Redis gives every EVAL script: errors say
// "user_script:3:" and the reply ends "on @user_script:3.".
const scriptChunk = "user_script"

// compiled is a script compiled once and cached by the SHA1 of its source,
// as Redis caches EVAL scripts.
type compiled struct {
	sha   string
	proto *lua.FunctionProto
	flags scriptFlags
	// fn is the main function made from proto in sandbox fnOf, kept so
	// that a run creates no function (a chunk has no upvalues to reset).
	fn   *lua.LFunction
	fnOf *sandbox
	// script and id remember the last registry script run from this
	// source, so Run does not format "name@version" each time.
	script *registry.Script
	id     string
}

// scriptFlags are the Redis 7 flags from a "#!lua" shebang line.
type scriptFlags struct {
	shebang        bool
	noWrites       bool
	allowCrossSlot bool
}

// parseShebang is evalExtractShebangFlags: it returns the body Lua
// compiles (the shebang line blanked, its newline kept so line numbers
// stay) and the flags, or Redis's error text. The flags are parsed by
// registry.ParseShebang; this maps its first problem to Redis's words.
func parseShebang(src string) (string, scriptFlags, string) {
	var f scriptFlags
	if !strings.HasPrefix(src, "#!") {
		return src, f, ""
	}
	nl := strings.IndexByte(src, '\n')
	if nl < 0 {
		return "", f, errShebangInvalid
	}
	flags, problems := registry.ParseShebang(src[:nl])
	for _, p := range problems {
		switch p.Problem {
		case registry.ShebangBadEngine:
			return "", f, errShebangEngine + p.Value
		case registry.ShebangUnknownOption:
			return "", f, errShebangOption + p.Value
		case registry.ShebangUnknownFlag:
			return "", f, errShebangFlag + p.Value
		}
		// ShebangRepeatedFlags is the registry's rule; Redis takes both lists.
	}
	f.shebang = true
	for _, name := range flags {
		switch name {
		case registry.FlagNoWrites:
			f.noWrites = true
		case registry.FlagAllowCrossSlotKeys:
			f.allowCrossSlot = true
		}
		// allow-oom, allow-stale and no-cluster change behaviour under
		// memory pressure, on stale replicas and in cluster mode, none of
		// which the simulator has.
	}
	return src[nl:], f, ""
}

// compile returns the cached script for src, compiling it on first use.
// The caller holds s.mu. A failure is Redis's error text.
func (s *Server) compile(src, sha string) (*compiled, string) {
	if c, ok := s.scripts[sha]; ok {
		return c, ""
	}
	body, flags, errText := parseShebang(src)
	if errText != "" {
		return nil, errText
	}
	proto, err := compileLua(body, scriptChunk)
	if err != nil {
		return nil, errCompilingScript + err.Error()
	}
	c := &compiled{sha: sha, proto: proto, flags: flags}
	s.scripts[sha] = c
	return c, ""
}

// sha1Hex is registry.SourceSHA1, the one SHA1 helper.
func sha1Hex(s string) string { return registry.SourceSHA1(s) }

// runState is what the sandbox needs to know about the script it runs.
type runState struct {
	id        string
	sha       string
	keys      []string
	readOnly  bool
	violation *DisciplineError
	published []publication
}

// runLocked runs a compiled script with s.mu held and returns its reply.
// Messages it published are returned for delivery once the lock is released.
func (s *Server) runLocked(ctx context.Context, c *compiled, id string, keys, args []string, forceRO bool) (Reply, []publication, error) {
	sb := s.sandbox()
	if c.fnOf != sb {
		c.fn = sb.L.NewFunctionFromProto(c.proto)
		c.fn.Env = sb.env
		c.fnOf = sb
	}
	return s.invokeLocked(ctx, invocation{
		sb: sb, fn: c.fn, id: id, sha: c.sha, errName: c.sha,
		readOnly: c.flags.noWrites || forceRO, allowCrossSlot: c.flags.allowCrossSlot,
	}, keys, args)
}

// invocation is one run of a script or a function.
type invocation struct {
	sb      *sandbox
	fn      *lua.LFunction
	id      string // names the run in traces, logs and discipline errors
	sha     string
	errName string // names the run in error replies: the SHA1, or the function name
	// params passes keys and args as the function's two parameters (FCALL)
	// instead of the KEYS and ARGV globals (EVAL).
	params         bool
	readOnly       bool
	allowCrossSlot bool
}

// invokeLocked runs inv with s.mu held and returns its reply. Messages it
// published are returned for delivery once the lock is released.
func (s *Server) invokeLocked(ctx context.Context, inv invocation, keys, args []string) (Reply, []publication, error) {
	if s.crossSlot && !inv.allowCrossSlot {
		if err := crossSlot(inv.id, keys); err != nil {
			return Reply{}, nil, err
		}
	}
	s.work.beginRun(inv.id)
	defer s.work.endRun()
	sb := inv.sb
	L := sb.L
	run := &sb.runBuf
	*run = runState{id: inv.id, sha: inv.sha, keys: keys, readOnly: inv.readOnly}
	sb.run, sb.resp = run, 2
	now := s.clock.Now()
	sb.cc = CallContext{Now: now, Clock: s.clock, InScript: true, ReadOnly: run.readOnly, Publish: sb.publishFn, RESP: 2, profile: s.profile}
	L.Push(inv.fn)
	nargs := 0
	if inv.params {
		L.Push(stringsTable(L, keys))
		L.Push(stringsTable(L, args))
		nargs = 2
	} else {
		sb.globals.RawSetString("KEYS", stringsTable(L, keys))
		sb.globals.RawSetString("ARGV", stringsTable(L, args))
	}
	if ctx.Done() != nil {
		// Only a cancelable context costs the interpreter a check per instruction.
		L.SetContext(ctx)
		defer L.RemoveContext()
	}
	err := L.PCall(nargs, 1, sb.errHandler)
	var reply Reply
	if err != nil && ctx.Err() != nil {
		L.SetTop(0)
		published := run.published
		*run = runState{}
		sb.run = nil
		return Reply{}, published, fmt.Errorf("simulate: script %s interrupted (its writes so far stay, as in Redis): %w", inv.id, ctx.Err())
	}
	if err != nil {
		reply = scriptErrorReply(err, inv.errName)
		if ae, ok := err.(*lua.ApiError); ok && ae.Type == lua.ApiErrorPanic {
			// A Go panic inside the interpreter may leave it inconsistent.
			s.dropSandbox(sb)
		}
	} else {
		reply = fromLua(L.Get(-1), sb.resp)
	}
	L.SetTop(0)
	published, violation := run.published, run.violation
	*run = runState{}
	sb.run = nil
	if violation != nil {
		return Reply{}, published, violation
	}
	return reply, published, nil
}

// dropSandbox discards an interpreter a Go panic may have left
// inconsistent; the functions engine reloads its libraries into a new one.
func (s *Server) dropSandbox(sb *sandbox) {
	if sb == s.sb {
		s.sb = nil
		return
	}
	if e := s.functions.eng; e != nil && sb == e.sb {
		s.functions.restart(s)
	}
}

func stringsTable(L *lua.LState, ss []string) *lua.LTable {
	t := L.NewTable() // as Redis's luaCreateArray: filled one index at a time
	for i, s := range ss {
		t.RawSetInt(i+1, lua.LString(s))
	}
	return t
}

// scriptErrorReply formats a failed script's reply as Redis 7.0 does:
// the error table's message, then " script: <sha>, on @user_script:<line>."
// when the error handler located it.
func scriptErrorReply(err error, sha string) Reply {
	ae, ok := err.(*lua.ApiError)
	if !ok {
		return errorReply("ERR " + err.Error())
	}
	t, ok := ae.Object.(*lua.LTable)
	if !ok {
		// The handler could not run (a stack overflow leaves it no room):
		// take the position from the message itself, as Redis's handler would.
		msg := luaMessage(ae.Object.String())
		for _, chunk := range []string{scriptChunk, functionChunk} {
			if rest, ok := strings.CutPrefix(msg, chunk+":"); ok {
				if i := strings.IndexByte(rest, ':'); i > 0 {
					if _, err := strconv.Atoi(rest[:i]); err == nil {
						return errorReply(noNewlines("ERR " + msg + " script: " + sha + ", on @" + chunk + ":" + rest[:i] + "."))
					}
				}
			}
		}
		return errorReply(noNewlines("ERR Error running script " + sha + ", " + msg))
	}
	msg, ok := concatString(t.RawGetString("err"))
	if !ok {
		// Redis 7.0 crashes on an error table without a message; report it instead.
		return errorReply(errTableWithoutErr)
	}
	source, _ := t.RawGetString("source").(lua.LString)
	line, _ := t.RawGetString("line").(lua.LNumber)
	if source != "" && line != 0 {
		msg += " script: " + sha + ", on " + string(source) + ":" + strconv.Itoa(int(line)) + "."
	}
	return errorReply(noNewlines(msg))
}

// idFor names the script in errors and traces: its registry ID, or its
// SHA1 for ad-hoc source.
func (c *compiled) idFor(script *registry.Script) string {
	if script == nil {
		return c.sha
	}
	if c.script != script {
		c.script, c.id = script, script.ID()
	}
	return c.id
}
