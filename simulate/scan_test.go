package simulate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestScanCursorSurvivesChanges: an element present for a whole SCAN
// iteration is listed, whatever is added and removed between calls.
func TestScanCursorSurvivesChanges(t *testing.T) {
	ctx := context.Background()
	s := New()
	for i := 0; i < 200; i++ {
		s.Do(ctx, "SET", fmt.Sprint("stay", i), i)
		s.Do(ctx, "SET", fmt.Sprint("go", i), i)
	}
	seen := map[string]int{}
	cursor := "0"
	for calls := 0; calls < 1000; calls++ {
		v, err := s.Do(ctx, "SCAN", cursor, "COUNT", 5).Slice()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range v[1].([]any) {
			seen[k.(string)]++
		}
		// Churn between calls: delete some keys, add new ones.
		s.Do(ctx, "DEL", fmt.Sprint("go", calls))
		s.Do(ctx, "SET", fmt.Sprint("new", calls), 1)
		if cursor = v[0].(string); cursor == "0" {
			break
		}
	}
	if cursor != "0" {
		t.Fatal("SCAN did not finish in 1000 calls")
	}
	for i := 0; i < 200; i++ {
		if k := fmt.Sprint("stay", i); seen[k] != 1 {
			t.Errorf("%s listed %d times, want once", k, seen[k])
		}
	}
}

// TestUndefinedOrderShuffled: under UndefinedOrderShuffled a hash table's
// listing changes between calls; a listpack's stays in insertion order.
func TestUndefinedOrderShuffled(t *testing.T) {
	ctx := context.Background()
	s := New(WithUndefinedOrder(UndefinedOrderShuffled), WithSeed(7))
	s.Do(ctx, "HSET", "small", "z", 1, "a", 2, "m", 3)
	for i := 0; i < 600; i++ {
		s.Do(ctx, "HSET", "big", fmt.Sprint("f", i), i)
	}
	for i := 0; i < 5; i++ {
		if got := fmt.Sprint(s.Do(ctx, "HKEYS", "small").Val()); got != "[z a m]" {
			t.Fatalf("HKEYS small = %s, want insertion order [z a m]", got)
		}
	}
	first := fmt.Sprint(s.Do(ctx, "HKEYS", "big").Val())
	if first == fmt.Sprint(s.Do(ctx, "HKEYS", "big").Val()) {
		t.Error("HKEYS of a hash table came back in the same order twice under UndefinedOrderShuffled")
	}
	if s.ReplyOrder("HKEYS", "big") != OrderUndefined || s.ReplyOrder("HKEYS", "small") != OrderDefined {
		t.Error("ReplyOrder does not tell the hash table from the listpack")
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"h?llo", "hello", true}, {"h*llo", "heeello", true}, {"h[ae]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true}, {"h[b-a]llo", "hallo", true}, {"a\\*", "a*", true}, {"a\\*", "ab", false},
		{"ab[", "ab", false}, {"ab[c", "abc", true}, {"**", "", false}, {"*", "anything", true}, {"[\\]]", "]", true},
	} {
		if got := globMatch(c.pat, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}

// TestGlobMatchIsNotExponential: a pattern of many stars against a long
// string that does not match returns at once (Redis's skipLongerMatches).
func TestGlobMatchIsNotExponential(t *testing.T) {
	pattern := strings.Repeat("*a", 30) + "*b"
	s := strings.Repeat("a", 200)
	done := make(chan bool, 1)
	go func() { done <- globMatch(pattern, s) }()
	select {
	case got := <-done:
		if got {
			t.Fatal("matched a string without a 'b'")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("globMatch still running after 30s: exponential backtracking")
	}
}
