package simulate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// FuzzRunSource runs arbitrary script source, covering the compiler, the
// sandbox and the Lua-to-reply conversion: no input may panic or wedge the
// server, and every run ends in a reply or an error.
func FuzzRunSource(f *testing.F) {
	for _, tc := range sandboxCases {
		f.Add(tc.src)
	}
	f.Add("return {map = {a = {set = {1, 2}}, b = {double = 0/0}}}")
	f.Add("local t = {} t[1] = t return t")
	f.Add("return {verbatim_string = {format = 'txt', string = 'x'}}")
	f.Add("local ok, e = pcall(string.rep) return e")
	f.Add("return {map = {[{1}] = 1, [{set = {a = true}}] = 2}}")
	f.Add("return xpcall(function() error({}) end, function(e) return e end)")
	s := New(WithKeyDiscipline(false), WithCrossSlotCheck(false), WithTraceLimit(16))
	f.Fuzz(func(t *testing.T, src string) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _ = s.RunSource(ctx, src, []string{"k1", "k2"}, "a", 1).Result()
		// The server must still work after whatever the input did.
		if v, err := s.RunSource(context.Background(), "return 1", nil).Int64(); err != nil || v != 1 {
			t.Fatalf("server broken after %q: %v, %v", src, v, err)
		}
	})
}

// TestContextInterruptsScript: a script that never ends is stopped by its
// context, and the server stays usable.
func TestContextInterruptsScript(t *testing.T) {
	s := New()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := s.RunSource(ctx, "while true do end", nil).Err()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want one wrapping context.DeadlineExceeded", err)
	}
	err = s.RunSource(ctx, "local ok = pcall(function() while true do end end) while true do end", nil).Err()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("inside pcall: err = %v; want one wrapping context.DeadlineExceeded", err)
	}
	if v, err := s.RunSource(context.Background(), "return 2", nil).Int64(); err != nil || v != 2 {
		t.Fatalf("after the interruption: %d, %v", v, err)
	}
}
