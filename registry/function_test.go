package registry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// TestFunctionLibraryRunsLikeEvalSha: every script of the project's
// registry, called through its function (FCALL) in the simulator, answers
// as the same script called through EVALSHA and leaves the same keys.
func TestFunctionLibraryRunsLikeEvalSha(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := registry.NewFunctionLibrary(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range reg.Scripts() {
		fn, err := lib.Function(s)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, s.MinKeys())
		for i := range keys {
			keys[i] = fmt.Sprintf("{t}:k%d", i)
		}
		args := make([]any, s.MinArgs())
		for i := range args {
			args[i] = "1000"
		}
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		viaEval := simulate.New(simulate.WithClock(simulate.NewVirtualClock(start)))
		viaFcall := simulate.New(simulate.WithClock(simulate.NewVirtualClock(start)))
		if err := viaFcall.Do(ctx, "FUNCTION", "LOAD", lib.Code).Err(); err != nil {
			t.Fatalf("FUNCTION LOAD: %v\n%s", err, lib.Code)
		}
		for round := 0; round < 2; round++ { // the second call meets the state the first one left
			want, wantErr := viaEval.Run(ctx, s, keys, args...).Result()
			fcall := append([]any{"FCALL", fn, len(keys)}, anys(keys)...)
			if s.ReadOnly() {
				fcall[0] = "FCALL_RO"
			}
			got, gotErr := viaFcall.Do(ctx, append(fcall, args...)...).Result()
			if (wantErr == nil) != (gotErr == nil) || !cmp.Equal(want, got) {
				t.Errorf("%s round %d: EVALSHA gave %v, %v; FCALL %s gave %v, %v", s.ID(), round, want, wantErr, fn, got, gotErr)
			}
		}
		if diff := cmp.Diff(viaEval.Dump(), viaFcall.Dump()); diff != "" {
			t.Errorf("%s: keyspace after EVALSHA and FCALL differ (-evalsha +fcall):\n%s", s.ID(), diff)
		}
	}
}

// TestFunctionLibrariesLiveSideBySide: the libraries of two releases load
// into one server without clashing, and each keeps its own functions.
func TestFunctionLibrariesLiveSideBySide(t *testing.T) {
	ctx := context.Background()
	one := fstest.MapFS{"a.v1.lua": {Data: []byte("-- name: a\n-- version: 1\n-- description: one\n-- keys: k\n-- args:\nreturn 1\n")}}
	two := fstest.MapFS{
		"a.v1.lua": one["a.v1.lua"],
		"a.v2.lua": {Data: []byte("#!lua flags=no-writes\n-- name: a\n-- version: 2\n-- description: it's two\n-- keys: k\n-- args:\nreturn 2 -- no newline at the end")},
	}
	srv := simulate.New()
	var names []string
	for _, fsys := range []fstest.MapFS{one, two} {
		reg, err := registry.New(fsys)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := registry.NewFunctionLibrary(reg)
		if err != nil {
			t.Fatal(err)
		}
		if !registry.IsFunctionLibrary(lib.Name) {
			t.Errorf("IsFunctionLibrary(%q) = false", lib.Name)
		}
		if err := srv.Do(ctx, "FUNCTION", "LOAD", lib.Code).Err(); err != nil {
			t.Fatalf("loading %s: %v\n%s", lib.Name, err, lib.Code)
		}
		for _, s := range reg.Scripts() {
			fn, _ := lib.Function(s)
			names = append(names, fn)
			cmd := "FCALL"
			if s.ReadOnly() {
				cmd = "FCALL_RO"
			}
			if v, err := srv.Do(ctx, cmd, fn, 1, "k").Int64(); err != nil || v != int64(s.Version) {
				t.Errorf("%s %s = %v, %v; want %d", cmd, fn, v, err, s.Version)
			}
		}
	}
	if len(names) != 3 || names[0] == names[1] || !strings.HasPrefix(names[0], "a_v1_") {
		t.Errorf("function names %v: want a_v1_<hash> per release and a_v2_<hash>", names)
	}
}

func TestFunctionLibraryBadInput(t *testing.T) {
	if _, err := registry.NewFunctionLibrary(nil); err == nil {
		t.Error("NewFunctionLibrary(nil) succeeded")
	}
	clash := fstest.MapFS{
		"a.b.v1.lua": {Data: []byte("-- name: a.b\n-- version: 1\n-- description: x\n-- keys: k\n-- args:\nreturn 1\n")},
		"a_b.v1.lua": {Data: []byte("-- name: a_b\n-- version: 1\n-- description: x\n-- keys: k\n-- args:\nreturn 1\n")},
	}
	reg, err := registry.New(clash)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.NewFunctionLibrary(reg); err == nil || !strings.Contains(err.Error(), "both become function") {
		t.Errorf("a.b and a_b: %v; want an error naming the clash", err)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
