package locks_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

// A label with control bytes, invalid UTF-8 and a quote must not hide the
// holder (issue 13 item 6): Inspect reports host, pid and the label.
func TestSuiteInspectOddLabel(t *testing.T) {
	const label = "\x00\xff\""
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		if _, err := mutex(t, c, "odd", locks.WithLabel(label), locks.WithTTL(time.Minute)).Lock(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := c.Inspect(ctx, "odd")
		if err != nil {
			t.Fatal(err)
		}
		h := info.Holder
		// A JSON writer turns the invalid byte into U+FFFD; both are fine,
		// an empty holder is not.
		if h.PID != os.Getpid() || h.Host == "" || (h.Label != label && h.Label != strings.ToValidUTF8(label, "\uFFFD")) {
			t.Fatalf("Inspect holder = %#v, want host, pid %d and label %q", h, os.Getpid(), label)
		}
	})
}

// Whatever sits in the lock's meta field, Inspect reports something.
func TestInspectStoredMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, stored string
		want         locks.Metadata
	}{
		{"json", `{"host":"h1","pid":7,"label":"nightly"}`, locks.Metadata{Host: "h1", PID: 7, Label: "nightly"}},
		{"json escapes", `{"host":"h1","pid":7,"label":"\u0000\ufffd\""}`, locks.Metadata{Host: "h1", PID: 7, Label: "\x00\uFFFD\""}},
		{"go quoted", `{"host":"h1","pid":7,"label":"\x00\xff\""}`, locks.Metadata{Host: "h1", PID: 7, Label: "\x00\xff\""}},
		{"go quoted, key text inside a value", `{"host":"\"label\":\"x\"","pid":8,"label":"\a"}`, locks.Metadata{Host: `"label":"x"`, PID: 8, Label: "\a"}},
		{"other order", `{"label":"\x01", "pid": 9, "host":"h"}`, locks.Metadata{Host: "h", PID: 9, Label: "\x01"}},
		{"not metadata", `written by a shell script`, locks.Metadata{Raw: "written by a shell script"}},
		{"broken", `{"host":"h1`, locks.Metadata{Raw: `{"host":"h1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mr := miniredis.RunT(t)
			mr.HSet("{job}", "owner", "someone", "count", "1", "fence", "3", "meta", tc.stored)
			rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { rc.Close() })
			c, err := locks.New(rc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			info, err := c.Inspect(context.Background(), "job")
			if err != nil {
				t.Fatal(err)
			}
			if !info.Held || info.Owner != "someone" || info.Token != 3 || info.Holder != tc.want {
				t.Fatalf("Inspect = %#v\nwant holder %#v", info, tc.want)
			}
		})
	}
}

func TestInspectNilContext(t *testing.T) {
	c, done := newExampleClient()
	defer done()
	//lint:ignore SA1012 the point is a nil context
	_, err := c.Inspect(nil, "job") //nolint:staticcheck
	if err == nil || !strings.Contains(err.Error(), "nil context") {
		t.Fatalf("Inspect(nil) = %v, want an error naming the nil context", err)
	}
}

// After Unlock the lock hash stays, without owner, to keep the last token
// for one lease (mutex.release@3): Inspect must still say "free", with no
// token, holder or TTL left over from the released lease.
func TestSuiteInspectAfterUnlock(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		l, err := mutex(t, c, "released", locks.WithTTL(time.Minute)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := c.Inspect(ctx, "released")
		if err != nil {
			t.Fatal(err)
		}
		if info.Held || info.Owner != "" || info.Token != 0 || info.TTL != 0 || info.Holder != (locks.Metadata{}) {
			t.Fatalf("Inspect after Unlock = %#v, want a free lock", info)
		}
	})
}
