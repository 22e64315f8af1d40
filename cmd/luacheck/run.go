package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
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

Checks Redis Lua scripts. Directories are searched recursively for *.lua;
globs may use **; "-" reads stdin (name it with --filename).

Options:
  --formatter NAME      default, plain, JSON, sarif, github, JUnit
  --codes               show warning codes
  --ranges              show column ranges
  --filename NAME       name to report for stdin
  --no-color            no colours in the default report
  --sum FILE            verify a redlua sum file: every released name@version
                        it records must be among the scripts, unchanged
  -q, -qq, -qqq         hide clean files / diagnostics / per-file lines
  --version             print the version
  --help                print this help

Exit codes: 0 no warnings or errors, 1 warnings only, 2 errors (syntax or
error severity), 3 I/O errors (unreadable files), 4 bad usage.
`

// run is the whole CLI without process exit, so tests drive it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("luacheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	formatter := fs.String("formatter", "default", "")
	codes := fs.Bool("codes", false, "")
	ranges := fs.Bool("ranges", false, "")
	filename := fs.String("filename", "stdin", "")
	noColor := fs.Bool("no-color", false, "")
	showVersion := fs.Bool("version", false, "")
	help := fs.Bool("help", false, "")
	sumFile := fs.String("sum", "", "")
	q1 := fs.Bool("q", false, "")
	q2 := fs.Bool("qq", false, "")
	q3 := fs.Bool("qqq", false, "")
	if err := fs.Parse(reorder(args)); err != nil {
		fmt.Fprintf(stderr, "luacheck: %v\n%s", err, usage)
		return exitCritical
	}
	if *help {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if *showVersion {
		fmt.Fprintf(stdout, "redlua luacheck %s\n", version)
		return exitOK
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "luacheck: no files given\n%s", usage)
		return exitCritical
	}
	opts := reportOpts{codes: *codes, ranges: *ranges, color: !*noColor && isTerminal(stdout)}
	switch {
	case *q3:
		opts.quiet = 3
	case *q2:
		opts.quiet = 2
	case *q1:
		opts.quiet = 1
	}
	results, srcs, err := checkAll(fs.Args(), stdin, *filename)
	if err != nil {
		fmt.Fprintf(stderr, "luacheck: %v\n", err)
		return exitCritical
	}
	switch strings.ToLower(*formatter) {
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
		fmt.Fprintf(stderr, "luacheck: unknown formatter %q (use default, plain, JSON, sarif, github or JUnit)\n", *formatter)
		return exitCritical
	}
	if err != nil {
		fmt.Fprintf(stderr, "luacheck: %v\n", err)
		return exitIO
	}
	code := exitCode(results)
	if *sumFile != "" {
		sumCode, err := verifySum(*sumFile, results, srcs)
		if err != nil {
			fmt.Fprintf(stderr, "luacheck: %v\n", err)
		}
		code = max(code, sumCode)
	}
	return code
}

// reorder moves operands after flags so "luacheck a.lua --codes" works as
// it does with luacheck; "-" is an operand.
func reorder(args []string) []string {
	var flags, ops []string
	valued := map[string]bool{"--formatter": true, "-formatter": true, "--filename": true, "-filename": true, "--sum": true, "-sum": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if a != "-" && strings.HasPrefix(a, "-") {
			flags = append(flags, a)
			if valued[a] && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		ops = append(ops, a)
	}
	return append(append(flags, "--"), ops...)
}

func exitCode(rs []fileResult) int {
	code := exitOK
	for _, r := range rs {
		if r.IOErr != nil {
			code = max(code, exitIO)
		}
		for _, d := range r.Diags {
			if d.Severity == sevError {
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
func checkAll(args []string, stdin io.Reader, stdinName string) ([]fileResult, map[string][]byte, error) {
	var files []string
	var stdinSrc []byte
	for _, a := range args {
		if a == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, nil, fmt.Errorf("reading stdin: %w", err)
			}
			stdinSrc = b
			files = append(files, "-")
			continue
		}
		ex, err := expandInputs([]string{a})
		if err != nil {
			return nil, nil, err
		}
		files = append(files, ex...)
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
				results[i] = fileResult{File: stdinName, Diags: checkSource(stdinName, stdinSrc, nil)}
				srcList[i] = stdinSrc
				return
			}
			src, err := os.ReadFile(f)
			if err != nil {
				results[i] = fileResult{File: f, IOErr: fmt.Errorf("couldn't read %s: %w", f, err)}
				return
			}
			results[i] = fileResult{File: f, Diags: checkSource(f, src, nil)}
			srcList[i] = src
		}()
	}
	wg.Wait()
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
