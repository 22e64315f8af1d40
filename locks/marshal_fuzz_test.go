package locks_test

import (
	"strings"
	"testing"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// Resume takes a string from outside the process (a queue message, a file):
// whatever it is given, it returns a lease or an error that says it came
// from Resume, never panics, and a lease it returns marshals back to one
// that Resume reads the same.
func FuzzResume(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","owner":"o","token":1,"ttl_ms":1000}`,
		`{"name":"a","owner":"o\tcall","token":7,"ttl_ms":1000,"kind":"write"}`,
		`{"name_b64":"aW52//4=","owner":"o","token":1,"ttl_ms":1000,"kind":"read"}`,
		`{"name":"s","owner":"o","token":1,"ttl_ms":1000,"kind":"permits","count":2}`,
		`{"name":"a","owner":"o","token":1,"ttl_ms":1000,"attempt":"x","fair":true}`,
		`{"name":"{a}","owner":"o","token":1,"ttl_ms":1000}`,
		`{"name":"a","owner":"o","token":9223372036854775807,"ttl_ms":9223372036854775807}`,
		`{"name":"a","owner":"o","token":1.5,"ttl_ms":1e3}`,
		`null`, `[]`, `"x"`, ``,
	} {
		f.Add(seed)
	}
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close() })
	f.Fuzz(func(t *testing.T, s string) {
		l, err := c.Resume(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "locks: Resume: ") {
				t.Fatalf("Resume(%q) = %v, want an error that names Resume", s, err)
			}
			return
		}
		if l.Name() == "" || l.Owner() == "" || l.Token() < 1 {
			t.Fatalf("Resume(%q) made a lease with name %q, owner %q, token %d", s, l.Name(), l.Owner(), l.Token())
		}
		again, err := l.Marshal()
		if err != nil {
			t.Fatalf("Marshal of the lease Resume(%q) made: %v", s, err)
		}
		back, err := c.Resume(again)
		if err != nil {
			t.Fatalf("Resume(Marshal(Resume(%q))) = %v", s, err)
		}
		if back.Name() != l.Name() || back.Owner() != l.Owner() || back.Token() != l.Token() {
			t.Fatalf("round trip of %q changed the lease: %q %q %d, then %q %q %d", s, l.Name(), l.Owner(), l.Token(), back.Name(), back.Owner(), back.Token())
		}
		if again2, _ := back.Marshal(); again2 != again {
			t.Fatalf("round trip of %q is not stable:\n%s\n%s", s, again, again2)
		}
	})
}
