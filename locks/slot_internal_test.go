package locks

import (
	"context"
	"fmt"
	"testing"

	"github.com/redlua/redlua/internal/keyslot"
	"github.com/redlua/redlua/internal/redistest"
)

// Names whose keys share a slot are taken by one multi.acquire script.
func TestMultiLockSameSlotInOneScript(t *testing.T) {
	var a, b string
	seen := map[int]string{}
	for i := 0; a == ""; i++ {
		n := fmt.Sprint("n", i)
		s := keyslot.Of("{" + n + "}")
		if prev, ok := seen[s]; ok {
			a, b = prev, n
		}
		seen[s] = n
	}
	srv := redistest.Standalone(t)
	c, err := New(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ml, err := c.MultiLock([]string{a, b, "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.groups) != 2 {
		t.Fatalf("%s and %s share a slot: want 2 groups, got %d", a, b, len(ml.groups))
	}
	ctx := context.Background()
	l, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Leases) != 3 {
		t.Fatalf("leases %d", len(l.Leases))
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
