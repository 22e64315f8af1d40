// Command redlua is the operators' and scripts' side of redlua: run a
// command while holding a lock, see who holds a lock, free a stuck one, and
// manage the Lua scripts the locks run on.
//
//	go install github.com/redlua/redlua/cmd/redlua@latest
//
// Usage:
//
//	redlua lock [flags] NAME [flags] -- CMD [ARGS...]  run CMD while holding the lock NAME
//	redlua inspect [--json] [--quorum] NAME...         who holds each lock, for how long
//	redlua unlock --force [--quorum] NAME...           free locks whose holder hangs
//	redlua scripts list [--dir DIR] [--json]           the scripts (embedded, or DIR's)
//	redlua scripts load [--dir DIR]                    SCRIPT LOAD them on the server
//	redlua scripts verify [--dir DIR] [--loaded]       check the sum file (and the server)
//
// Flags may stand before or after NAME (and between the names of inspect
// and unlock), up to "--": `redlua lock job --addr 10.0.0.5:6379 -- ./job.sh`
// takes the lock on 10.0.0.5. For lock, CMD starts at "--", or without it
// at the first argument after NAME that is not a flag. CMD is looked up
// before anything connects: a CMD that is not found (exit 127) or not
// executable (126) takes no lock and runs no script. `redlua COMMAND --help`
// shows each command's flags and examples.
//
// redlua lock works like flock(1) and `etcdctl lock`: it takes the lock
// (waiting for it unless --wait=false), renews the lease in the background
// while CMD runs, passes REDLUA_LOCK_NAME and REDLUA_FENCING_TOKEN to CMD,
// and releases the lock when CMD exits. CMD runs in its own process group:
// signals redlua receives (INT, TERM, HUP, QUIT) are passed on to it, and if
// the lease is lost (the server stopped answering until the lease ran out,
// or an operator ran `redlua unlock --force`) the whole group gets SIGTERM,
// then SIGKILL after --grace. Pass REDLUA_FENCING_TOKEN to the resource the
// lock guards so it can refuse writes from a holder that lost its lease.
//
// Every command takes the connection flags: --url (default $REDIS_URL, as
// redis://user:password@host:port/db, or rediss:// for TLS), or --addr
// (comma-separated addresses make a cluster client), --user, --password
// (default $REDISCLI_AUTH, as redis-cli), --db, --tls, --tls-skip-verify,
// --dial-timeout, and --sentinel NAME (then --addr lists the Sentinels and
// redlua connects to the primary they monitor as NAME; --sentinel-user and
// --sentinel-password, default $REDLUA_SENTINEL_AUTH, authenticate at the
// Sentinels). Without any, redlua connects to 127.0.0.1:6379, and to no
// other server.
//
// For a primary that can fail over, lock takes --replicas N: the
// acquisition and every renewal wait until N replicas acknowledged them
// (--replica-timeout, 1s), and an acquisition they did not confirm in time
// is undone (exit 69). --quorum makes lock a Redlock over the independent
// primaries --addr lists: a majority must grant it. inspect --quorum reports
// the owner that holds a majority and what each primary holds (exit 69, with
// each primary's view, when the primaries that did not answer could decide);
// unlock --force --quorum frees every primary it reaches, succeeds once a
// majority is free, and warns about the primaries it could not free.
//
// Exit codes:
//
//	0     success; for lock: CMD's own status (128+N when a signal N killed it)
//	1     a check failed: scripts verify found a changed or unrecorded script,
//	      or a script missing on the server (--loaded)
//	2     usage: unknown command or flag, bad value, missing NAME or CMD
//	69    the server could not be reached or answered with an error
//	75    lock: not acquired (held by another owner; --wait=false or --timeout)
//	124   lock: the lease was lost while CMD ran; CMD was stopped
//	126   lock: CMD could not be started (not executable)
//	127   lock: CMD was not found
//	130   lock: interrupted (SIGINT) while waiting for the lock, CMD not run;
//	      128+N for signal N (143 for SIGTERM)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func main() {
	if code, ok := guardMain(); ok {
		os.Exit(code) // redlua lock's guard of CMD (proc_unix.go)
	}
	// go-redis logs dial failures itself; redlua reports them once, in its
	// own words, so its log is switched off for this process.
	redis.SetLogger(quietLogger{})
	os.Exit(run(context.Background(), os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv))
}

// stdio are the streams a command uses; CMD of `redlua lock` inherits them.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

const usageText = `redlua: run commands under Redis locks, inspect and free locks, manage scripts

usage:
  redlua lock [flags] NAME [flags] -- CMD [ARGS...]  run CMD while holding the lock NAME
  redlua inspect [--json] [--quorum] NAME...         who holds each lock, for how long
  redlua unlock --force [--quorum] NAME...           free locks whose holder hangs
  redlua scripts list [--dir DIR] [--json]           the scripts (embedded, or DIR's)
  redlua scripts load [--dir DIR]                    SCRIPT LOAD them on the server
  redlua scripts verify [--dir DIR] [--loaded]       check the sum file (and the server)
  redlua version                                     the release (and its scripts' count)

Flags may stand before or after NAME; for lock, CMD starts at "--" (or at
the first argument after NAME that is not a flag).

Connection (every command): --url (default $REDIS_URL), --addr, --user,
--password (default $REDISCLI_AUTH), --db, --tls, --tls-skip-verify, --dial-timeout,
--sentinel NAME (--addr lists the Sentinels; --sentinel-user, --sentinel-password,
default $REDLUA_SENTINEL_AUTH). Without --url, --addr or $REDIS_URL: ` + defaultAddr + `.
lock also takes --replicas N; lock, inspect and unlock take --quorum (--addr
lists independent primaries). 'redlua COMMAND --help' lists a command's flags.

examples:
  redlua lock --timeout 10m nightly-report -- ./report.sh --full
  redlua inspect --addr 10.0.0.5:6379 nightly-report
  redlua unlock --force nightly-report

exit codes: 0 ok (lock: CMD's status), 1 check failed, 2 usage, 69 server
unreachable or error, 75 not acquired, 124 lease lost (CMD stopped),
126 CMD not executable, 127 CMD not found, 130 interrupted (SIGINT) while
waiting for the lock, 128+N signal N
`

// run is the whole command, with its environment passed in.
func run(ctx context.Context, args []string, io stdio, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(io.err, usageText)
		return exitUsage
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "lock":
		err = cmdLock(ctx, rest, io, getenv)
	case "inspect":
		err = cmdInspect(ctx, rest, io, getenv)
	case "unlock":
		err = cmdUnlock(ctx, rest, io, getenv)
	case "scripts":
		err = cmdScripts(ctx, rest, io, getenv)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(io.out, usageText)
		return exitOK
	case "version", "--version":
		if len(rest) > 0 {
			err = usageErrorf("version takes no arguments, got %q", rest)
			break
		}
		fmt.Fprintf(io.out, "redlua %s\n", locks.Version)
		return exitOK
	default:
		err = usageErrorf("unknown command %q; the commands are lock, inspect, unlock, scripts and version", cmd)
	}
	return report(io.err, commandName(args), err)
}

// commandName is what errors of args' command start with: "lock",
// "scripts list"; "" for an unknown command.
func commandName(args []string) string {
	switch args[0] {
	case "lock", "inspect", "unlock":
		return args[0]
	case "scripts":
		if len(args) > 1 && (args[1] == "list" || args[1] == "load" || args[1] == "verify") {
			return "scripts " + args[1]
		}
		return "scripts"
	}
	return ""
}

// report prints err once, as "redlua COMMAND: ...", and returns its exit
// code. A usage error also says where the command's help is.
func report(w io.Writer, command string, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		ee = &exitError{code: exitFailed, err: err}
	}
	if ee.err == nil || errors.Is(ee.err, errQuiet) {
		return ee.code
	}
	prefix, help := "redlua: ", "redlua --help"
	if command != "" {
		prefix, help = "redlua "+command+": ", "redlua "+command+" --help"
	}
	msg := strings.TrimPrefix(ee.err.Error(), prefix)
	if ee.usage {
		msg += "; see '" + help + "'"
	}
	fmt.Fprintln(w, prefix+msg)
	return ee.code
}
