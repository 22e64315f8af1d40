package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

func cmdScripts(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	if len(args) == 0 {
		return usageErrorf("say list, load or verify, as in: redlua scripts verify --loaded")
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(io.out, scriptsHelp)
		return nil
	case "list":
		return scriptsList(rest, io, getenv)
	case "load":
		return scriptsLoad(ctx, rest, io, getenv)
	case "verify":
		return scriptsVerify(ctx, rest, io, getenv)
	default:
		return usageErrorf("unknown subcommand %q; say list, load or verify", sub)
	}
}

const scriptsHelp = `usage: redlua scripts list|load|verify [flags]

  redlua scripts list [--dir DIR] [--json]                 the scripts (embedded, or DIR's)
  redlua scripts load [--dir DIR]                          SCRIPT LOAD them on the server
  redlua scripts verify [--dir DIR] [--sum FILE] [--loaded] check the sum file (and the server)

examples:
  redlua scripts list
  redlua scripts verify --loaded
  redlua scripts load --addr 10.0.0.5:6379

'redlua scripts SUBCOMMAND --help' lists its flags.
`

const scriptsListHelp = `redlua scripts list [--dir DIR] [--json]

Lists the Lua scripts redlua runs (the ones built in, or DIR's): id, SHA1,
KEYS, ARGV, flags and description. Connects to no server.

examples:
  redlua scripts list
  redlua scripts list --json | jq -r '.[].id'
  redlua scripts list --dir ./lua
`

const scriptsLoadHelp = `redlua scripts load [--dir DIR]

Caches every script on the server (SCRIPT LOAD), so the first EVALSHA of
each does not need the NOSCRIPT fallback.

examples:
  redlua scripts load
  redlua scripts load --addr 10.0.0.5:6379
  redlua scripts load --dir ./lua --url rediss://ops@cache.example:6380
`

const scriptsVerifyHelp = `redlua scripts verify [--dir DIR] [--sum FILE] [--loaded]

Checks the scripts against the sum file: a recorded script changed, a
released one missing, or one not recorded fails (exit 1). --loaded also
checks that the server has cached (SCRIPT EXISTS) every script this
release's locks run (with --dir: every script in DIR). A Client loads them
all at the first NOSCRIPT it meets, so a server where any lock was used
holds them.

examples:
  redlua scripts verify
  redlua scripts verify --dir ./lua --sum ./lua/scripts.sum
  redlua scripts verify --loaded --addr 10.0.0.5:6379

exit codes: 0 all match; 1 a check failed; 2 usage; 69 server unreachable
or error (--loaded)
`

// scriptSource is --dir: a directory of .lua files, or the embedded scripts.
type scriptSource struct{ dir string }

func (s *scriptSource) add(c *command) {
	c.fs.StringVar(&s.dir, "dir", "", "directory of <name>.v<version>.lua files (default: the scripts built into redlua)")
}

func (s *scriptSource) fsys() (fs.FS, string) {
	if s.dir == "" {
		return lua.FS, "the embedded scripts"
	}
	return os.DirFS(s.dir), s.dir
}

func (s *scriptSource) registry() (*registry.Registry, error) {
	if s.dir != "" {
		if st, err := os.Stat(s.dir); err != nil || !st.IsDir() {
			return nil, usageErrorf("--dir %s is not a directory", s.dir)
		}
	}
	fsys, what := s.fsys()
	reg, err := registry.New(fsys)
	if err != nil {
		return nil, exitWith(exitFailed, fmt.Errorf("scripts in %s: %w", what, err))
	}
	if len(reg.Scripts()) == 0 {
		return nil, exitWith(exitFailed, fmt.Errorf("no scripts in %s: script files are named <name>.v<version>.lua", what))
	}
	return reg, nil
}

// scriptView is one script in `redlua scripts list --json`.
type scriptView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Version     int      `json:"version"`
	SHA1        string   `json:"sha1"`
	Keys        []string `json:"keys"`
	Args        []string `json:"args"`
	Flags       []string `json:"flags,omitempty"`
	Description string   `json:"description"`
	File        string   `json:"file"`
}

func scriptsList(args []string, io stdio, getenv func(string) string) error {
	c := newCommand("scripts list", scriptsListHelp, getenv)
	var src scriptSource
	src.add(c)
	asJSON := c.fs.Bool("json", false, "print a JSON array (id, name, version, sha1, keys, args, flags, description, file)")
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	if len(c.args) > 0 {
		return usageErrorf("takes no arguments (got %q); name a directory of scripts with --dir DIR", c.args)
	}
	reg, err := src.registry()
	if err != nil {
		return err
	}
	if *asJSON {
		views := []scriptView{}
		for _, s := range reg.Scripts() {
			views = append(views, scriptView{ID: s.ID(), Name: s.Name, Version: s.Version, SHA1: s.SHA1,
				Keys: nonNil(s.Keys), Args: nonNil(s.Args), Flags: s.Flags, Description: s.Description, File: s.File})
		}
		return writeJSON(io.out, views)
	}
	for _, s := range reg.Scripts() {
		flags := ""
		if len(s.Flags) > 0 {
			flags = "  flags " + strings.Join(s.Flags, ",")
		}
		fmt.Fprintf(io.out, "%-22s %s  keys %v  args %v%s\n    %s\n", s.ID(), s.SHA1, s.Keys, s.Args, flags, s.Description)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func scriptsLoad(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("scripts load", scriptsLoadHelp, getenv)
	var src scriptSource
	src.add(c)
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	if len(c.args) > 0 {
		return usageErrorf("takes no arguments (got %q); name a directory of scripts with --dir DIR", c.args)
	}
	reg, err := src.registry()
	if err != nil {
		return err
	}
	client, err := c.conn.connect(ctx)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := evalsha.Load(ctx, client, reg); err != nil {
		return unavailable(fmt.Errorf("SCRIPT LOAD: %w", err))
	}
	fmt.Fprintf(io.out, "loaded %d scripts\n", len(reg.Scripts()))
	return nil
}

func scriptsVerify(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("scripts verify", scriptsVerifyHelp, getenv)
	var src scriptSource
	src.add(c)
	sumFile := c.fs.String("sum", "", "sum file (default DIR/scripts.sum, or the embedded one)")
	loaded := c.fs.Bool("loaded", false, "also check that the server has every script cached (SCRIPT EXISTS)")
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	if len(c.args) > 0 {
		return usageErrorf("takes no arguments (got %q); name a directory of scripts with --dir DIR", c.args)
	}
	reg, err := src.registry()
	if err != nil {
		return err
	}
	sum, where, err := readSum(src, *sumFile)
	if err != nil {
		return err
	}
	var problems []error
	if err := registry.VerifySum(reg, sum); err != nil {
		problems = append(problems, fmt.Errorf("against %s:\n  %s", where, strings.ReplaceAll(err.Error(), "\n", "\n  ")))
	}
	if *loaded {
		want, err := src.running(reg)
		if err != nil {
			return err
		}
		missing, err := notLoaded(ctx, c, want)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Errorf("not cached on the server (run redlua scripts load): %s", strings.Join(missing, ", ")))
		}
	}
	if len(problems) > 0 {
		return exitWith(exitFailed, errors.Join(problems...))
	}
	fmt.Fprintf(io.out, "%d scripts match %s", len(reg.Scripts()), where)
	if *loaded {
		want, _ := src.running(reg)
		fmt.Fprintf(io.out, "; the %d this release runs are cached on the server", len(want))
	}
	fmt.Fprintln(io.out)
	return nil
}

func readSum(src scriptSource, file string) (registry.Sum, string, error) {
	var data []byte
	var err error
	where := file
	switch {
	case file != "":
		data, err = os.ReadFile(file)
	case src.dir != "":
		where = filepath.Join(src.dir, "scripts.sum")
		data, err = os.ReadFile(where)
	default:
		where = "the embedded scripts.sum"
		data, err = fs.ReadFile(lua.FS, "scripts.sum")
	}
	if err != nil {
		return nil, "", exitWith(exitFailed, fmt.Errorf("reading the sum file: %w; create one with: go run github.com/redlua/redlua/cmd/luasum record DIR", err))
	}
	sum, err := registry.ReadSum(bytes.NewReader(data))
	if err != nil {
		return nil, "", exitWith(exitFailed, fmt.Errorf("%s: %w", where, err))
	}
	return sum, where, nil
}

// notLoaded returns the scripts the server does not have cached, by
// SCRIPT EXISTS on the SHA1 it would have (the legacy one where the server
// cannot compile "#!lua" and Load sent the legacy source).
// running is what a server must hold: for the embedded scripts, the
// versions this release's locks run (older versions stay in lua/ for the
// record, and no client of this release sends them); for a --dir, all.
func (s *scriptSource) running(reg *registry.Registry) ([]*registry.Script, error) {
	if s.dir != "" {
		return reg.Scripts(), nil
	}
	return locks.Scripts()
}

func notLoaded(ctx context.Context, c *command, scripts []*registry.Script) ([]string, error) {
	client, err := c.conn.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	shas := make([]string, len(scripts))
	legacy := make([]string, len(scripts))
	for i, s := range scripts {
		shas[i], legacy[i] = s.SHA1, s.LegacySHA1()
	}
	have, err := client.ScriptExists(ctx, shas...).Result()
	if err != nil {
		return nil, unavailable(fmt.Errorf("SCRIPT EXISTS: %w", err))
	}
	haveLegacy, err := client.ScriptExists(ctx, legacy...).Result()
	if err != nil {
		return nil, unavailable(fmt.Errorf("SCRIPT EXISTS: %w", err))
	}
	var missing []string
	for i, s := range scripts {
		if !have[i] && !haveLegacy[i] {
			missing = append(missing, s.ID())
		}
	}
	return missing, nil
}
