package registry_test

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/redlua/redlua/registry"
)

const acquire = `-- name: mutex.acquire
-- version: 2
-- description: Take the lock when it is free.
-- keys: lock fence
-- args: owner ttl_ms
-- returns: the fencing token, or nil when taken
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return nil
`

const inspect = `#!lua flags=no-writes,allow-stale
-- name: mutex.inspect
-- version: 1
-- description: Report the holder.
-- Free text in the header is allowed.
-- keys: locks...
-- args:
return redis.call('GET', KEYS[1])
`

func TestParseScriptHeader(t *testing.T) {
	s, err := registry.ParseScript("mutex.acquire.v2.lua", []byte(acquire))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(acquire))
	want := &registry.Script{
		Name: "mutex.acquire", Version: 2, Description: "Take the lock when it is free.",
		Keys: []string{"lock", "fence"}, Args: []string{"owner", "ttl_ms"},
		Returns: "the fencing token, or nil when taken", Source: acquire,
		SHA1: hex.EncodeToString(sum[:]), File: "mutex.acquire.v2.lua", HeaderLine: 1,
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreUnexported(registry.Script{}), cmpopts.IgnoreFields(registry.Script{}, "Header")); diff != "" {
		t.Errorf("parsed script (-want +got):\n%s", diff)
	}
	if s.ID() != "mutex.acquire@2" || s.ReadOnly() || s.HasShebang() {
		t.Errorf("ID %q, ReadOnly %v, HasShebang %v", s.ID(), s.ReadOnly(), s.HasShebang())
	}
	if s.LegacySource() != s.Source || s.LegacySHA1() != s.SHA1 {
		t.Error("a script without shebang must have legacy source == source")
	}
	if err := s.CheckCall(2, 2); err != nil {
		t.Error(err)
	}
	if err := s.CheckCall(1, 2); err == nil || !strings.Contains(err.Error(), "mutex.acquire@2: takes exactly 2 KEYS (lock, fence), got 1; pass what the header") {
		t.Errorf("CheckCall(1,2) = %v", err)
	}
}

func TestParseScriptShebangAndVariadic(t *testing.T) {
	s, err := registry.ParseScript("inspect.lua", []byte(inspect))
	if err != nil {
		t.Fatal(err)
	}
	if !s.ReadOnly() || !s.HasFlag(registry.FlagAllowStale) || s.HeaderLine != 2 {
		t.Errorf("flags %v, header line %d", s.Flags, s.HeaderLine)
	}
	if s.Variadic&registry.VariadicKeys == 0 || s.MinKeys() != 1 || len(s.Args) != 0 {
		t.Errorf("keys %v variadic %v args %v", s.Keys, s.Variadic, s.Args)
	}
	if err := s.CheckCall(5, 0); err != nil {
		t.Errorf("variadic keys: %v", err)
	}
	if err := s.CheckCall(0, 0); err == nil {
		t.Error("variadic keys accepted zero keys; the header says one or more")
	}
	legacy := s.LegacySource()
	if !strings.HasPrefix(legacy, "--!lua") || strings.Count(legacy, "\n") != strings.Count(s.Source, "\n") {
		t.Errorf("legacy source must comment the shebang out and keep line numbers:\n%s", legacy)
	}
	if s.LegacySHA1() == s.SHA1 {
		t.Error("legacy sha1 equals the canonical one")
	}
}

// Each malformed script must fail with file:line and a hint.
func TestParseScriptErrors(t *testing.T) {
	header := "-- name: x\n-- version: 1\n-- description: d\n-- keys: a b\n-- args: v\n"
	cases := []struct {
		name, src, wantPos, wantMsg string
	}{
		{"syntax error", header + "local x = \nif\n", "bad.lua:7:1:", "user_script:7: unexpected symbol near 'if'"},
		{"KEYS beyond declared", header + "return redis.call('GET', KEYS[3])\n", "bad.lua:6:", "KEYS[3] is beyond the keys the header declares: 2 (a, b)"},
		{"ARGV beyond declared", header + "local v = ARGV[1]\nreturn ARGV[2]\n", "bad.lua:7:", "ARGV[2] is beyond the args"},
		{"KEYS[0]", header + "return KEYS[0]\n", "bad.lua:6:", "start at index 1"},
		{"missing version", "-- name: x\n-- description: d\n-- keys:\n-- args:\nreturn 1\n", "bad.lua:1:", `no "version" field`},
		{"bad version", strings.Replace(header, "version: 1", "version: v1", 1), "bad.lua:2:", "not a positive whole number"},
		{"duplicate field", header + "-- name: y\nreturn 1\n", "bad.lua:6:", "given twice"},
		{"bad name", strings.Replace(header, "name: x", "name: my lock", 1), "bad.lua:1:", "is not valid"},
		{"duplicate key name", strings.Replace(header, "keys: a b", "keys: a a", 1), "bad.lua:4:", "declared twice"},
		{"variadic not last", strings.Replace(header, "keys: a b", "keys: a... b", 1), "bad.lua:4:", "only the last"},
		{"unknown flag", "#!lua flags=no-writes,fast\n" + header + "return 1\n", "bad.lua:1:", `unknown script flag "fast"`},
		{"unknown shebang option", "#!lua name=mylib\n" + header + "return 1\n", "bad.lua:1:", "unknown shebang option"},
		{"not lua", "#!python\n" + header + "return 1\n", "bad.lua:1:", "names no engine"},
		{"no header", "return 1\n", "bad.lua:1:", `no "name" field`},
		{"unterminated string", header + "return 'abc\n", "bad.lua:6:8:", "user_script:6: unfinished string near ''abc'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := registry.ParseScript("bad.lua", []byte(c.src))
			if err == nil {
				t.Fatal("parsed without error")
			}
			if !strings.Contains(err.Error(), c.wantPos) || !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("error %q\nwant position %q and message %q", err, c.wantPos, c.wantMsg)
			}
			probs := registry.Problems(err)
			if len(probs) == 0 || probs[0].File != "bad.lua" {
				t.Errorf("Problems(err) = %v, want *registry.Error values naming bad.lua", probs)
			}
		})
	}
}

func TestRegistryLookup(t *testing.T) {
	v1 := strings.Replace(acquire, "version: 2", "version: 1", 1)
	reg, err := registry.New(fstest.MapFS{
		"mutex.acquire.v1.lua":     {Data: []byte(v1)},
		"mutex.acquire.v2.lua":     {Data: []byte(acquire)},
		"sub/mutex.inspect.v1.lua": {Data: []byte(inspect)},
		"README.md":                {Data: []byte("not a script")},
	})
	if err != nil {
		t.Fatal(err)
	}
	latest, err := reg.Get("mutex.acquire")
	if err != nil || latest.Version != 2 {
		t.Fatalf("Get = %v, %v; want version 2", latest, err)
	}
	old, err := reg.Lookup("mutex.acquire@1")
	if err != nil || old.Version != 1 {
		t.Fatalf("Lookup @1 = %v, %v", old, err)
	}
	var ids []string
	for _, s := range reg.Scripts() {
		ids = append(ids, s.ID())
	}
	if diff := cmp.Diff([]string{"mutex.acquire@1", "mutex.acquire@2", "mutex.inspect@1"}, ids); diff != "" {
		t.Errorf("Scripts (-want +got):\n%s", diff)
	}
	if n := len(reg.Latest()); n != 2 {
		t.Errorf("Latest has %d scripts, want 2", n)
	}
	for _, id := range []string{"nope", "mutex.acquire@9", "mutex.acquire@x"} {
		if _, err := reg.Lookup(id); !errors.Is(err, registry.ErrUnknownScript) {
			t.Errorf("Lookup(%q) = %v, want ErrUnknownScript", id, err)
		}
	}
	if _, err := reg.Lookup("mutex.acquire@9"); err == nil || !strings.Contains(err.Error(), "versions: 1, 2") {
		t.Errorf("unknown version error should list the versions: %v", err)
	}
}

func TestRegistryRejectsDuplicateVersion(t *testing.T) {
	_, err := registry.New(fstest.MapFS{
		"mutex.acquire.v2.lua":     {Data: []byte(acquire)},
		"old/mutex.acquire.v2.lua": {Data: []byte(acquire + "-- changed\n")},
	})
	if err == nil || !strings.Contains(err.Error(), "mutex.acquire@2 is declared again (first in mutex.acquire.v2.lua)") {
		t.Fatalf("err = %v", err)
	}
}

func TestRegistryReportsEveryBadFile(t *testing.T) {
	_, err := registry.New(fstest.MapFS{
		"one.lua": {Data: []byte("return 1\n")},
		"two.lua": {Data: []byte("-- name: two\nreturn 1\n")},
	})
	probs := registry.Problems(err)
	files := map[string]bool{}
	for _, p := range probs {
		files[p.File] = true
	}
	if !files["one.lua"] || !files["two.lua"] {
		t.Fatalf("want problems in both files, got %v", err)
	}
}

// The immutability guard: a recorded version's text may not change; a
// recorded, unreleased version may be retired, and may come back only with
// its recorded text; a released version must stay.
func TestSumGuard(t *testing.T) {
	recorded := fstest.MapFS{"mutex.acquire.v2.lua": {Data: []byte(acquire)}}
	reg, err := registry.New(recorded)
	if err != nil {
		t.Fatal(err)
	}
	sum, added, err := registry.Record(reg, registry.Sum{})
	if err != nil || len(added) != 1 {
		t.Fatalf("Record = %v, %v", added, err)
	}
	var buf strings.Builder
	if err := sum.Write(&buf); err != nil {
		t.Fatal(err)
	}
	reread, err := registry.ReadSum(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.VerifySum(reg, reread); err != nil {
		t.Fatalf("unchanged scripts fail the guard: %v", err)
	}

	// Someone "fixes" the recorded file in place.
	edited := fstest.MapFS{"mutex.acquire.v2.lua": {Data: []byte(strings.Replace(acquire, "return nil", "return false", 1))}}
	reg2, err := registry.New(edited)
	if err != nil {
		t.Fatal(err)
	}
	err = registry.VerifySum(reg2, reread)
	if err == nil || !strings.Contains(err.Error(), "mutex.acquire@2 changed after it was recorded") || !strings.Contains(err.Error(), "new version (mutex.acquire@3)") {
		t.Fatalf("guard did not catch the edit: %v", err)
	}
	if _, _, err := registry.Record(reg2, reread); err == nil {
		t.Fatal("Record accepted a changed recorded version")
	}

	// An unreleased version is retired: allowed, and its number is not
	// offered again for the next change.
	reg3, _ := registry.New(fstest.MapFS{"mutex.inspect.v1.lua": {Data: []byte(inspect)}})
	err = registry.VerifySum(reg3, reread)
	if err == nil || !errors.Is(err, registry.ErrNotRecorded) || strings.Contains(err.Error(), "mutex.acquire@2") {
		t.Fatalf("a retired unreleased version should pass and the new mutex.inspect@1 be reported as not recorded: %v", err)
	}
	reg4, _ := registry.New(fstest.MapFS{"mutex.acquire.v1.lua": {Data: []byte(strings.Replace(acquire, "version: 2", "version: 1", 1))}})
	bumped, _, err := registry.Record(reg4, reread)
	if err != nil {
		t.Fatal(err)
	}
	bumped["mutex.acquire@1"] = registry.SumEntry{SHA1: strings.Repeat("0", 40)}
	if err := registry.VerifySum(reg4, bumped); err == nil || !strings.Contains(err.Error(), "new version (mutex.acquire@3)") {
		t.Fatalf("the next version should skip the retired @2: %v", err)
	}

	// The retired version comes back with other content: caught.
	if err := registry.VerifySum(reg2, reread); err == nil {
		t.Fatal("a retired version came back changed and passed")
	}

	// Released, then removed: caught.
	released, err := registry.Release(reg, reread)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := released.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), " released\n") {
		t.Fatalf("the sum file does not mark the release:\n%s", buf.String())
	}
	reread, err = registry.ReadSum(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	err = registry.VerifySum(reg3, reread)
	if err == nil || !strings.Contains(err.Error(), "mutex.acquire@2 is released") {
		t.Fatalf("guard did not catch the vanished released version: %v", err)
	}
}

func TestReadSumRejectsGarbage(t *testing.T) {
	for _, in := range []string{"mutex.acquire@1 xyz\n", "nover abcdefabcdefabcdefabcdefabcdefabcdefabcd\n", "a@1 " + strings.Repeat("a", 40) + " shipped\n", "a@1 " + strings.Repeat("a", 40) + "\na@1 " + strings.Repeat("b", 40) + "\n"} {
		if _, err := registry.ReadSum(strings.NewReader(in)); err == nil {
			t.Errorf("ReadSum(%q) accepted it", in)
		}
	}
}
