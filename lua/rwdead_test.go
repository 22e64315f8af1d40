package lua_test

import (
	"testing"
	"time"
)

// A writer does not wait behind readers whose holders died: the index
// finds their time passed, even when the lone reader (u, not in the
// index) died and live readers kept h's until ahead of its end.
func TestRWWriterSkipsDeadReaders(t *testing.T) {
	reg := scripts(t)
	for _, tc := range []struct {
		name string
		dead []string // readers that never unlock
	}{
		{"the lone reader died", []string{"a"}},
		{"indexed readers died", []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPileEnv(t, reg)
			for _, r := range tc.dead {
				if _, ok := e.rlock(r).(int64); !ok {
					t.Fatalf("reader %s refused", r)
				}
			}
			// A live reader joins two thirds into their TTL: h's until
			// moves to its end.
			e.clock.Advance(pileTTL * 2 / 3 * time.Millisecond)
			if _, ok := e.rlock("live").(int64); !ok {
				t.Fatal("the live reader was refused")
			}
			if got, ok := e.wlock("early").([]any); !ok || got[0] != int64(0) {
				t.Fatalf("a writer beside live readers = %v, want to wait", got)
			}
			// The dead readers' time passes; the live reader leaves.
			e.clock.Advance((pileTTL/3 + 1000) * time.Millisecond)
			if n := e.run("rw.runlock@8", pileRW, "r:live"); n != int64(1) {
				t.Fatalf("the live reader's runlock = %v", n)
			}
			// The writer takes the lock now, long before h's until.
			if token, ok := e.wlock("early").(int64); !ok || token == 0 {
				t.Fatalf("the writer after the dead readers' time = %v, want the lock", e.wlock("early"))
			}
			// No dead reader's record is left once a few calls swept.
			h := e.srv.Dump()
			for _, d := range h {
				if m, ok := d.Value.(map[string]string); ok && d.Key == pileLock {
					for _, r := range tc.dead {
						if m["r:"+r] != "" {
							t.Errorf("the dead reader %s's record is left: %v", r, m)
						}
					}
				}
			}
		})
	}
}
