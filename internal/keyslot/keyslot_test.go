package keyslot

import "testing"

// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
func TestOf(t *testing.T) {
	cases := map[string]int{
		"":                     0,
		"123456789":            12739, // the spec's CRC16 check value 0x31C3 mod 16384
		"foo":                  12182,
		"{user1000}.following": Of("user1000"),
		"foo{}{bar}":           Of("foo{}{bar}"),
		"{}":                   Of("{}"),
		"a{b}c":                Of("b"),
	}
	for key, want := range cases {
		if got := Of(key); got != want {
			t.Errorf("Of(%q) = %d, want %d", key, got, want)
		}
	}
	if Of("foo{}{bar}") == Of("bar") {
		t.Error("an empty {} must not make the next {..} the hash tag")
	}
}
