package lint_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/lint"
)

// listGlobals returns every global of the script sandbox and, for a
// table, its fields: "name" or "name: field field ...", sorted.
const listGlobals = `local out = {}
for k, v in pairs(_G) do
  if type(v) == 'table' and k ~= '_G' and k ~= 'KEYS' and k ~= 'ARGV' then
    local fs = {}
    for f in pairs(v) do fs[#fs+1] = tostring(f) end
    table.sort(fs)
    out[#out+1] = tostring(k) .. ': ' .. table.concat(fs, ' ')
  else
    out[#out+1] = tostring(k)
  end
end
table.sort(out)
return out`

// serverLine names the std of a server from its INFO server, or "" for a
// version no std describes; version is "redis 7.2.6" or "valkey 8.0.1".
func serverLine(info string) (line, version string) {
	fields := map[string]string{}
	for _, l := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok {
			fields[k] = v
		}
	}
	name, version := "redis", fields["redis_version"]
	if v := fields["valkey_version"]; v != "" {
		name, version = "valkey", v
	}
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	if name == "redis" && major == "7" && minor == "9" {
		// Redis 8.0's milestones call themselves 7.9.x.
		major, minor = "8", "0"
	}
	line = name + major + minor
	if !lint.IsServerLine(line) {
		return "", name + " " + version
	}
	return line, name + " " + version
}

// The std of the server line the tests run against (REDLUA_REDIS_SERVER)
// has exactly the globals and library fields a script finds in that
// server's sandbox: the matrix (.ci/matrix) checks every line.
func TestServerStdMatchesTheServer(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client()
	ctx := context.Background()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	line, version := serverLine(info)
	if line == "" {
		t.Skipf("%s: no std describes this server line (%v)", version, lint.ServerLines())
	}
	got, err := c.Eval(ctx, listGlobals, nil).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	std, err := lint.ServerStdGlobals(line)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name, fields := range std {
		switch {
		case name == "_G" || name == "KEYS" || name == "ARGV":
			want = append(want, name)
		case len(fields) > 0:
			sort.Strings(fields)
			want = append(want, name+": "+strings.Join(fields, " "))
		default:
			want = append(want, name)
		}
	}
	sort.Strings(want)
	// Redis keeps its error handler as a global; no script calls it.
	var kept []string
	for _, g := range got {
		if g != "__redis__err__handler" {
			kept = append(kept, g)
		}
	}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("%s: std %s differs from the server's sandbox (-std +server):\n%s", version, line, diff)
	}
	t.Logf("%s: std %s, %d globals", version, line, len(kept))
}
