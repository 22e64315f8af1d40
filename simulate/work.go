package simulate

import (
	"maps"
	"strings"

	"github.com/redlua/redlua/internal/cmdtable"
)

// Work is what the commands a Server executed cost, counted in the elements
// each command touched by Redis's documented time complexity for it (the
// "Time complexity" line of each command's page): a HGET touches 1, a
// HGETALL every field of the hash, a ZRANGEBYSCORE the members it returns
// plus a logarithmic term for the descent into the sorted set, a DEL of a
// hash its fields. The count is deterministic, so a test can compare the
// work a script does at two sizes of what it reads, which wall time on a
// busy machine cannot (docs/simulator.md, "Work").
//
// Every command counts at least 1. A string counts as one element whatever
// its length. A value a command deletes or overwrites (DEL, SET over a hash,
// a key that expired when a command looked it up) adds its elements, as
// Redis 7.0 frees it before the command returns; UNLINK, FLUSHALL ASYNC and
// MOVE add none (freeing happens on another thread, or nothing is freed).
// The script commands themselves (EVAL, EVALSHA, FCALL, SCRIPT, FUNCTION)
// are not counted; the commands their scripts call are.
type Work struct {
	// Total counts every command: those scripts called and those sent
	// with Do.
	Total Tally
	// Direct counts the commands sent with Do, outside any script.
	Direct Tally
	// Scripts counts the commands each script called, by the script's ID
	// ("name@version" for Run, the SHA1 of its source for RunSource and
	// EVAL, the function's name for FCALL).
	Scripts map[string]ScriptWork
}

// Tally is the work of a set of commands.
type Tally struct {
	// Commands is how many commands ran.
	Commands int64
	// Elements is how many elements they touched.
	Elements int64
	// ByCommand is Elements by command name, in lower case, with a
	// container's subcommand after a bar ("object|encoding").
	ByCommand map[string]int64
}

// ScriptWork is the work of one script's runs.
type ScriptWork struct {
	Tally
	// Runs is how many times the script ran.
	Runs int64
	// MaxRun is the most elements one of its runs touched.
	MaxRun int64
}

// Work returns the work of the commands executed since the server started
// or since ResetWork. The maps are the caller's.
func (s *Server) Work() Work {
	if s == nil {
		return Work{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.work
	w := Work{Total: m.total.clone(), Direct: m.direct.clone(), Scripts: make(map[string]ScriptWork, len(m.scripts))}
	for id, sw := range m.scripts {
		c := *sw
		c.Tally = sw.Tally.clone()
		w.Scripts[id] = c
	}
	return w
}

// ResetWork sets every count of Work back to zero.
func (s *Server) ResetWork() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cache := s.work.rules
	s.work = meter{rules: cache}
}

func (t Tally) clone() Tally {
	t.ByCommand = maps.Clone(t.ByCommand)
	if t.ByCommand == nil {
		t.ByCommand = map[string]int64{}
	}
	return t
}

func (t *Tally) add(name string, n int64) {
	t.Commands++
	t.Elements += n
	if t.ByCommand == nil {
		t.ByCommand = map[string]int64{}
	}
	t.ByCommand[name] += n
}

// meter keeps the Server's Work (guarded by s.mu).
type meter struct {
	total, direct Tally
	scripts       map[string]*ScriptWork
	// cur is the script running now (nil outside a run) and curRun what
	// its run has touched so far.
	cur    *ScriptWork
	curRun int64
	// rules caches the rule of each spelling of a command name seen
	// (bounded), so that the usual calls cost no lower-casing.
	rules map[string]meteredCommand
	// keys and call are scratch space for the command being charged.
	keys []keyBefore
	call workCall
}

type meteredCommand struct {
	name string // the rule's name: "hget", "object|encoding"
	cmd  *cmdtable.Command
	rule *workRule
}

// keyBefore is the value a key argument held before the command ran.
type keyBefore struct {
	pos  int
	v    *value
	size int
}

// beginRun and endRun bracket a script's run (s.mu held).
func (m *meter) beginRun(id string) {
	if m.scripts == nil {
		m.scripts = map[string]*ScriptWork{}
	}
	sw := m.scripts[id]
	if sw == nil {
		sw = &ScriptWork{}
		m.scripts[id] = sw
	}
	sw.Runs++
	m.cur, m.curRun = sw, 0
}

func (m *meter) endRun() {
	if m.cur != nil && m.curRun > m.cur.MaxRun {
		m.cur.MaxRun = m.curRun
	}
	m.cur, m.curRun = nil, 0
}

// execMetered runs argv on the keyspace as Keyspace.Exec does and charges
// its work to the running script, or to Direct outside a run (s.mu held).
func (s *Server) execMetered(cc *CallContext, argv []string) Reply {
	m := &s.work
	mc := m.lookup(argv)
	db := s.ks.keys
	if cc.dbSelected && cc.db != s.ks.db {
		db = s.ks.others[cc.db] // nil (an empty database) reads as empty
	}
	c := &m.call
	*c = workCall{argv: argv, dbKeys: len(db), before: m.snapshot(db, mc.cmd, argv)}
	if mc.name == "flushall" {
		c.allKeys = s.ks.allKeys()
	}
	c.reply = s.ks.Exec(cc, argv)
	if cc.dbSelected && cc.db != s.ks.db {
		db = s.ks.others[cc.db]
	} else {
		db = s.ks.keys
	}
	c.db = db
	n := int64(1)
	if mc.rule != nil && c.reply.Kind != KindError {
		n = max(1, mc.rule.cost(c))
	}
	if mc.rule == nil || !mc.rule.noFree {
		n += c.freed()
	}
	m.total.add(mc.name, n)
	if m.cur != nil {
		m.cur.add(mc.name, n)
		m.curRun += n
	} else {
		m.direct.add(mc.name, n)
	}
	m.keys = c.before[:0]
	r := c.reply
	*c = workCall{}
	return r
}

// lookup finds argv's command and its rule.
func (m *meter) lookup(argv []string) meteredCommand {
	if len(argv) == 0 {
		return meteredCommand{name: ""}
	}
	if mc, ok := m.rules[argv[0]]; ok {
		return mc
	}
	mc := meteredCommand{name: strings.ToLower(argv[0])}
	cmd, ok := lookupCommand(argv)
	if ok {
		mc.cmd = cmd
		if cmd.Container != "" {
			mc.name = cmd.Container + "|" + strings.ToLower(argv[1])
		}
	}
	if r, ok := workRules[mc.name]; ok {
		mc.rule = &r
	}
	if ok && !containers[cmd.Name] && cmd.Container == "" && len(m.rules) < 4096 {
		if m.rules == nil {
			m.rules = map[string]meteredCommand{}
		}
		m.rules[argv[0]] = mc
	}
	return mc
}

// snapshot records the values argv's keys hold in db before the command runs.
func (m *meter) snapshot(db map[string]*value, cmd *cmdtable.Command, argv []string) []keyBefore {
	out := m.keys[:0]
	if cmd == nil || (cmd.FirstKey == 0 && len(cmd.KeySpecs) == 0) {
		return out
	}
	if singleKey(cmd) {
		if len(argv) > 1 {
			out = append(out, keyAt(db, argv, 1))
		}
		return out
	}
	for _, pos := range cmd.KeyPositionsArgs(argv) {
		if pos > 0 && pos < len(argv) {
			out = append(out, keyAt(db, argv, pos))
		}
	}
	return out
}

// keyAt is the value argv[pos] names in db, and its size.
func keyAt(db map[string]*value, argv []string, pos int) keyBefore {
	v := db[argv[pos]]
	kb := keyBefore{pos: pos, v: v}
	if v != nil {
		kb.size = 1
		if v.kind != kindString {
			kb.size = v.size()
		}
	}
	return kb
}

// allKeys counts the keys of every database.
func (ks *Keyspace) allKeys() int {
	n := len(ks.keys)
	for _, db := range ks.others {
		n += len(db)
	}
	return n
}

// workCall is one command as its rule sees it: the arguments, the reply,
// and its keys' values before and after.
type workCall struct {
	argv    []string
	reply   Reply
	before  []keyBefore
	db      map[string]*value // the command's database after it ran
	dbKeys  int               // keys in that database before
	allKeys int               // keys in every database before (FLUSHALL only)
}

// sizeBefore is how many elements the key at argv[pos] held before the
// command ran (1 for a string, 0 for no key).
func (c *workCall) sizeBefore(pos int) int64 {
	for _, kb := range c.before {
		if kb.pos == pos {
			return int64(kb.size)
		}
	}
	return 0
}

// sizeAfter is how many elements the key at argv[pos] holds now.
func (c *workCall) sizeAfter(pos int) int64 {
	if pos >= len(c.argv) {
		return 0
	}
	v := c.db[c.argv[pos]]
	switch {
	case v == nil:
		return 0
	case v.kind == kindString:
		return 1
	}
	return int64(v.size())
}

// bigBefore reports whether the key at argv[pos] held a large encoding.
func (c *workCall) bigBefore(pos int) bool {
	for _, kb := range c.before {
		if kb.pos == pos && kb.v != nil {
			return kb.v.big
		}
	}
	return false
}

// freed is the elements of the aggregates the command deleted or replaced:
// a value one of its keys held before that none of them holds now. A value
// emptied element by element has no elements left to count.
func (c *workCall) freed() int64 {
	var n int64
	for i, kb := range c.before {
		if kb.v == nil || kb.v.kind == kindString || kb.v.kind == kindStream && kb.v.stream == nil {
			continue
		}
		seen := false
		for _, other := range c.before[:i] {
			seen = seen || other.v == kb.v
		}
		if seen || c.holds(kb.v) {
			continue
		}
		n += int64(kb.v.size())
	}
	return n
}

// holds reports whether one of the command's keys holds v now.
func (c *workCall) holds(v *value) bool {
	for _, kb := range c.before {
		if c.db[c.argv[kb.pos]] == v {
			return true
		}
	}
	return false
}
