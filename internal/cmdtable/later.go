package cmdtable

import "strings"

// The table is Redis 7.0's. Later server lines add commands a script may
// call and change some entries (7.2 lets scripts call WAIT and the blocking
// commands, and gives ZRANK a WITHSCORE). The entries below are those
// lines' own COMMAND replies for what they add or change that the
// simulator needs (Redis 7.2.6 and 7.4.1, Valkey 7.2.7 and 8.0.1; Redis
// 8.0-m01 has 7.4.1's), written by hand: the generator reads one server.
// The blocking commands' lost noscript flag is Profile.scriptMayBlock's.

// Since72 are the commands Redis 7.2 adds or changes, which every later
// line (Redis 7.4, 8.0, Valkey 7.2, 8.0) has too.
var Since72 = []Command{
	// WAIT was noscript in 7.0; from 7.2 a script may call it (it never
	// blocks there). WAITAOF is noscript in 7.2; 7.4 lets scripts call it.
	{Name: "wait", Arity: 3, Flags: []string{}, Categories: []string{"slow", "connection"}, KeySpecs: []KeySpec{}},
	{Name: "waitaof", Arity: 4, Flags: []string{"noscript"}, Categories: []string{"slow", "connection"}, KeySpecs: []KeySpec{}},
	{Name: "cluster|myshardid", Container: "cluster", Arity: 2, Flags: []string{"stale"}, Categories: []string{"slow"}, KeySpecs: []KeySpec{}},
	// ZRANK and ZREVRANK key member [WITHSCORE].
	{Name: "zrank", Arity: -3, Flags: []string{"readonly", "fast"}, FirstKey: 1, LastKey: 1, KeyStep: 1, Categories: []string{"read", "sortedset", "fast"},
		KeySpecs: []KeySpec{{BeginIndex: 1, Find: "range", KeyStep: 1, Flags: []string{"RO", "access"}}}},
	{Name: "zrevrank", Arity: -3, Flags: []string{"readonly", "fast"}, FirstKey: 1, LastKey: 1, KeyStep: 1, Categories: []string{"read", "sortedset", "fast"},
		KeySpecs: []KeySpec{{BeginIndex: 1, Find: "range", KeyStep: 1, Flags: []string{"RO", "access"}}}},
}

// WaitInScripts are WAIT and WAITAOF as Redis 7.4 and Valkey 8.0 list
// them: both blocking, and scripts may call WAITAOF.
var WaitInScripts = []Command{
	{Name: "wait", Arity: 3, Flags: []string{"blocking"}, Categories: []string{"slow", "blocking", "connection"}, KeySpecs: []KeySpec{}},
	{Name: "waitaof", Arity: 4, Flags: []string{"blocking"}, Categories: []string{"slow", "blocking", "connection"}, KeySpecs: []KeySpec{}},
}

// HashFieldExpiry is Redis 7.4's hash field expiry family (8.0 keeps it;
// Valkey 8.0 has none of it).
var HashFieldExpiry = func() []Command {
	key := func(flags ...string) []KeySpec {
		return []KeySpec{{BeginIndex: 1, Find: "range", KeyStep: 1, Flags: flags}}
	}
	var out []Command
	for _, n := range []string{"hexpire", "hexpireat", "hpexpire", "hpexpireat"} {
		out = append(out, Command{Name: n, Arity: -6, Flags: []string{"write", "denyoom", "fast"}, FirstKey: 1, LastKey: 1, KeyStep: 1,
			Categories: []string{"write", "hash", "fast"}, KeySpecs: key("RW", "update")})
	}
	out = append(out, Command{Name: "hpersist", Arity: -5, Flags: []string{"write", "fast"}, FirstKey: 1, LastKey: 1, KeyStep: 1,
		Categories: []string{"write", "hash", "fast"}, KeySpecs: key("RW", "update")})
	for _, n := range []string{"hexpiretime", "hpexpiretime", "httl", "hpttl"} {
		out = append(out, Command{Name: n, Arity: -5, Flags: []string{"readonly", "fast"}, FirstKey: 1, LastKey: 1, KeyStep: 1,
			Categories: []string{"read", "hash", "fast"}, KeySpecs: key("RO", "access")})
	}
	return out
}()

// Valkey80 are the commands Valkey 8.0 adds that a script may call.
var Valkey80 = []Command{
	{Name: "cluster|slot-stats", Container: "cluster", Arity: -4, Flags: []string{"loading", "stale"}, Categories: []string{"slow"}, KeySpecs: []KeySpec{}},
}

// ScriptsMayBlock are the blocking commands 7.0 flags noscript and every
// later line lets scripts call (they never block there): 7.0's entries
// without the flag.
var ScriptsMayBlock = func() []Command {
	var out []Command
	for _, n := range []string{"blpop", "brpop", "brpoplpush", "blmove", "bzpopmin", "bzpopmax"} {
		c := *byName[n]
		c.Flags = nil
		for _, f := range byName[n].Flags {
			if f != "noscript" {
				c.Flags = append(c.Flags, f)
			}
		}
		out = append(out, c)
	}
	return out
}()

// lineAdds are, per server line (named as lint's Config.Server names
// them), the lists above that line has, later lists overriding earlier.
var lineAdds = map[string][][]Command{
	"redis72":  {Since72, ScriptsMayBlock},
	"redis74":  {Since72, ScriptsMayBlock, WaitInScripts, HashFieldExpiry},
	"redis80":  {Since72, ScriptsMayBlock, WaitInScripts, HashFieldExpiry},
	"valkey72": {Since72, ScriptsMayBlock},
	"valkey80": {Since72, ScriptsMayBlock, WaitInScripts, Valkey80},
}

var lineTables = func() map[string]map[string]*Command {
	out := map[string]map[string]*Command{}
	for line, lists := range lineAdds {
		m := map[string]*Command{}
		for _, l := range lists {
			for i := range l {
				m[l[i].Name] = &l[i]
			}
		}
		out[line] = m
	}
	return out
}()

// LookupLine is Lookup in a server line's table: "redis72", "redis74",
// "redis80", "valkey72" or "valkey80" see what that line adds or changes;
// any other line (redis70, "") sees the table as it is.
func LookupLine(line, name string) (*Command, bool) {
	name = strings.ToLower(name)
	if c, ok := lineTables[line][name]; ok {
		return c, true
	}
	return Lookup(name)
}

// LineCommands returns what a server line adds to or changes in the
// table, by name (nil for redis70 and unknown lines).
func LineCommands(line string) map[string]*Command {
	m := lineTables[line]
	if m == nil {
		return nil
	}
	out := make(map[string]*Command, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// LookupLineSub is LookupSub in a server line's table.
func LookupLineSub(line, container, sub string) (*Command, bool) {
	return LookupLine(line, container+"|"+sub)
}
