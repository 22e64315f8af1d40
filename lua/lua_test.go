package lua_test

import (
	"context"
	"fmt"
	"io/fs"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

func scripts(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatalf("our own scripts do not register:\n%v", err)
	}
	return reg
}

// Released versions are immutable: the sum file must match, and every
// version must be recorded (go run ./cmd/luasum record lua).
func TestSumFile(t *testing.T) {
	reg := scripts(t)
	f, err := lua.FS.Open("scripts.sum")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := registry.ReadSum(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.VerifySum(reg, sum); err != nil {
		t.Fatal(err)
	}
}

func TestFileNamesFollowTheConvention(t *testing.T) {
	for _, s := range scripts(t).Scripts() {
		if want := fmt.Sprintf("%s.v%d.lua", s.Name, s.Version); s.File != want {
			t.Errorf("%s is in %s; name the file %s", s.ID(), s.File, want)
		}
	}
	entries, _ := fs.ReadDir(lua.FS, ".")
	if len(entries) < 2 {
		t.Fatal("lua.FS embeds no scripts")
	}
}

func TestSHA1MatchesScriptLoad(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	for _, s := range scripts(t).Scripts() {
		sha, err := c.ScriptLoad(context.Background(), s.Source).Result()
		if err != nil || sha != s.SHA1 {
			t.Errorf("%s: SCRIPT LOAD = %s, %v; registry computed %s", s.ID(), sha, err, s.SHA1)
		}
	}
}

// Every script also compiles where "#!lua" is not understood (miniredis,
// Redis 6), through its legacy source.
func TestLegacySourcesCompile(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer c.Close()
	for _, s := range scripts(t).Scripts() {
		if _, err := c.ScriptLoad(context.Background(), s.LegacySource()).Result(); err != nil {
			t.Errorf("%s: legacy source does not compile on miniredis: %v", s.ID(), err)
		}
	}
}
