package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redlua/redlua/internal/cmdtable"
	"github.com/redlua/redlua/internal/luasyntax"
	"github.com/redlua/redlua/registry"
)

// The Redis family: checks no generic Lua linter can make, documented in
// CODES.md.

// HeaderAnalyzer reports an invalid "#!lua" shebang or flags (941) and
// problems in a redlua header (942), by the registry's own rules, so a
// script that lints clean also registers.
var HeaderAnalyzer = &Analyzer{
	Name:  "redis-header",
	Doc:   "the #!lua shebang and flags Redis 7 accepts, and the redlua header the registry requires",
	Codes: []string{"941", "942"},
	Run:   runHeader,
}

func runHeader(p *Pass) {
	for _, e := range registry.Problems(p.HeaderErr) {
		line := min(max(e.Line, 1), len(p.File.LineStarts()))
		code := "942"
		if e.Part == registry.PartShebang {
			code = "941"
		}
		end := 1
		p.File.Lines(func(l, _ int, text string) {
			if l == line {
				end = max(len(text), 1)
			}
		})
		p.reportLine(line, 1, end, code, Error, e.Msg)
	}
}

// redisCall is one redis.call / redis.pcall with a literal command name.
type redisCall struct {
	call *CallExpr
	fn   string // "call" or "pcall"
	cmd  *cmdtable.Command
	name string // as written
	// args are the arguments after the command name; open is true when
	// the last one may expand to several values (a call or ...).
	args []Expr
	open bool
}

// redisCalls finds the redis.call/pcall calls of the file; unknown
// commands come back with cmd == nil.
func redisCalls(p *Pass) []redisCall {
	var out []redisCall
	luasyntax.WalkAllExprs(p.File.Block, func(e Expr) bool {
		c, ok := e.(*CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		ix, ok := c.Fn.(*IndexExpr)
		if !ok {
			return true
		}
		obj, ok := ix.Obj.(*NameExpr)
		key, ok2 := ix.Key.(*StringExpr)
		if !ok || !ok2 || obj.Name != "redis" || p.res.varOf(obj) != nil || (key.Value != "call" && key.Value != "pcall") {
			return true
		}
		name, ok := c.Args[0].(*StringExpr)
		if !ok {
			return true
		}
		rc := redisCall{call: c, fn: key.Value, name: name.Value, args: c.Args[1:]}
		rc.open = len(c.Args) > 1 && isMulti(c.Args[len(c.Args)-1])
		// The command table of the configured server line: 7.2 lets
		// scripts call WAIT and the blocking commands, 7.4 adds HEXPIRE...
		line := p.Config.Server
		if cmd, ok := cmdtable.LookupLine(line, name.Value); ok {
			rc.cmd = cmd
			if cmd.Container == "" && len(rc.args) > 0 {
				if sub, ok := rc.args[0].(*StringExpr); ok {
					if sc, ok := cmdtable.LookupLineSub(line, cmd.Name, strings.ToLower(sub.Value)); ok {
						rc.cmd = sc
					}
				}
			}
		}
		out = append(out, rc)
		return true
	})
	return out
}

// CommandsAnalyzer checks each redis.call/pcall whose command name is a
// literal: unknown commands (922), wrong argument counts when every
// argument is literal in number (923), commands scripts may not run (925),
// blocking commands, which never block in a script (924), and write
// commands or PUBLISH in a "no-writes" script (921).
var CommandsAnalyzer = &Analyzer{
	Name:  "redis-commands",
	Doc:   "redis.call/pcall: unknown commands, arity, commands denied in scripts, blocking commands, writes in no-writes scripts",
	Codes: []string{"921", "922", "923", "924", "925"},
	Run:   runCommands,
}

func runCommands(p *Pass) {
	noWrites := p.readOnly()
	for _, rc := range redisCalls(p) {
		at := rc.call.Args[0]
		if rc.cmd == nil {
			p.Reportf(at, "922", Error, rc.name, "unknown Redis command '%s': Redis fails the call with \"Unknown Redis command called from script\"", rc.name)
			continue
		}
		argc := len(rc.args) + 1
		upper := strings.ToUpper(rc.cmd.Name)
		switch {
		case !rc.open && !rc.cmd.ArityOK(argc):
			p.Reportf(at, "923", Error, rc.name, "wrong number of arguments for '%s' (%s): Redis fails the call with \"Wrong number of args calling Redis command from script\"", strings.ToLower(rc.name), arityText(rc.cmd, argc))
		case rc.open && rc.cmd.Arity > 0 && argc > rc.cmd.Arity:
			p.Reportf(at, "923", Error, rc.name, "wrong number of arguments for '%s' (%s)", strings.ToLower(rc.name), arityText(rc.cmd, argc))
		}
		switch {
		case rc.cmd.DeniedInScripts():
			p.Reportf(at, "925", Error, rc.name, "%s may not be called from a script: Redis fails it with \"This Redis command is not allowed from script\"", upper)
		case rc.cmd.IsBlocking():
			p.Reportf(at, "924", Warning, rc.name, "%s never blocks inside a script: it returns at once as if the timeout expired", upper)
		}
		if noWrites && (rc.cmd.IsWrite() || rc.cmd.MayReplicate()) {
			p.Reportf(at, "921", Error, rc.name, "%s in a no-writes script: Redis fails it with \"Write commands are not allowed from read-only scripts\"; drop the flag or the write", upper)
		}
	}
}

func arityText(c *cmdtable.Command, argc int) string {
	want := fmt.Sprintf("takes %d", c.Arity)
	if c.Arity < 0 {
		want = fmt.Sprintf("takes at least %d", -c.Arity)
	}
	return fmt.Sprintf("%s counting the command name, given %d", want, argc)
}

// keySource classifies where a key argument comes from.
type keySource int

const (
	keyUnknown keySource = iota // a function argument, a call result...
	keyFromKEYS
	keyLiteral
	keyConcat
	keyFromARGV
)

// KeysAnalyzer reports key arguments of redis.call/pcall that do not come
// from KEYS: literals and values from ARGV (901), and key names built in
// Lua by concatenation or string.format (902). Such scripts fail on Redis
// Cluster ("Script attempted to access a non local key") and under ACL key
// patterns. Values whose origin the linter cannot see (function
// arguments, call results) are not reported.
var KeysAnalyzer = &Analyzer{
	Name:  "redis-keys",
	Doc:   "key arguments of redis.call/pcall that do not come from KEYS",
	Codes: []string{"901", "902"},
	Run:   runKeys,
}

func runKeys(p *Pass) {
	values := localValues(p)
	for _, rc := range redisCalls(p) {
		if rc.cmd == nil {
			continue
		}
		argv := make([]string, 1, len(rc.args)+1)
		argv[0] = rc.cmd.Name
		for _, a := range rc.args {
			if s, ok := a.(*StringExpr); ok {
				argv = append(argv, s.Value)
			} else if n, ok := a.(*NumberExpr); ok {
				argv = append(argv, n.Raw)
			} else {
				argv = append(argv, "?")
			}
		}
		positions := rc.cmd.KeyPositionsArgs(argv)
		if rc.cmd.Container != "" {
			positions = nil // subcommand keys are rare; positions would be off by one
		}
		for _, pos := range positions {
			if pos-1 >= len(rc.args) || pos-1 < 0 {
				continue
			}
			arg := rc.args[pos-1]
			switch classifyKey(p.res, arg, values, 0) {
			case keyLiteral:
				p.Reportf(arg, "901", Warning, rc.name, "key argument of %s is a literal, not from KEYS: pass the key in KEYS (it fails on Redis Cluster and under ACL key patterns)", strings.ToUpper(rc.name))
			case keyFromARGV:
				p.Reportf(arg, "901", Warning, rc.name, "key argument of %s comes from ARGV, not KEYS: pass keys in KEYS (it fails on Redis Cluster and under ACL key patterns)", strings.ToUpper(rc.name))
			case keyConcat:
				p.Reportf(arg, "902", Warning, rc.name, "key name for %s is built in Lua: pass the whole key in KEYS (a built key fails on Redis Cluster and under ACL key patterns)", strings.ToUpper(rc.name))
			}
		}
	}
}

// localValues maps each local to the expressions it is given, or nil when
// some value is unknown (a multiple assignment from a call, a loop
// variable that is not ipairs(KEYS)'s value).
func localValues(p *Pass) map[*Var][]Expr {
	vals := map[*Var][]Expr{}
	unknown := map[*Var]bool{}
	add := func(n *NameExpr, e Expr) {
		v := p.res.varOf(n)
		if v == nil {
			return
		}
		if e == nil {
			unknown[v] = true
			return
		}
		vals[v] = append(vals[v], e)
	}
	assign := func(targets []*NameExpr, exprs []Expr) {
		for i, t := range targets {
			if i < len(exprs) && !(i == len(exprs)-1 && i < len(targets)-1 && isMulti(exprs[i])) {
				add(t, exprs[i])
			} else {
				add(t, nil)
			}
		}
	}
	luasyntax.WalkStmts(p.File.Block, func(s Stmt) bool {
		switch s := s.(type) {
		case *LocalStmt:
			if len(s.Exprs) > 0 {
				assign(s.Names, s.Exprs)
			}
		case *AssignStmt:
			var names []*NameExpr
			for _, t := range s.Targets {
				n, _ := t.(*NameExpr)
				if n == nil {
					n = &NameExpr{}
				}
				names = append(names, n)
			}
			assign(names, s.Exprs)
		case *GenForStmt:
			// for _, k in ipairs(KEYS): k comes from KEYS
			if len(s.Vars) >= 2 && len(s.Exprs) == 1 {
				if c, ok := s.Exprs[0].(*CallExpr); ok && len(c.Args) == 1 && isGlobal(p.res, c.Args[0], "KEYS") {
					add(s.Vars[1], &IndexExpr{Obj: c.Args[0], Key: &NilExpr{}})
					add(s.Vars[0], nil)
					break
				}
			}
			for _, v := range s.Vars {
				add(v, nil)
			}
		case *NumForStmt:
			add(s.Var, nil)
		}
		return true
	})
	for v := range unknown {
		vals[v] = nil
	}
	for _, v := range p.res.vars {
		if v.Kind != LocalVar {
			if _, seen := vals[v]; !seen {
				vals[v] = nil
			}
		}
	}
	return vals
}

func isGlobal(res *resolution, e Expr, name string) bool {
	n, ok := e.(*NameExpr)
	return ok && res.varOf(n) == nil && n.Name == name
}

// classifyKey follows a key expression back to its origin; for a local, the
// worst of its values.
func classifyKey(res *resolution, e Expr, values map[*Var][]Expr, depth int) keySource {
	if depth > 8 {
		return keyUnknown
	}
	switch e := e.(type) {
	case *ParenExpr:
		return classifyKey(res, e.X, values, depth+1)
	case *StringExpr, *NumberExpr:
		return keyLiteral
	case *IndexExpr:
		switch {
		case isGlobal(res, e.Obj, "KEYS"):
			return keyFromKEYS
		case isGlobal(res, e.Obj, "ARGV"):
			return keyFromARGV
		}
	case *BinaryExpr:
		if e.Op == ".." {
			return keyConcat
		}
	case *CallExpr:
		if ix, ok := e.Fn.(*IndexExpr); ok && isGlobal(res, ix.Obj, "string") {
			if k, ok := ix.Key.(*StringExpr); ok && (k.Value == "format" || k.Value == "rep") {
				return keyConcat
			}
		}
	case *MethodCallExpr:
		if e.Method == "format" {
			return keyConcat
		}
	case *NameExpr:
		if res.varOf(e) == nil {
			return keyUnknown
		}
		vs, ok := values[res.varOf(e)]
		if !ok || vs == nil {
			return keyUnknown
		}
		worst := keyFromKEYS
		for _, v := range vs {
			switch c := classifyKey(res, v, values, depth+1); c {
			case keyUnknown:
				return keyUnknown
			case keyFromKEYS:
			default:
				worst = c
			}
		}
		return worst
	}
	return keyUnknown
}

// ScriptArgsAnalyzer compares KEYS[i] and ARGV[i] with a redlua header:
// literal indexes beyond what it declares (911, 912) and declared names
// never used (913, 914). Files without a header are not checked.
var ScriptArgsAnalyzer = &Analyzer{
	Name:  "redis-script-args",
	Doc:   "KEYS[i]/ARGV[i] against the keys and args a redlua header declares",
	Codes: []string{"911", "912", "913", "914"},
	Run:   runScriptArgs,
}

func runScriptArgs(p *Pass) {
	s := p.Script
	if s == nil {
		return
	}
	used := map[string]map[int]bool{"KEYS": {}, "ARGV": {}}
	all := map[string]bool{}
	var visit func(e Expr) bool
	visit = func(e Expr) bool {
		switch e := e.(type) {
		case *IndexExpr:
			for _, table := range []string{"KEYS", "ARGV"} {
				if !isGlobal(p.res, e.Obj, table) {
					continue
				}
				num, ok := e.Key.(*NumberExpr)
				if !ok {
					all[table] = true
					luasyntax.WalkExpr(e.Key, visit)
					return false
				}
				idx, err := strconv.ParseFloat(num.Raw, 64)
				if err != nil {
					all[table] = true
					return false
				}
				code := "911"
				if table == "ARGV" {
					code = "912"
				}
				if msg := s.IndexProblem(table, num.Raw); msg != "" {
					p.Reportf(e, code, Error, table, "%s", msg)
				} else {
					used[table][int(idx)] = true
				}
				return false
			}
		case *NameExpr:
			// KEYS or ARGV used whole: #KEYS, ipairs(ARGV), unpack(KEYS)
			if p.res.varOf(e) == nil && (e.Name == "KEYS" || e.Name == "ARGV") {
				all[e.Name] = true
			}
		}
		return true
	}
	luasyntax.WalkAllExprs(p.File.Block, visit)
	for _, table := range []string{"KEYS", "ARGV"} {
		if all[table] {
			continue
		}
		names, code, field := s.Keys, "913", "keys"
		if table == "ARGV" {
			names, code, field = s.Args, "914", "args"
		}
		f, _ := s.Field(field)
		line, text := max(f.Line, 1), f.Text
		for i, n := range names {
			if used[table][i+1] {
				continue
			}
			col := strings.Index(text, " "+n) + 2
			if col < 2 {
				col = 1
			}
			p.reportLine(line, col, col+len(n)-1, code, Warning, fmt.Sprintf("%s[%d] (%s, declared in the header) is never used; drop it from \"-- %s:\" in a new version, or use it", table, i+1, n, field))
		}
	}
}
