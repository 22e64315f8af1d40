package evalsha_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/registry"
)

// The first NOSCRIPT of any script loads every companion on the server, so
// the whole set is cached after one call; without companions only the
// script that ran is.
func TestCompanionsLoadTogether(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	reg := testRegistry(t)
	all := reg.Scripts()
	if len(all) < 3 {
		t.Fatalf("testdata has %d scripts; the test needs 3", len(all))
	}
	first := firstWithoutKeys(t, all)
	cached := func() int {
		shas := make([]string, len(all))
		for i, s := range all {
			shas[i] = s.SHA1
		}
		got, err := srv.Client().ScriptExists(ctx, shas...).Result()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ok := range got {
			if ok {
				n++
			}
		}
		return n
	}

	plain, err := evalsha.New(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	plain.Run(ctx, first, nil, argsFor(first)...)
	plain.Close()
	if n := cached(); n != 1 {
		t.Fatalf("without companions %d scripts are cached after one call, want 1", n)
	}
	if err := srv.Client().ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	r, err := evalsha.New(srv.Client(), evalsha.WithCompanions(all...))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx, first, nil, argsFor(first)...).Err(); err != nil {
		t.Fatalf("%s: %v", first.ID(), err)
	}
	r.Close() // waits for the background load
	if n := cached(); n != len(all) {
		t.Fatalf("with companions %d of %d scripts are cached after one call", n, len(all))
	}
	if r.Stats().NoScript != 1 {
		t.Errorf("NoScript = %d, want 1", r.Stats().NoScript)
	}
}

func TestCompanionsRefuseNil(t *testing.T) {
	_, client := miniClient(t)
	_, err := evalsha.New(client, evalsha.WithCompanions(nil))
	if err == nil || !strings.Contains(err.Error(), "WithCompanions") {
		t.Fatalf("WithCompanions(nil) = %v, want an error naming it", err)
	}
}

// firstWithoutKeys picks a script that takes no keys, so that it can run
// with none.
func firstWithoutKeys(t *testing.T, scripts []*registry.Script) *registry.Script {
	t.Helper()
	for _, s := range scripts {
		if len(s.Keys) == 0 {
			return s
		}
	}
	t.Skip("testdata has no script without keys")
	return nil
}

// argsFor passes one value per declared argument.
func argsFor(s *registry.Script) []any {
	args := make([]any, len(s.Args))
	for i := range args {
		args[i] = "1"
	}
	return args
}
