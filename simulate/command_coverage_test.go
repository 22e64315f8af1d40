package simulate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/redlua/redlua/internal/cmdtable"
)

// coverageExceptions are the commands a script may call that the
// simulator does not implement, each with the reason.
var coverageExceptions = map[string]string{
	// MIGRATE moves keys to another server; the simulator is one server
	// with no network.
	"migrate": "moves keys to another server",
}

// profileCoverageExceptions are, per profile, the commands of its line a
// script may call that the simulator does not implement: a script calling
// one under that profile fails with "ERR simulate: command '...' is not
// implemented" (not with the unknown-command error an older line gives).
var profileCoverageExceptions = map[Profile]map[string]string{
	Redis74: hashFieldExpiry,
	Redis80: hashFieldExpiry,
}

// hashFieldExpiry is Redis 7.4's hash field expiry, which the simulator
// does not model: per-field TTLs touch every hash command, OBJECT ENCODING
// (listpackex) and DUMP (RDB types 24 and 25).
var hashFieldExpiry = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"hexpire", "hexpireat", "hpexpire", "hpexpireat", "hpersist", "hexpiretime", "hpexpiretime", "httl", "hpttl"} {
		m[n] = "Redis 7.4's hash field expiry is not simulated"
	}
	return m
}()

// coverageException reports why profile p does not implement command
// name, or "".
func coverageException(p Profile, name string) string {
	if why, ok := coverageExceptions[name]; ok {
		return why
	}
	return profileCoverageExceptions[p][name]
}

// notCovered reports whether a script's call of a command the server lets
// scripts call failed for want of the simulator's command: not
// implemented, unknown, or refused as a command scripts may not call.
func notCovered(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "is not implemented") || strings.Contains(msg, "command called from script") ||
		strings.Contains(msg, "is not allowed from script")
}

// TestEveryScriptCommandIsImplemented reads COMMAND from the server under
// test and calls, from a script, every command a script may call (no
// noscript, admin or pubsub flag; a container's subcommands likewise)
// under the server's profile: none may be answered with the simulator's
// "not implemented", an unknown-command error or a refusal to run it from
// a script, but for coverageExceptions and the profile's
// profileCoverageExceptions. The failure lists every missing command at
// once.
func TestEveryScriptCommandIsImplemented(t *testing.T) {
	srv := diffStandalone(t)
	ctx := context.Background()
	raw, err := srv.Client().Do(ctx, "COMMAND").Slice()
	if err != nil {
		t.Fatal(err)
	}
	callable := func(info []any) bool {
		for _, f := range info[2].([]any) {
			switch f {
			case "noscript", "admin", "pubsub":
				return false
			}
		}
		return true
	}
	type call struct {
		name string
		argv []string
	}
	var calls []call
	for _, x := range raw {
		info := x.([]any)
		if !callable(info) {
			continue
		}
		name := info[0].(string)
		subs := info[9].([]any)
		if len(subs) == 0 {
			calls = append(calls, call{name, dummyArgs(name, int(info[1].(int64)))})
			continue
		}
		for _, s := range subs {
			sub := s.([]any)
			if !callable(sub) {
				continue
			}
			full := sub[0].(string)
			argv := dummyArgs(full, int(sub[1].(int64)))
			argv[0], argv[1], _ = strings.Cut(full, "|")
			calls = append(calls, call{full, argv})
		}
	}
	if len(calls) < 150 {
		t.Fatalf("only %d commands a script may call in COMMAND; is this a redis-server 7.0 or later?", len(calls))
	}
	sim := diffNew(t, WithKeyDiscipline(false), WithCrossSlotCheck(false))
	p := sim.Profile()
	var missing []string
	for _, c := range calls {
		var b strings.Builder
		b.WriteString("return redis.pcall(")
		for i, a := range c.argv {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", a)
		}
		b.WriteString(")")
		_, err := sim.RunSource(ctx, b.String(), nil).Result()
		if !notCovered(err) {
			continue
		}
		if coverageException(p, c.name) == "" {
			missing = append(missing, c.name)
		} else if !strings.Contains(err.Error(), "is not implemented") {
			t.Errorf("%s under %s, an exception, fails with %q, not with the simulator's not implemented", c.name, p, err)
		}
	}
	for name := range coverageExceptions {
		if !slices.ContainsFunc(calls, func(c call) bool { return c.name == name }) {
			t.Errorf("exception %q is not a command a script may call", name)
		}
	}
	for name := range profileCoverageExceptions[p] {
		if !slices.ContainsFunc(calls, func(c call) bool { return c.name == name }) {
			t.Errorf("exception %q of %s is not a command a script may call on %s", name, p, srv.profile)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("%d of %d commands a script may call on %s are not implemented:\n%s", len(missing), len(calls), p, strings.Join(missing, " "))
	}
}

// TestLaterCommandsAreImplemented calls, under every profile, each
// command its line adds to Redis 7.0's table (cmdtable.Since72 and the rest)
// that a script may call, without a server: each runs, or is one of the
// profile's listed exceptions and says it is not implemented. A profile
// without the command answers as its line does, with the unknown-command
// error.
func TestLaterCommandsAreImplemented(t *testing.T) {
	ctx := context.Background()
	for p := Profile(0); p < profileCount; p++ {
		sim := New(WithServer(p), WithKeyDiscipline(false), WithCrossSlotCheck(false))
		for _, list := range [][]cmdtable.Command{cmdtable.Since72, cmdtable.ScriptsMayBlock, cmdtable.WaitInScripts, cmdtable.HashFieldExpiry, cmdtable.Valkey80} {
			for _, c := range list {
				argv := dummyArgs(c.Name, c.Arity)
				if c.Container != "" {
					argv[0], argv[1], _ = strings.Cut(c.Name, "|")
				}
				var b strings.Builder
				b.WriteString("return redis.pcall(")
				for i, a := range argv {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "%q", a)
				}
				b.WriteString(")")
				_, err := sim.RunSource(ctx, b.String(), nil).Result()
				own, has := p.lookupCommand(argv)
				switch {
				case !has:
					if err == nil || !strings.Contains(err.Error(), "command called from script") {
						t.Errorf("%s: %s from a script: %v, want the unknown-command error", p, c.Name, err)
					}
				case own.DeniedInScripts():
					if err == nil || !strings.Contains(err.Error(), "not allowed from script") {
						t.Errorf("%s: %s from a script: %v, want the refusal of a noscript command", p, c.Name, err)
					}
				case coverageException(p, c.Name) != "":
					if err == nil || !strings.Contains(err.Error(), "is not implemented") {
						t.Errorf("%s: %s from a script: %v, want the simulator's not implemented", p, c.Name, err)
					}
				case notCovered(err):
					t.Errorf("%s: %s from a script: %v", p, c.Name, err)
				}
			}
		}
	}
}

// dummyArgs makes a call of the command with the fewest arguments its
// arity allows, each "1".
func dummyArgs(name string, arity int) []string {
	n := arity
	if n < 0 {
		n = -n
	}
	argv := []string{name}
	for len(argv) < n {
		argv = append(argv, "1")
	}
	return argv
}
