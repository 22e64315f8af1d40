package simulate

import (
	"context"
	"testing"
)

// TestFunctionLoadTimeout: a library whose top level never ends is
// stopped as Redis stops it, and the server stays usable.
func TestFunctionLoadTimeout(t *testing.T) {
	ctx := context.Background()
	s := New()
	err := s.Do(ctx, "FUNCTION", "LOAD", "#!lua name=spin\nwhile true do end").Err()
	if err == nil || err.Error() != "ERR Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Fatalf("loading an endless library: %v", err)
	}
	if err := s.Do(ctx, "FUNCTION", "LOAD", "#!lua name=ok\nredis.register_function('f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Do(ctx, "FCALL", "f", 0).Int64(); err != nil || v != 1 {
		t.Fatalf("FCALL f = %v, %v", v, err)
	}
}

// TestFunctionsSurviveFlushAllAndScriptFlush: FLUSHALL drops keys and
// SCRIPT FLUSH drops EVAL scripts; neither touches function libraries.
func TestFunctionsSurviveFlushAllAndScriptFlush(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.Do(ctx, "FUNCTION", "LOAD", "#!lua name=keep\nredis.register_function('k', function() return 'kept' end)").Err(); err != nil {
		t.Fatal(err)
	}
	s.Do(ctx, "FLUSHALL")
	s.Do(ctx, "SCRIPT", "FLUSH")
	if v, err := s.Do(ctx, "FCALL", "k", 0).Text(); err != nil || v != "kept" {
		t.Fatalf("FCALL k after FLUSHALL and SCRIPT FLUSH = %q, %v", v, err)
	}
}
