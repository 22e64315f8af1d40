package simulate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// coverageExceptions are the commands a script may call that the
// simulator does not implement, each with the reason.
var coverageExceptions = map[string]string{
	// MIGRATE moves keys to another server; the simulator is one server
	// with no network.
	"migrate": "moves keys to another server",
}

// TestEveryScriptCommandIsImplemented reads COMMAND from redis-server
// 7.0 and calls, from a script, every command a script may call (no
// noscript, admin or pubsub flag; a container's subcommands likewise):
// none may be answered with the simulator's "not implemented", but for
// coverageExceptions. The failure lists every missing command at once.
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
		t.Fatalf("only %d commands a script may call in COMMAND; is this redis-server 7.0?", len(calls))
	}
	sim := diffNew(t, WithKeyDiscipline(false), WithCrossSlotCheck(false))
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
		notImplemented := err != nil && strings.Contains(err.Error(), "is not implemented")
		_, excepted := coverageExceptions[c.name]
		if notImplemented && !excepted {
			missing = append(missing, c.name)
		}
	}
	for name := range coverageExceptions {
		if !slices.ContainsFunc(calls, func(c call) bool { return c.name == name }) {
			t.Errorf("exception %q is not a command a script may call", name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("%d of %d commands a script may call are not implemented:\n%s", len(missing), len(calls), strings.Join(missing, " "))
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
