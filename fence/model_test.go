package fence_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/explore"
	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/registry"
)

// Model check of fence.write@1 (docs/modelcheck.md): holders take a lock
// whose tokens always grow (testdata/model.acquire.v1.lua), raise the
// fence (Advance) and write through fence.write twice, while the clock
// jumps past leases and a holder pauses past its own: a paused holder
// writes with a token a newer holder has passed.

const (
	mfTTL   = 100 * time.Millisecond
	mfFence = "{t}fence:job"
	mfData  = "{t}data"
	mfLock  = "{t}lock"
	mfLast  = "{t}last"
)

// mfHolder is a holder: acquire, advance (when advance), write, write,
// and again. fenced is set once the holder's token is on the fence (after
// Advance; without Advance, at once: the holder believes its writes are
// fenced), refused when the last write was refused.
func mfHolder(name string, acquire, write *registry.Script, advance bool) explore.Actor {
	args := func(c *explore.Ctx, cmds ...any) []any {
		return append([]any{c.Var("token"), name, 0}, cmds...)
	}
	writeStep := func(label, next string) explore.Step {
		return explore.Step{Label: label, Script: write, Keys: []string{mfFence, mfData},
			Call: func(c *explore.Ctx) []any {
				return args(c, "SET", 2, 1, fmt.Sprintf("%s:%d", name, c.Var("token")))
			},
			Then: func(c *explore.Ctx) string {
				c.SetVar("refused", 0)
				if c.Elem(0) != 1 {
					c.SetVar("refused", 1)
				}
				return next
			}}
	}
	first := "write 1"
	if advance {
		first = "advance"
	}
	return explore.Actor{Name: name, Vars: []string{"token", "fenced", "refused"}, Steps: []explore.Step{
		{Label: "acquire", Script: acquire, Keys: []string{mfLock, mfLast}, Args: []any{name, mfTTL.Milliseconds()},
			Then: func(c *explore.Ctx) string {
				if c.Int() == 0 {
					return "acquire"
				}
				c.Acquire(mfTTL)
				c.SetVar("token", c.Int())
				c.SetVar("refused", 0)
				c.SetVar("fenced", 0)
				if !advance {
					c.SetVar("fenced", 1)
				}
				return first
			}},
		{Label: "advance", Script: write, Keys: []string{mfFence}, Call: func(c *explore.Ctx) []any { return args(c) },
			Then: func(c *explore.Ctx) string {
				if c.Elem(0) == 1 {
					c.SetVar("fenced", 1)
				}
				return "write 1"
			}},
		writeStep("write 1", "write 2"),
		writeStep("write 2", "acquire"),
	}}
}

// mfWritten returns the data's owner and token ("", 0 when there is none).
func mfWritten(v *explore.View) (string, int64) {
	k, ok := v.Key(mfData)
	if !ok {
		return "", 0
	}
	s, _ := k.Value.(string)
	owner, tok, _ := strings.Cut(s, ":")
	n, _ := strconv.ParseInt(tok, 10, 64)
	return owner, n
}

func mfFenceToken(v *explore.View) int64 {
	k, ok := v.Key(mfFence)
	if !ok {
		return 0
	}
	h, _ := k.Value.(map[string]string)
	n, _ := strconv.ParseInt(h["t"], 10, 64)
	return n
}

func mfKeyInt(v *explore.View, key string) int64 {
	k, ok := v.Key(key)
	if !ok {
		return 0
	}
	s, _ := k.Value.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

var mfActors = []string{"a", "b"}

// The properties fencing promises.
var mfInvariants = []explore.Invariant{
	{Name: "the fence never goes back", Step: func(before, after *explore.View) error {
		if b, a := mfFenceToken(before), mfFenceToken(after); a < b {
			return fmt.Errorf("the fence went from token %d back to %d", b, a)
		}
		return nil
	}},
	{Name: "accepted writes in token order", Step: func(before, after *explore.View) error {
		o1, t1 := mfWritten(before)
		o2, t2 := mfWritten(after)
		if (o1 != o2 || t1 != t2) && t1 != 0 && (t2 < t1 || t2 == t1 && o1 != o2) {
			return fmt.Errorf("%s's write under token %d replaced %s's under token %d", o2, t2, o1, t1)
		}
		return nil
	}},
	{Name: "no write lands below a fenced holder's token", Step: func(before, after *explore.View) error {
		o1, t1 := mfWritten(before)
		o2, t2 := mfWritten(after)
		if o1 == o2 && t1 == t2 {
			return nil
		}
		for _, x := range mfActors {
			if after.Var(x, "fenced") == 1 && t2 < after.Var(x, "token") {
				return fmt.Errorf("%s's write under token %d landed after %s fenced token %d", o2, t2, x, after.Var(x, "token"))
			}
		}
		return nil
	}},
	{Name: "a write is refused only after a newer grant", Check: func(v *explore.View) error {
		last := mfKeyInt(v, mfLast)
		for _, x := range mfActors {
			if v.Var(x, "refused") == 1 && v.Var(x, "token") >= last {
				return fmt.Errorf("%s's write under token %d was refused, and no newer token was granted (last %d)", x, v.Var(x, "token"), last)
			}
		}
		return nil
	}},
}

func mfModel(name string, write *registry.Script, advance bool) *explore.Model {
	acquire := mfScript("model.acquire@1")
	return &explore.Model{
		Name:       name,
		Actors:     []explore.Actor{mfHolder("a", acquire, write, advance), mfHolder("b", acquire, write, advance)},
		Invariants: mfInvariants,
		Bounds:     explore.Bounds{MaxSteps: 5, MaxTicks: 2, MaxPauses: 1},
	}
}

// mfScript is a script of testdata; the files are this package's own, so
// an error is a bug in them.
func mfScript(id string) *registry.Script {
	reg, err := registry.New(os.DirFS("testdata"))
	if err == nil {
		var s *registry.Script
		if s, err = reg.Lookup(id); err == nil {
			return s
		}
	}
	panic(err)
}

// mfBreak is the script with one condition changed.
func mfBreak(t *testing.T, s *registry.Script, from, to string) *registry.Script {
	t.Helper()
	return explore.Mutate(t, s, from, to)
}

func mfMustFail(t *testing.T, m *explore.Model, property string) {
	t.Helper()
	explore.CheckFails(t, m, property)
}

func TestModelFenceWrite(t *testing.T) {
	write, err := fence.Script()
	if err != nil {
		t.Fatal(err)
	}
	explore.Check(t, mfModel("fence.write@1, 2 holders with Advance", write, true))

	t.Run("broken", func(t *testing.T) {
		mfMustFail(t, mfModel("fence.write reading the owner as the token", mfBreak(t, write,
			"local high = tonumber(cur[1]) or 0", "local high = tonumber(cur[2]) or 0"), true),
			"the fence never goes back")
		mfMustFail(t, mfModel("fence.write refusing an equal token from the same owner", mfBreak(t, write,
			"(token == high and cur[2] ~= owner)", "token == high"), true),
			"a write is refused only after a newer grant")
		mfMustFail(t, mfModel("fence.write that never raises the fence", mfBreak(t, write,
			"redis.call('HSET', fence, 't', string.format('%d', token)", "redis.call('HSET', fence, 't', string.format('%d', high)"), true),
			"no write lands below a fenced holder's token")
		// Not a broken script but the limit docs/fencing.md names: without
		// Advance, a stale write lands before the new holder's first one.
		mfMustFail(t, mfModel("fence.write@1 without Advance", write, false),
			"no write lands below a fenced holder's token")
	})
}
