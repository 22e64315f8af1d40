package simulate

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRandomRepliesFollowRedisRules checks what Redis promises of
// HRANDFIELD and RANDOMKEY, which no differential test can compare: the
// counts, distinct or repeated fields, and that a fresh server draws the
// same replies (the generator is seeded).
func TestRandomRepliesFollowRedisRules(t *testing.T) {
	ctx := context.Background()
	draw := func() []any {
		s := New()
		for i := 0; i < 10; i++ {
			s.Do(ctx, "HSET", "h", fmt.Sprint("f", i), i)
			s.Do(ctx, "SET", fmt.Sprint("k", i), i)
		}
		var out []any
		for _, c := range [][]any{{"HRANDFIELD", "h"}, {"HRANDFIELD", "h", 4}, {"HRANDFIELD", "h", -25}, {"HRANDFIELD", "h", 3, "WITHVALUES"}, {"HRANDFIELD", "h", -3, "WITHVALUES"}, {"RANDOMKEY"}} {
			v, err := s.Do(ctx, c...).Result()
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			out = append(out, v)
		}
		return out
	}
	first := draw()
	if diff := cmp.Diff(first, draw()); diff != "" {
		t.Fatalf("two fresh servers drew differently:\n%s", diff)
	}
	distinct := func(xs []any) bool {
		seen := map[any]bool{}
		for _, x := range xs {
			if seen[x] {
				return false
			}
			seen[x] = true
		}
		return true
	}
	if got := first[1].([]any); len(got) != 4 || !distinct(got) {
		t.Errorf("HRANDFIELD h 4 = %v, want 4 distinct fields", got)
	}
	if got := first[2].([]any); len(got) != 25 || distinct(got) {
		t.Errorf("HRANDFIELD h -25 = %v, want 25 fields with repeats (10 exist)", got)
	}
	for _, i := range []int{3, 4} {
		pairs := first[i].([]any)
		if len(pairs) != 3 {
			t.Fatalf("reply %d = %v, want 3 [field, value] pairs", i, pairs)
		}
		for _, p := range pairs {
			fv := p.([]any)
			if fmt.Sprint("f", fv[1]) != fv[0] {
				t.Errorf("pair %v: the value is not the field's", fv)
			}
		}
	}
	keys := map[any]bool{"h": true}
	for i := 0; i < 10; i++ {
		keys[fmt.Sprint("k", i)] = true
	}
	if !keys[first[5]] {
		t.Errorf("RANDOMKEY = %v, want one of the keys", first[5])
	}
}

// TestSelectLastsForDoNotForScripts: a direct SELECT holds for the
// following direct calls and scripts, as on one connection; a script's
// SELECT ends with the script.
func TestSelectLastsForDoNotForScripts(t *testing.T) {
	ctx := context.Background()
	s := New()
	s.Do(ctx, "SET", "k", "db0")
	s.Do(ctx, "SELECT", 3)
	s.Do(ctx, "SET", "k", "db3")
	if v := s.RunSource(ctx, "return redis.call('GET', KEYS[1])", []string{"k"}).Val(); v != "db3" {
		t.Fatalf("a script after SELECT 3 read %v, want db3", v)
	}
	if v := s.RunSource(ctx, "redis.call('SELECT', 0); return redis.call('GET', KEYS[1])", []string{"k"}).Val(); v != "db0" {
		t.Fatalf("a script's SELECT 0 read %v, want db0", v)
	}
	if v := s.Do(ctx, "GET", "k").Val(); v != "db3" {
		t.Fatalf("after the script a direct GET read %v, want db3 (the script's SELECT must not last)", v)
	}
	if got := s.Dump(); len(got) != 1 || got[0].Value != "db3" {
		t.Fatalf("Dump = %v, want the selected database's one key", got)
	}
}
