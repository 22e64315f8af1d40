package simulate

import (
	"context"
	"fmt"
	"testing"
)

// FuzzFunctionLoad: no library code panics the simulator, and whatever
// loads survives FUNCTION DUMP, FLUSH and RESTORE unchanged.
func FuzzFunctionLoad(f *testing.F) {
	for _, seed := range []string{
		"#!lua name=a\nredis.register_function('f', function() return 1 end)",
		"#!lua name=a\nredis.register_function{function_name='f', callback=function(k, a) return k end, flags={'no-writes'}, description='d'}",
		"#!lua name=a\nlocal x = {} for i = 1, 10 do x[i] = i end redis.register_function('g', function() return x end)",
		"#!lua name=\"a\"\nx", "#!lua\n", "#!lua name=a b=c\n", "return 1", "#!lua name=a\nredis.register_function(",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, code string) {
		ctx := context.Background()
		s := New()
		if err := s.Do(ctx, "FUNCTION", "LOAD", code).Err(); err != nil {
			return
		}
		before := fmt.Sprint(s.Do(ctx, "FUNCTION", "LIST", "WITHCODE").Val())
		dump, err := s.Do(ctx, "FUNCTION", "DUMP").Text()
		if err != nil {
			t.Fatalf("FUNCTION DUMP: %v", err)
		}
		s.Do(ctx, "FUNCTION", "FLUSH")
		if err := s.Do(ctx, "FUNCTION", "RESTORE", dump).Err(); err != nil {
			t.Fatalf("FUNCTION RESTORE of the simulator's own dump: %v", err)
		}
		if after := fmt.Sprint(s.Do(ctx, "FUNCTION", "LIST", "WITHCODE").Val()); after != before {
			t.Fatalf("FUNCTION LIST after DUMP/FLUSH/RESTORE:\n%s\nbefore:\n%s", after, before)
		}
	})
}

// FuzzScanArgs: no cursor, pattern or option makes the SCAN family or
// KEYS panic, and a pattern never loops.
func FuzzScanArgs(f *testing.F) {
	f.Add("0", "MATCH", "a*[b-", "COUNT", "3")
	f.Add("-1", "TYPE", "hash", "COUNT", "0")
	f.Add("18446744073709551615", "MATCH", "\\", "x", "y")
	f.Fuzz(func(t *testing.T, cursor, o1, v1, o2, v2 string) {
		ctx := context.Background()
		s := New()
		for i := 0; i < 20; i++ {
			s.Do(ctx, "SET", fmt.Sprint("k", i), i)
		}
		for i := 0; i < 600; i++ {
			s.Do(ctx, "HSET", "big", fmt.Sprint("f", i), i)
		}
		s.Do(ctx, "HSET", "small", "a", 1)
		s.Do(ctx, "SADD", "ints", 1, 2, 3)
		s.Do(ctx, "ZADD", "z", 1, "m")
		s.Do(ctx, "KEYS", v1)
		s.Do(ctx, "SCAN", cursor, o1, v1, o2, v2)
		for _, key := range []string{"big", "small", "ints", "z"} {
			for _, cmd := range []string{"HSCAN", "SSCAN", "ZSCAN"} {
				s.Do(ctx, cmd, key, cursor, o1, v1, o2, v2)
				s.Do(ctx, cmd, key, cursor, o1, v1)
			}
		}
	})
}
