package simulate

import "testing"

// FuzzStreamExec aims the engine's stream commands at a live stream: any
// argument list gets a reply or an error, never a panic, and the stream's
// entries stay in strictly increasing ID order.
func FuzzStreamExec(f *testing.F) {
	for _, seed := range []string{
		"XADD s 18446744073709551615-18446744073709551615 a 1", "XADD s 5-* a 1", "XRANGE s (0-0 (18446744073709551615",
		"XREVRANGE s + - COUNT 1", "XTRIM s MINID = 3", "XADD s MAXLEN ~ 1 LIMIT 5 * a 1", "XDEL s 2-1 2-1", "XRANGE s (18446744073709551615-18446744073709551615 +",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ks, now := execFuzzed(t, line, 3, []string{"XADD", "s", "1-1", "a", "1"}, []string{"XADD", "s", "2-1", "b", "2"})
		for _, d := range ks.Dump(now) {
			if d.Type != "stream" {
				continue
			}
			var prev streamID
			for i, e := range d.Value.([]StreamEntry) {
				id, ok := parseStreamID(e.ID, 0)
				if !ok || (i > 0 && !prev.less(id)) {
					t.Fatalf("%q: stream IDs out of order: %v", line, d.Value)
				}
				prev = id
			}
		}
	})
}
