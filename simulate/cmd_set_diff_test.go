package simulate

import (
	"context"
	"strings"
	"testing"
)

// setCases cover the set-algebra commands, SMOVE and SRANDMEMBER: each
// option, both encodings (intset, hashtable) and invalid calls. Replies
// whose order Redis leaves undefined (a hash table's) are only compared
// where they hold at most one member; larger ones go through the *STORE
// forms, whose keys the harness compares as sets.
var setCases = [][]string{
	// intsets: replies in numeric order
	{"SADD a 3 1 2 10", "SADD b 2 3 4 -5", "SADD c 3 2 99", "SINTER a b", "SINTER a b c", "SINTER b", "SUNION a b c", "SDIFF a b", "SDIFF a b c", "SDIFF b a", "SINTERCARD 2 a b", "SINTERCARD 3 a b c LIMIT 1", "SINTERCARD 1 a LIMIT 0"},
	{"SADD a 3 1 2", "SINTER a missing", "SUNION missing a", "SDIFF missing a", "SDIFF a missing", "SINTERCARD 2 a missing", "SINTER missing", "SUNION missing other", "SDIFF a a", "SINTER a a", "SUNION a a"},
	{"SADD a 3 1 2", "SADD b 2 3 4", "SINTERSTORE d a b", "OBJECT ENCODING d", "SUNIONSTORE u a b", "OBJECT ENCODING u", "SDIFFSTORE f a b", "SMEMBERS f", "SDIFFSTORE f b b", "EXISTS f", "SET s v EX 100", "SINTERSTORE s a b", "TTL s", "TYPE s", "SINTERSTORE s a missing", "EXISTS s"},
	// hash tables: compared through the *STORE forms and one-member replies
	{"SADD a x y 1 2", "SADD b y z 2", "SINTERSTORE d a b", "OBJECT ENCODING d", "SCARD d", "SINTER a b z", "SADD z y", "SINTER a b z", "SINTER z a", "SUNIONSTORE u a b", "OBJECT ENCODING u", "SDIFFSTORE f a b", "OBJECT ENCODING f", "SREM a 1", "SDIFF a b z"},
	// SDIFF's second algorithm keeps a hash table though only integers remain
	{"SADD a 1 2 3 4 5 6 7 8 x", "SADD b x", "SADD c 9", "SDIFFSTORE d a b c", "OBJECT ENCODING d", "SDIFFSTORE e a b", "OBJECT ENCODING e", "SDIFFSTORE f a b b b b b b b b", "OBJECT ENCODING f"},
	{"SADD a x 1", "SADD b x", "SDIFFSTORE d a b", "OBJECT ENCODING d", "SDIFF a b"},
	// wrong types: SINTER checks every key before it looks at a missing one
	{"SET s v", "SADD a 1", "SINTER a missing s", "SINTER missing s", "SINTERSTORE d a s", "SINTERCARD 2 missing s", "SUNION a s", "SDIFF missing s", "SUNIONSTORE s a", "TYPE s", "SDIFFSTORE d s a"},
	{"SINTERCARD 0 a", "SINTERCARD -1 a", "SINTERCARD x a", "SINTERCARD 3 a b", "SINTERCARD 1 a LIMIT -1", "SINTERCARD 1 a LIMIT x", "SINTERCARD 1 a LIMIT", "SINTERCARD 1 a FOO 1", "SINTERCARD 1 a b", "SINTERCARD 1 a LIMIT 1 LIMIT 2", "SINTER", "SUNIONSTORE d", "SINTERCARD 1"},
	// SMOVE
	{"SADD a 1 2", "SADD b x", "SMOVE a b 1", "SMOVE a b 9", "SMOVE a c 2", "EXISTS a", "OBJECT ENCODING c", "SMOVE missing b 1", "SMOVE c c 2", "SMOVE c c 3", "SMOVE b c x", "OBJECT ENCODING c", "SMOVE c b 2", "SCARD b"},
	{"SET s v", "SADD a 1", "SMOVE missing s 1", "SMOVE s a 1", "SMOVE a s 1", "SMOVE a s 2", "SMEMBERS a"},
	// SRANDMEMBER: what does not depend on the draw
	{"SADD a 3 1 2", "SRANDMEMBER a 3", "SRANDMEMBER a 100", "SRANDMEMBER a 0", "SRANDMEMBER missing", "SRANDMEMBER missing 5", "SRANDMEMBER missing -5", "SADD one 7", "SRANDMEMBER one", "SRANDMEMBER one -3", "SRANDMEMBER one 1", "SADD h x", "SRANDMEMBER h -2", "SRANDMEMBER h 5"},
	{"SADD a 1", "SRANDMEMBER a x", "SRANDMEMBER a -0", "SRANDMEMBER a 1 2", "SRANDMEMBER a -9223372036854775808", "SRANDMEMBER a 9223372036854775807", "SRANDMEMBER missing -9223372036854775807", "SRANDMEMBER a 1.5", "SET s v", "SRANDMEMBER s", "SRANDMEMBER s 2", "SRANDMEMBER s x"},
}

func TestSetCommandsMatchRedis(t *testing.T) { runCommandCases(t, setCases) }

// TestSRandMemberDraws checks the draws no fixed reply can: distinct
// members for a positive count below the size, repetition allowed for a
// negative one, every pick a member, and the same picks from two servers
// given the same commands.
func TestSRandMemberDraws(t *testing.T) {
	ctx := context.Background()
	picks := func() [][]any {
		s := New()
		s.Do(ctx, "SADD", "a", "1", "2", "3", "4", "5", "x")
		var out [][]any
		for _, c := range []string{"2", "5", "-20", "1", "-1"} {
			r, err := s.Do(ctx, "SRANDMEMBER", "a", c).Slice()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	first, second := picks(), picks()
	members := map[any]bool{"1": true, "2": true, "3": true, "4": true, "5": true, "x": true}
	for i, want := range []int{2, 5, 20, 1, 1} {
		got := first[i]
		if len(got) != want {
			t.Fatalf("draw %d: %d members, want %d", i, len(got), want)
		}
		seen := map[any]bool{}
		for _, m := range got {
			if !members[m] {
				t.Fatalf("draw %d: %v is not a member", i, m)
			}
			if seen[m] && i < 2 {
				t.Fatalf("draw %d with a positive count repeats %v: %v", i, m, got)
			}
			seen[m] = true
		}
		if len(seen) < 2 && i == 2 {
			t.Fatalf("20 draws with repetition gave only %v", got)
		}
		for j := range got {
			if got[j] != second[i][j] {
				t.Fatalf("draw %d differs between two fresh servers: %v and %v", i, got, second[i])
			}
		}
	}
}

// TestRandomPicksBounded checks that a negative count too large to hold
// in memory is refused with an error naming the bound, where Redis would
// stream that many picks.
func TestRandomPicksBounded(t *testing.T) {
	ctx := context.Background()
	s := New()
	s.Do(ctx, "SADD", "s", "1")
	s.Do(ctx, "ZADD", "z", "1", "m")
	for _, args := range [][]any{{"SRANDMEMBER", "s", "-9223372036854775807"}, {"ZRANDMEMBER", "z", "-4194305"}} {
		err := s.Do(ctx, args...).Err()
		if err == nil || !strings.Contains(err.Error(), "at most 4194304") {
			t.Fatalf("%v: got %v, want the simulator's bound", args, err)
		}
	}
	if n, err := s.Do(ctx, "SRANDMEMBER", "s", "-100000").Slice(); err != nil || len(n) != 100000 {
		t.Fatalf("a count within the bound: %d picks, %v", len(n), err)
	}
}
