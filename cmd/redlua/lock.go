package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redlua/redlua/locks"
)

// Environment variables CMD gets.
const (
	envLockName = "REDLUA_LOCK_NAME"
	envToken    = "REDLUA_FENCING_TOKEN"
)

// releaseTimeout bounds the Unlock after CMD exits: if the server does not
// answer, the lease runs out by itself.
const releaseTimeout = 10 * time.Second

// minWaiterTTL is the shortest --waiter-ttl locks.WithWaiterTTL and
// locks.WithFair accept.
const minWaiterTTL = 10 * time.Millisecond

type lockFlags struct {
	ttl, timeout, grace, waiterTTL time.Duration
	wait, noWait, fair, verbose    bool
	label                          string
	replicas                       int
	replicaTimeout                 time.Duration
}

const lockHelp = `redlua lock [flags] NAME [flags] -- CMD [ARGS...]

Takes the lock NAME (waiting for it unless --wait=false), runs CMD while the
lease is renewed in the background, and releases the lock when CMD exits.
CMD gets REDLUA_LOCK_NAME and REDLUA_FENCING_TOKEN. If the lease is lost
(it ran out, or 'redlua unlock --force' revoked it), CMD's process group
gets SIGTERM, then SIGKILL after --grace; redlua waits for CMD to exit and
only then releases the lock (after a forced unlock, that release hands the
lock to the next waiter), and exits 124. Keep --grace shorter than the
forced unlock's own --grace, or the next holder may start while CMD runs.
If redlua dies, even by SIGKILL, a guard kills CMD's process group (on Linux
at once, on other unix systems within 250ms; not on Windows).

Flags may stand before or after NAME. CMD starts at "--", or without it at
the first argument after NAME that is not a flag; use "--" when CMD's first
word could be read as a flag. CMD is looked up ($PATH, unless it names a
path) before anything connects: when it is not found (exit 127) or not
executable (exit 126), no lock is taken and no server is asked.

examples:
  # the nightly report, once at a time; give up after waiting 10 minutes (exit 75)
  redlua lock --timeout 10m nightly-report -- ./report.sh --full
  # skip this run if another holds the lock, on the server at 10.0.0.5
  redlua lock nightly-report --wait=false --addr 10.0.0.5:6379 -- ./report.sh
  # a 2-minute lease, and the label 'redlua inspect' shows
  redlua lock --ttl 2m --label "backup db1" backup-db1 -- sh -c 'pg_dump db1 > db1.sql'

exit codes: CMD's own status (128+N when signal N killed it); 2 usage;
69 server unreachable or error; 75 not acquired (--wait=false, --timeout);
124 the lease was lost while CMD ran (CMD was stopped); 126 CMD not
executable; 127 CMD not found; 130 interrupted by SIGINT (Ctrl-C) while
waiting for the lock, CMD not run (128+N for signal N: 143 for SIGTERM)
`

func cmdLock(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("lock", lockHelp, getenv)
	c.maxArgs = 1 // NAME; CMD and its own flags follow
	var f lockFlags
	c.fs.DurationVar(&f.ttl, "ttl", locks.DefaultTTL, "lease length (at least "+locks.MinTTL.String()+"); the watchdog renews it while CMD runs, and it frees the lock this long after redlua dies")
	c.fs.BoolVar(&f.wait, "wait", true, "wait for the lock; --wait=false tries once (exit 75 when held)")
	c.fs.BoolVar(&f.noWait, "n", false, "short for --wait=false")
	c.fs.DurationVar(&f.timeout, "timeout", 0, "give up waiting after this long, exit 75 (0: wait until interrupted)")
	c.fs.BoolVar(&f.fair, "fair", false, "take the lock in arrival order")
	c.fs.DurationVar(&f.waiterTTL, "waiter-ttl", locks.DefaultWaiterTTL, "how long a dead waiter can hold up the queue, at least "+minWaiterTTL.String()+" (waiters queue with or without --fair)")
	c.fs.StringVar(&f.label, "label", "", "holder label that 'redlua inspect' shows (default: redlua lock CMD)")
	c.fs.DurationVar(&f.grace, "grace", 5*time.Second, "after a lost lease, how long CMD gets between SIGTERM and SIGKILL (keep it below 'redlua unlock --force --grace', 10s by default)")
	c.fs.BoolVar(&f.verbose, "v", false, "report the acquisition and release on stderr")
	c.fs.IntVar(&f.replicas, "replicas", 0, "wait until this many replicas acknowledged the acquisition and every renewal, so a failover keeps the lock (0: do not wait)")
	c.fs.DurationVar(&f.replicaTimeout, "replica-timeout", time.Second, "with --replicas: how long to wait for them; fewer in time undo the acquisition (exit 69) or fail the renewal")
	c.conn.addQuorumFlag(c.fs)
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	if len(c.args) == 0 {
		return usageErrorf("missing NAME and CMD, as in: redlua lock nightly-report -- ./report.sh")
	}
	name, argv := c.args[0], c.args[1:]
	if len(argv) == 0 {
		return usageErrorf("missing CMD to run under the lock %s, as in: redlua lock %s -- ./job.sh", name, name)
	}
	if err := f.check(c.conn); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	if f.noWait {
		f.wait = false
	}
	if f.label == "" {
		f.label = defaultLabel(argv)
	}
	// CMD is found before anything connects: a typo must not take (and
	// keep for a TTL) a lock, nor run a script on the server.
	path, err := resolveCmd(name, argv[0])
	if err != nil {
		return err
	}
	opts := []flagOption{
		{"--ttl " + f.ttl.String(), locks.WithTTL(f.ttl)},
		{"--ttl " + f.ttl.String() + " (renewed every third of it)", locks.WithWatchdog(locks.DefaultRenewFraction)},
		{"--label " + strconv.Quote(f.label), locks.WithLabel(f.label)},
		{"(the release timeout)", locks.WithReleaseTimeout(releaseTimeout)},
	}
	switch {
	case c.conn.quorum: // waiters on a quorum do not queue
	case f.fair:
		opts = append(opts, flagOption{"--fair --waiter-ttl " + f.waiterTTL.String(), locks.WithFair(f.waiterTTL)})
	default:
		opts = append(opts, flagOption{"--waiter-ttl " + f.waiterTTL.String(), locks.WithWaiterTTL(f.waiterTTL)})
	}

	var clientOpts []locks.Option
	if f.replicas > 0 {
		clientOpts = append(clientOpts, locks.WithReplicas(f.replicas, f.replicaTimeout))
	}
	var m *locks.Mutex
	makeMutex := func(lc *locks.Client) error {
		var err error
		m, err = newMutex(lc, name, opts)
		return err
	}
	lc, closeAll, err := lockClient(ctx, c, makeMutex, clientOpts...)
	if err != nil {
		return err
	}
	defer closeAll()

	// Signals are caught from here on: while waiting they cancel the wait,
	// while CMD runs they are passed on to it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)

	lease, err := acquire(ctx, lc, m, f, sigs)
	if err != nil {
		return err
	}
	if f.verbose {
		fmt.Fprintf(io.err, "redlua lock: %s: acquired, fencing token %d\n", name, lease.Token())
	}
	return runHolding(lease, path, argv, f, io, sigs)
}

// maxLabel bounds the default label, in bytes: a long command line would
// otherwise be stored with every acquisition.
const maxLabel = 200

// defaultLabel is the label of a lock without --label: the command line,
// cut to maxLabel bytes at a character boundary.
func defaultLabel(argv []string) string {
	label := "redlua lock " + strings.Join(argv, " ")
	if len(label) <= maxLabel {
		return label
	}
	cut := maxLabel
	for cut > 0 && !utf8.RuneStart(label[cut]) {
		cut--
	}
	return label[:cut] + "…"
}

// check rejects flag values (exit 2) in the CLI's words, naming the flag
// and what to give instead.
func (f *lockFlags) check(conn *connFlags) error {
	switch {
	case f.ttl < locks.MinTTL:
		return usageErrorf("--ttl %v is too short: a lease lasts at least %v; give a longer one, such as --ttl %v (the default)", f.ttl, locks.MinTTL, locks.DefaultTTL)
	case f.waiterTTL < minWaiterTTL:
		return usageErrorf("--waiter-ttl %v is too short: a waiter's place in the queue lasts at least %v; give a longer one, such as --waiter-ttl %v (the default)", f.waiterTTL, minWaiterTTL, locks.DefaultWaiterTTL)
	case f.timeout < 0:
		return usageErrorf("--timeout %v must be 0 (no limit) or positive, such as --timeout 10m", f.timeout)
	case f.grace <= 0:
		return usageErrorf("--grace %v must be positive, such as --grace 5s (the default)", f.grace)
	case f.noWait && f.timeout > 0:
		return usageErrorf("-n (do not wait) and --timeout exclude each other; drop one")
	case !f.wait && f.timeout > 0:
		return usageErrorf("--wait=false and --timeout exclude each other; drop one")
	case f.replicas < 0:
		return usageErrorf("--replicas %d must be 0 (do not wait) or more", f.replicas)
	case f.replicas > 0 && f.replicaTimeout <= 0:
		return usageErrorf("--replica-timeout %v must be positive, such as --replica-timeout 1s", f.replicaTimeout)
	case conn.set["replica-timeout"] && f.replicas == 0:
		return usageErrorf("--replica-timeout applies only with --replicas N; add --replicas 1, or drop it")
	case f.replicas > 0 && conn.quorum:
		return usageErrorf("--replicas and --quorum exclude each other: a quorum of independent primaries replaces replicas")
	case f.fair && conn.quorum:
		return usageErrorf("--fair does not apply to --quorum: a fair queue would need one order agreed by all primaries")
	case conn.set["waiter-ttl"] && conn.quorum:
		return usageErrorf("--waiter-ttl does not apply to --quorum: waiters on a quorum do not queue")
	}
	return nil
}

// flagOption is a lock option with the flags that asked for it.
type flagOption struct {
	flags string
	opt   locks.Option
}

// newMutex makes the Mutex. When locks refuses an option that check let
// through, the error names the flag that asked for it (exit 2).
func newMutex(lc *locks.Client, name string, opts []flagOption) (*locks.Mutex, error) {
	all := make([]locks.Option, len(opts))
	for i, o := range opts {
		all[i] = o.opt
	}
	m, err := lc.Mutex(name, all...)
	if err == nil {
		return m, nil
	}
	if _, nameErr := lc.Mutex(name); nameErr != nil {
		return nil, usageErrorf("NAME %q is refused: %s", name, libText(nameErr, name))
	}
	for _, o := range opts {
		if _, optErr := lc.Mutex(name, o.opt); optErr != nil {
			return nil, usageErrorf("%s is refused: %s", o.flags, libText(optErr, name))
		}
	}
	return nil, usageErrorf("these flags are refused together: %s", libText(err, name))
}

// resolveCmd finds CMD as exec.Command would, and says in the CLI's words
// why it cannot run (exit 127 not found, 126 not executable).
func resolveCmd(name, cmd string) (string, error) {
	path, err := exec.LookPath(cmd)
	if err == nil {
		return path, nil
	}
	code, why := exitCannotRun, ""
	switch {
	case errors.Is(err, exec.ErrDot):
		why = "it is found only through a relative directory in $PATH; name it as ./" + cmd
	case errors.Is(err, exec.ErrNotFound) && !strings.ContainsRune(cmd, filepath.Separator):
		code, why = exitNotFound, "not found in $PATH; check the spelling, or give its path"
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		code, why = exitNotFound, "no such file"
	case errors.Is(err, fs.ErrPermission):
		why = "not executable; chmod +x it, or name its interpreter, as in: -- sh " + cmd
	default:
		why = err.Error()
		if ee := (*exec.Error)(nil); errors.As(err, &ee) {
			why = ee.Err.Error()
		}
	}
	return "", exitWith(code, fmt.Errorf("cannot run %s: %s (the lock %s was not taken)", cmd, why, name))
}

// interrupted is the cause of a wait cancelled by a signal.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

var errTimedOut = errors.New("timed out")

// acquire takes the lock as the flags say, and maps failures to exit codes.
func acquire(ctx context.Context, lc *locks.Client, m *locks.Mutex, f lockFlags, sigs <-chan os.Signal) (*locks.Lease, error) {
	waitCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if f.timeout > 0 {
		var cancelTimeout context.CancelFunc
		waitCtx, cancelTimeout = context.WithTimeoutCause(waitCtx, f.timeout, errTimedOut)
		defer cancelTimeout()
	}
	stop := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(interrupted{s})
		case <-stop:
		}
	}()
	var lease *locks.Lease
	var err error
	if f.wait {
		lease, err = m.Lock(waitCtx)
	} else {
		lease, err = m.TryLock(waitCtx)
	}
	close(stop)
	// A signal that came as the lock was granted still means "stop".
	var intr interrupted
	if errors.As(context.Cause(waitCtx), &intr) {
		if lease != nil {
			release(lease)
		}
		return nil, exitWith(exitSignalBase+signalNumber(intr.sig), fmt.Errorf("%s: %v while waiting for the lock; CMD did not run", m.Name(), intr))
	}
	switch {
	case err == nil:
		return lease, nil
	case errors.Is(err, locks.ErrNotAcquired):
		return nil, exitWith(exitNotAcquired, fmt.Errorf("%s: not acquired: %s", m.Name(), holderText(ctx, lc, m.Name())))
	case errors.Is(context.Cause(waitCtx), errTimedOut):
		return nil, exitWith(exitNotAcquired, fmt.Errorf("%s: not acquired within --timeout %v: %s", m.Name(), f.timeout, holderText(ctx, lc, m.Name())))
	}
	return nil, unavailable(fmt.Errorf("%s: taking the lock: %w", m.Name(), libErr(err, m.Name())))
}

// holderText says who holds the lock, for the "not acquired" message.
func holderText(ctx context.Context, lc *locks.Client, name string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := lc.Inspect(ctx, name)
	switch {
	case err != nil:
		return "held by another owner"
	case !info.Held:
		return "held by another owner until just now"
	}
	return "held by " + describeHolder(info)
}

// runHolding runs argv (argv[0] found at path) while the lease is held,
// stops it if the lease is lost, and releases the lock when it exits.
func runHolding(lease *locks.Lease, path string, argv []string, f lockFlags, io stdio, sigs <-chan os.Signal) error {
	// CMD sees the name it was given, as from a shell. On unix a guard
	// runs it, so that it dies with redlua (see guarded).
	cmd := guarded(path, argv)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.in, io.out, io.err
	cmd.Env = append(cmd.Environ(), envLockName+"="+lease.Name(), envToken+"="+strconv.FormatInt(lease.Token(), 10))
	inOwnGroup(cmd)
	exited, err := startLocked(cmd)
	if err != nil {
		// resolveCmd found it; it changed since.
		release(lease)
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		return exitWith(code, fmt.Errorf("%s: cannot run %s: %w (the lock was released)", lease.Name(), argv[0], err))
	}

	var lost error
	var kill <-chan time.Time
	done := lease.Done()
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-exited:
			break wait
		case <-done:
			done = nil // closed: do not select it again
			lost = libErr(lease.Err(), lease.Name())
			fmt.Fprintf(io.err, "redlua lock: %s: %v; stopping %s (SIGTERM, SIGKILL after --grace %v)\n", lease.Name(), lost, argv[0], f.grace)
			signalGroup(cmd, sigTerm)
			kill = time.After(f.grace)
		case <-kill:
			signalGroup(cmd, sigKill)
		case s := <-sigs:
			signalGroup(cmd, s)
		}
	}
	if lost != nil {
		// CMD has exited: the release tells the server that this holder
		// stopped. After a forced unlock it frees the lock (or hands it to
		// the next waiter) before the revocation's grace period ends; after
		// a lease that ran out it finds the lock gone or taken, which is
		// already reported.
		_ = releaseErr(lease)
	} else {
		if err := releaseErr(lease); errors.Is(err, locks.ErrLockLost) && !errors.Is(err, locks.ErrNotReleased) {
			lost = libErr(err, lease.Name())
		} else if err != nil {
			// CMD ran under the lock; only the release failed, and the
			// lease runs out by itself.
			fmt.Fprintf(io.err, "redlua lock: %s: release failed, the lock frees itself within --ttl %v: %v\n", lease.Name(), f.ttl, libErr(err, lease.Name()))
		} else if f.verbose {
			fmt.Fprintf(io.err, "redlua lock: %s: released\n", lease.Name())
		}
	}
	if lost != nil {
		return exitWith(exitLost, fmt.Errorf("%s: the lease was lost while %s ran: %w", lease.Name(), argv[0], lost))
	}
	return exitWith(exitStatus(cmd, waitErr), errQuiet)
}

// exitStatus is CMD's exit status as a shell reports it.
func exitStatus(cmd *exec.Cmd, waitErr error) int {
	if waitErr == nil {
		return exitOK
	}
	if st := cmd.ProcessState; st != nil {
		if code := st.ExitCode(); code >= 0 {
			return code
		}
		if n, ok := killedBy(st); ok {
			return exitSignalBase + n
		}
	}
	return exitFailed
}

// releaseErr releases the lock, waiting at most releaseTimeout (the
// Mutex's WithReleaseTimeout).
func releaseErr(lease *locks.Lease) error { return lease.Unlock(context.Background()) }

func release(lease *locks.Lease) { _ = releaseErr(lease) }
