package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/redlua/redlua/lint"
)

// version is reported by --version and in SARIF output.
const version = "0.1.0"

// Exit codes, as luacheck defines them.
const (
	exitOK       = 0
	exitWarnings = 1
	exitErrors   = 2
	exitIO       = 3
	exitCritical = 4
)

const usage = `Usage: luacheck [options] FILE|DIR|GLOB|- ...

Checks Redis Lua scripts against Redis 7's sandbox. Directories are
searched recursively for *.lua; globs may use **; "-" reads stdin (name it
with --filename). Options taking several values read them up to the next
option, so put them after the files or end them with --.

Filtering (patterns are luacheck's: CODE, NAME or CODE/NAME, Lua patterns):
  -o, --only PATT ...       report only warnings matching a pattern
  -i, --ignore PATT ...     drop warnings matching a pattern
  -e, --enable PATT ...     keep warnings matching a pattern (beats the config's ignore)
  -g, --no-global           drop global warnings (= --ignore 1)
  -u, --no-unused           drop unused variables and values (= --ignore [23])
  -r, --no-redefined        drop redefinitions and shadowing (= --ignore 4)
  -a, --no-unused-args      drop unused arguments and loop variables (= --ignore 21[23])
  --max-line-length N       W631 limit (default 120)
  --no-max-line-length      no line length limit

Globals (the std is always the sandbox of Redis's scripts):
  --globals NAME ...        extra globals scripts may set and read (name or name.field)
  --read-globals NAME ...   extra globals scripts may only read
  --new-globals NAME ...    replace the globals added so far (config and earlier flags)
  --new-read-globals NAME ...
  --std STD                 a server line's sandbox: redis70, redis72, redis74, redis80,
                            valkey72, valkey80 (default redis: what every supported
                            server has); luacheck's names (max, lua51, ...) are
                            accepted and add nothing; sets from the config's stds
                            add their globals

Configuration (.luacheckrc, luacheck's format, evaluated in a sandbox):
  --config FILE             use FILE (relative paths are looked up in parent dirs too)
  --no-config               ignore .luacheckrc files
  --default-config FILE     config to use when no .luacheckrc is found
                            (default $XDG_CONFIG_HOME/luacheck/.luacheckrc)
  --no-default-config       no fallback config
  --exclude-files GLOB ...  skip files matching a glob
  --include-files GLOB ...  check only files matching a glob

Output:
  --formatter NAME          default, plain, JSON, sarif, github, JUnit
  --codes                   show warning codes
  --ranges                  show column ranges
  --filename NAME           name to report for stdin (also selects config overrides)
  --no-color                no colours in the default report
  -q, -qq, -qqq             hide clean files / diagnostics / per-file lines
  --sum FILE                verify a redlua sum file: every released name@version
                            it records must be among the scripts, unchanged
  --registry                report what registry.New rejects (W943 no header,
                            W944 file name, W945 name@version twice); by default
                            on where a directory's scripts have redlua headers
  --no-registry             never
  --no-cache, -j N          accepted for compatibility (files are always checked in parallel)
  -v, --version             print the version
  -h, --help                print this help

Exit codes: 0 no warnings or errors, 1 warnings only, 2 errors (syntax or
error severity), 3 I/O errors (unreadable files), 4 bad usage, a bad
pattern or a bad config file.
`

// run is the whole CLI without process exit, so tests drive it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ca, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "luacheck: %s\n%s", escapeControls(err.Error()), usage)
		return exitCritical
	}
	if ca.has("help") {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if ca.has("version") {
		fmt.Fprintf(stdout, "redlua luacheck %s\n", version)
		return exitOK
	}
	set, err := buildSettings(ca)
	if err != nil {
		fmt.Fprintf(stderr, "luacheck: %s\n", escapeControls(err.Error()))
		return exitCritical
	}
	if len(ca.files) == 0 {
		fmt.Fprintf(stderr, "luacheck: no files given\n%s", usage)
		return exitCritical
	}
	opts, formatter := reportSettings(ca, set.conf, isTerminal(stdout))
	filename := "stdin"
	if ca.has("filename") {
		filename = ca.last("filename")
	}
	results, srcs, err := checkAll(ca.files, stdin, filename, set)
	if err != nil {
		fmt.Fprintf(stderr, "luacheck: %s\n", escapeControls(err.Error()))
		return exitCritical
	}
	if code, ok := writeReport(stdout, stderr, formatter, results, opts); !ok {
		return code
	}
	code := exitCode(results)
	if ca.has("sum") {
		sumCode, err := verifySum(ca.last("sum"), results, srcs)
		if err != nil {
			fmt.Fprintf(stderr, "luacheck: %s\n", escapeControls(err.Error()))
		}
		code = max(code, sumCode)
	}
	return code
}

// reportSettings decides how to report: the command line wins over the
// config file, which wins over the defaults.
func reportSettings(ca *cliArgs, conf *rcConfig, terminal bool) (reportOpts, string) {
	opts := reportOpts{codes: ca.has("codes"), ranges: ca.has("ranges")}
	color := !ca.has("no-color")
	formatter := "default"
	if c := conf; c != nil {
		if c.codes != nil && !opts.codes {
			opts.codes = *c.codes
		}
		if c.ranges != nil && !opts.ranges {
			opts.ranges = *c.ranges
		}
		if c.color != nil && color {
			color = *c.color
		}
		if c.quiet != nil {
			opts.quiet = *c.quiet
		}
		if c.formatter != nil {
			formatter = *c.formatter
		}
	}
	if ca.has("formatter") {
		formatter = ca.last("formatter")
	}
	opts.color = color && terminal
	if q := len(ca.vals["quiet"]); q > 0 {
		opts.quiet = min(q, 3)
	}
	return opts, formatter
}

// writeReport prints the results with the named formatter; when it cannot,
// it says why and returns the exit code and false.
func writeReport(stdout, stderr io.Writer, formatter string, results []fileResult, opts reportOpts) (int, bool) {
	var err error
	results = terminalSafe(results)
	switch strings.ToLower(formatter) {
	case "default":
		writeDefault(stdout, results, opts)
	case "plain":
		writePlain(stdout, results, opts)
	case "json":
		err = writeJSON(stdout, results)
	case "sarif":
		err = writeSARIF(stdout, results)
	case "github":
		writeGitHub(stdout, results)
	case "junit":
		writeJUnit(stdout, results)
	default:
		fmt.Fprintf(stderr, "luacheck: unknown formatter %q (use default, plain, JSON, sarif, github or JUnit)\n", formatter)
		return exitCritical, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "luacheck: %s\n", escapeControls(err.Error()))
		return exitIO, false
	}
	return exitOK, true
}

// buildSettings turns the command line into the option layer it defines
// and loads the config file luacheck would load.
func buildSettings(ca *cliArgs) (*settings, error) {
	cli := &optionSet{}
	for _, f := range []struct {
		flag string
		dst  *[]string
	}{{"only", &cli.only}, {"ignore", &cli.ignore}, {"enable", &cli.enable}} {
		if !ca.has(f.flag) {
			continue
		}
		if err := validatePatterns("--"+f.flag, ca.vals[f.flag]); err != nil {
			return nil, err
		}
		*f.dst = ca.vals[f.flag]
	}
	cli.globals = ca.vals["globals"]
	cli.readGlobals = ca.vals["read-globals"]
	if ca.has("new-globals") {
		cli.setNewGlobals, cli.newGlobals = true, ca.vals["new-globals"]
	}
	if ca.has("new-read-globals") {
		cli.setNewRead, cli.newReadGlobals = true, ca.vals["new-read-globals"]
	}
	if ca.has("max-line-length") {
		n, err := strconv.Atoi(ca.last("max-line-length"))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--max-line-length %q: want a positive whole number (or --no-max-line-length)", ca.last("max-line-length"))
		}
		cli.maxLineLength = &n
	}
	if ca.has("no-max-line-length") {
		off := -1
		cli.maxLineLength = &off
	}
	no := false
	for _, m := range []struct {
		flag string
		dst  **bool
	}{{"no-unused", &cli.unused}, {"no-redefined", &cli.redefined}, {"no-unused-args", &cli.unusedArgs}, {"no-global", &cli.global}} {
		if ca.has(m.flag) {
			*m.dst = &no
		}
	}
	if ca.has("jobs") {
		if n, err := strconv.Atoi(ca.last("jobs")); err != nil || n < 1 {
			return nil, fmt.Errorf("--jobs %q: want a positive whole number", ca.last("jobs"))
		}
	}
	s := &settings{cli: cli, stds: map[string]*stdDef{}}
	conf, err := locateAndLoadConfig(ca)
	if err != nil {
		return nil, err
	}
	if conf != nil {
		s.conf, s.stds = conf, conf.stds
		s.exclude = append(s.exclude, conf.exclude...)
		s.include = append(s.include, conf.include...)
	}
	if ca.has("std") {
		if _, _, err := splitStd(ca.last("std"), s.stds); err != nil {
			return nil, fmt.Errorf("--std: %v", err)
		}
		cli.std = ca.last("std")
	}
	for _, g := range ca.vals["exclude-files"] {
		s.exclude = append(s.exclude, absPath(g))
	}
	for _, g := range ca.vals["include-files"] {
		s.include = append(s.include, absPath(g))
	}
	if conf != nil && conf.registry != nil {
		s.registry = map[bool]string{true: "on", false: "off"}[*conf.registry]
	}
	switch {
	case ca.has("registry") && ca.has("no-registry"):
		return nil, fmt.Errorf("--registry and --no-registry contradict each other; give one")
	case ca.has("registry"):
		s.registry = "on"
	case ca.has("no-registry"):
		s.registry = "off"
	}
	return s, nil
}

// locateAndLoadConfig finds the config as luacheck does: --config FILE
// (looked up from the current directory upwards when relative), else
// .luacheckrc in the current directory or a parent, else the default
// config; --no-config turns all of this off.
func locateAndLoadConfig(ca *cliArgs) (*rcConfig, error) {
	if ca.has("no-config") {
		if ca.has("config") {
			return nil, fmt.Errorf("--config and --no-config contradict each other; use one")
		}
		return nil, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("current directory: %w", err)
	}
	if ca.has("config") {
		name := ca.last("config")
		if filepath.IsAbs(name) {
			return loadConfigFile(name, cwd)
		}
		p, ok := findConfig(cwd, name)
		if !ok {
			return nil, fmt.Errorf("couldn't find configuration file %s (looked in %s and its parents)", name, cwd)
		}
		return loadConfigFile(relTo(cwd, p), filepath.Dir(p))
	}
	if p, ok := findConfig(cwd, ".luacheckrc"); ok {
		return loadConfigFile(relTo(cwd, p), filepath.Dir(p))
	}
	if ca.has("no-default-config") {
		return nil, nil
	}
	def := defaultConfigPath()
	if ca.has("default-config") {
		def = ca.last("default-config")
	}
	if def == "" {
		return nil, nil
	}
	if st, err := os.Stat(def); err != nil || st.IsDir() {
		if ca.has("default-config") {
			return nil, fmt.Errorf("couldn't read --default-config %s", def)
		}
		return nil, nil
	}
	return loadConfigFile(def, cwd)
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil {
		return r
	}
	return p
}

func exitCode(rs []fileResult) int {
	code := exitOK
	for _, r := range rs {
		if r.IOErr != nil {
			code = max(code, exitIO)
		}
		for _, d := range r.Diags {
			if d.Severity == lint.Error {
				code = max(code, exitErrors)
			} else {
				code = max(code, exitWarnings)
			}
		}
	}
	return code
}

// checkAll reads and checks every input, files in parallel, keeping the
// input order in the result.
func checkAll(args []string, stdin io.Reader, stdinName string, set *settings) ([]fileResult, map[string][]byte, error) {
	var files []string
	var places []registryPlace
	var stdinSrc []byte
	for _, a := range args {
		if a == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, nil, fmt.Errorf("reading stdin: %w", err)
			}
			stdinSrc = b
			if set.selected(stdinName) {
				files = append(files, "-")
				places = append(places, placeOf(stdinName, ""))
			}
			continue
		}
		ex, err := expandInputs([]string{a})
		if err != nil {
			return nil, nil, err
		}
		dir := ""
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			dir = a
		}
		for _, f := range ex {
			if set.selected(f) {
				files = append(files, f)
				places = append(places, placeOf(f, dir))
			}
		}
	}
	results := make([]fileResult, len(files))
	srcList := make([][]byte, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if f == "-" {
				results[i] = fileResult{File: stdinName, Diags: checkSource(stdinName, stdinSrc, set.optionsFor(stdinName))}
				srcList[i] = stdinSrc
				return
			}
			src, err := os.ReadFile(f)
			if err != nil {
				results[i] = fileResult{File: f, IOErr: fmt.Errorf("couldn't read %s: %w", f, err)}
				return
			}
			results[i] = fileResult{File: f, Diags: checkSource(f, src, set.optionsFor(f))}
			srcList[i] = src
		}()
	}
	wg.Wait()
	checkRegistry(results, srcList, places, set)
	srcs := map[string][]byte{}
	for i, r := range results {
		if r.IOErr == nil {
			srcs[r.File] = srcList[i]
		}
	}
	return results, srcs, nil
}

// isTerminal reports whether w is a character device, so colours are only
// used on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
