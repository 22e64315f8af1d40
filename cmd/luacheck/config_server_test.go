package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serverScript reads globals that only some server lines have: getfenv
// (Redis 7.2+, Valkey), os (Redis 7.4+, Valkey 8), server and
// redis.SERVER_NAME (Valkey).
const serverScript = `local f = getfenv
local c = os.clock()
local v = server.VALKEY_VERSION
return {f, c, v, redis.SERVER_NAME}
`

// serverCodes runs the CLI in a fresh directory on serverScript and
// returns "LINE:CODE" of each finding, and stderr and the exit code.
func serverCodes(t *testing.T, rc string, args ...string) (string, string, int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.lua"), []byte(serverScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc != "" {
		if err := os.WriteFile(filepath.Join(dir, ".luacheckrc"), []byte(rc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	out, stderr, code := runCLI(t, "", append([]string{"--formatter", "plain", "--codes", "--no-default-config"}, append(args, "--", "s.lua")...)...)
	var codes []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if sm := plainLine.FindStringSubmatch(l); sm != nil {
			codes = append(codes, sm[2]+":"+sm[4])
		}
	}
	return strings.Join(codes, " "), stderr, code
}

// A std per server line, chosen by --std or the config's std, gives that
// line's sandbox globals; the default is what every supported server has.
func TestServerStd(t *testing.T) {
	none := "1:W113 2:W113 3:W113 4:W143"
	for _, c := range []struct {
		name, rc string
		args     []string
		want     string
	}{
		{"default: every server", "", nil, none},
		{"redis", "", []string{"--std", "redis"}, none},
		{"redis70", "", []string{"--std", "redis70"}, none},
		{"redis72 has getfenv", "", []string{"--std", "redis72"}, "2:W113 3:W113 4:W143"},
		{"valkey72 has getfenv and server", "", []string{"--std", "valkey72"}, "2:W113"},
		{"redis74 has os", "", []string{"--std", "redis74"}, "3:W113 4:W143"},
		{"redis80 has os", "", []string{"--std", "redis80"}, "3:W113 4:W143"},
		{"valkey80 has os and server", "", []string{"--std", "valkey80"}, ""},
		{"in the config", "std = 'valkey80'", nil, ""},
		{"added in the config", "std = '+redis74'", nil, "3:W113 4:W143"},
		{"per file", "files['s.lua'] = {std = 'redis74'}", nil, "3:W113 4:W143"},
		{"the command line beats the config", "std = 'valkey80'", []string{"--std", "redis72"}, "2:W113 3:W113 4:W143"},
		{"a later std without a server resets it", "std = 'valkey80'", []string{"--std", "max"}, none},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, stderr, code := serverCodes(t, c.rc, c.args...)
			if got != c.want {
				t.Errorf("got %q, want %q (exit %d, stderr %s)", got, c.want, code, stderr)
			}
		})
	}
	_, stderr, code := serverCodes(t, "", "--std", "redis75")
	if code != exitCritical || !strings.Contains(stderr, "unknown std 'redis75'") || !strings.Contains(stderr, "valkey80") {
		t.Errorf("--std redis75: exit %d, stderr %s; want a refusal that lists the server lines", code, stderr)
	}
}
