package locks

import "testing"

// Grant and wake messages parse; anything else is not a grant.
func TestParseGrant(t *testing.T) {
	for _, c := range []struct {
		payload        string
		token          int64
		attempt, owner string
		ok             bool
	}{
		{"grant 17 a1b2 worker 7", 17, "a1b2", "worker 7", true}, // owners may hold spaces
		{"wake worker 7", 0, "", "worker 7", true},
		{"granted 17 worker 7", 0, "", "", false}, // no grant names no attempt
		{"grant 17  worker", 0, "", "", false},    // empty attempt
		{"grant 17 a1b2", 0, "", "", false},       // no owner
		{"grant 0 a o", 0, "", "", false},
		{"granted x o", 0, "", "", false},
		{"released", 0, "", "", false},
	} {
		token, attempt, owner, ok := parseGrant(c.payload)
		if ok != c.ok || (ok && (token != c.token || attempt != c.attempt || owner != c.owner)) {
			t.Errorf("parseGrant(%q) = %d, %q, %q, %v; want %d, %q, %q, %v", c.payload, token, attempt, owner, ok, c.token, c.attempt, c.owner, c.ok)
		}
	}
}

// A grant naming an attempt goes to that call; the owner's other calls are
// told to look again (0); other owners hear nothing. A wake goes to every
// call of the owner.
func TestDeliverRoutesByAttempt(t *testing.T) {
	h := &grantHub{subs: map[string]*grantSub{}}
	sub := &grantSub{ready: make(chan struct{}), waiters: map[string][]grantCall{}}
	close(sub.ready)
	h.subs["ch"] = sub
	first, second := h.add(sub, "w", "att-1"), h.add(sub, "w", "att-2")
	other := h.add(sub, "x", "att-3")
	read := func(ch chan int64) (int64, bool) {
		select {
		case v := <-ch:
			return v, true
		default:
			return 0, false
		}
	}
	h.deliver("ch", "grant 42 att-2 w")
	if v, ok := read(second); !ok || v != 42 {
		t.Errorf("the named call got %d, %v; want 42", v, ok)
	}
	if v, ok := read(first); !ok || v != 0 {
		t.Errorf("the owner's other call got %d, %v; want 0 (look again)", v, ok)
	}
	if _, ok := read(other); ok {
		t.Error("another owner's call was woken")
	}
	h.deliver("ch", "wake w")
	for i, ch := range []chan int64{first, second} {
		if v, ok := read(ch); !ok || v != 0 {
			t.Errorf("call %d of the owner got %d, %v from a wake; want 0 (look again)", i+1, v, ok)
		}
	}
}
