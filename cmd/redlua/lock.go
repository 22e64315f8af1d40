package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"

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

type lockFlags struct {
	ttl, timeout, grace, waiterTTL time.Duration
	wait, noWait, fair, verbose    bool
	label                          string
	replicas                       int
	replicaTimeout                 time.Duration
}

func cmdLock(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("lock", "redlua lock [flags] NAME -- CMD [ARGS...]", getenv)
	var f lockFlags
	c.fs.DurationVar(&f.ttl, "ttl", locks.DefaultTTL, "lease length; the watchdog renews it while CMD runs, and it frees the lock this long after redlua dies")
	c.fs.BoolVar(&f.wait, "wait", true, "wait for the lock; --wait=false tries once (exit 75 when held)")
	c.fs.BoolVar(&f.noWait, "n", false, "short for --wait=false")
	c.fs.DurationVar(&f.timeout, "timeout", 0, "give up waiting after this long, exit 75 (0: wait until interrupted)")
	c.fs.BoolVar(&f.fair, "fair", false, "take the lock in arrival order")
	c.fs.DurationVar(&f.waiterTTL, "waiter-ttl", locks.DefaultWaiterTTL, "how long a dead waiter can hold up the queue (waiters queue with or without --fair)")
	c.fs.StringVar(&f.label, "label", "", "holder label that 'redlua inspect' shows (default: redlua lock CMD)")
	c.fs.DurationVar(&f.grace, "grace", 10*time.Second, "after a lost lease, how long CMD gets between SIGTERM and SIGKILL")
	c.fs.BoolVar(&f.verbose, "v", false, "report the acquisition and release on stderr")
	c.fs.IntVar(&f.replicas, "replicas", 0, "wait until this many replicas acknowledged the acquisition and every renewal, so a failover keeps the lock (0: do not wait)")
	c.fs.DurationVar(&f.replicaTimeout, "replica-timeout", time.Second, "with --replicas: how long to wait for them; fewer in time undo the acquisition (exit 69) or fail the renewal")
	c.conn.addQuorumFlag(c.fs)
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	rest := c.fs.Args()
	if len(rest) == 0 {
		return usageErrorf("lock: missing NAME and CMD, as in: redlua lock nightly-report -- ./report.sh")
	}
	name, argv := rest[0], rest[1:]
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return usageErrorf("lock %s: missing CMD to run under the lock, as in: redlua lock %s -- ./job.sh", name, name)
	}
	switch {
	case f.timeout < 0:
		return usageErrorf("lock: --timeout %v must be 0 (no limit) or positive", f.timeout)
	case f.grace <= 0:
		return usageErrorf("lock: --grace %v must be positive, such as 10s", f.grace)
	case f.noWait && f.timeout > 0:
		return usageErrorf("lock: -n (do not wait) and --timeout exclude each other")
	case !f.wait && f.timeout > 0:
		return usageErrorf("lock: --wait=false and --timeout exclude each other")
	case f.replicas < 0:
		return usageErrorf("lock: --replicas %d must be 0 (do not wait) or more", f.replicas)
	case f.replicas > 0 && f.replicaTimeout <= 0:
		return usageErrorf("lock: --replica-timeout %v must be positive, such as 1s", f.replicaTimeout)
	case c.conn.set["replica-timeout"] && f.replicas == 0:
		return usageErrorf("lock: --replica-timeout applies only with --replicas N")
	case f.replicas > 0 && c.conn.quorum:
		return usageErrorf("lock: --replicas and --quorum exclude each other: a quorum of independent primaries replaces replicas")
	case f.fair && c.conn.quorum:
		return usageErrorf("lock: --fair does not apply to --quorum: a fair queue would need one order agreed by all primaries")
	case c.conn.set["waiter-ttl"] && c.conn.quorum:
		return usageErrorf("lock: --waiter-ttl does not apply to --quorum: waiters on a quorum do not queue")
	}
	if f.noWait {
		f.wait = false
	}
	if f.label == "" {
		f.label = "redlua lock " + strings.Join(argv, " ")
		if len(f.label) > 200 {
			f.label = f.label[:200] + "…"
		}
	}
	opts := []locks.Option{locks.WithTTL(f.ttl), locks.WithWatchdog(locks.DefaultRenewFraction), locks.WithLabel(f.label)}
	switch {
	case c.conn.quorum: // waiters on a quorum do not queue
	case f.fair:
		opts = append(opts, locks.WithFair(f.waiterTTL))
	default:
		opts = append(opts, locks.WithWaiterTTL(f.waiterTTL))
	}

	var clientOpts []locks.Option
	if f.replicas > 0 {
		clientOpts = append(clientOpts, locks.WithReplicas(f.replicas, f.replicaTimeout))
	}
	lc, closeAll, err := lockClient(ctx, c, clientOpts...)
	if err != nil {
		return err
	}
	defer closeAll()
	m, err := lc.Mutex(name, opts...)
	if err != nil {
		return exitWith(exitUsage, err) // a bad name or option value
	}

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
		fmt.Fprintf(io.err, "redlua: lock %s: acquired, fencing token %d\n", name, lease.Token())
	}
	return runHolding(lc, lease, argv, f, io, sigs)
}

// interrupted is the cause of a wait cancelled by a signal.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string { return "interrupted by " + i.sig.String() }

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
		return nil, exitWith(exitSignalBase+signalNumber(intr.sig), fmt.Errorf("lock %s: %v while waiting for the lock", m.Name(), intr))
	}
	switch {
	case err == nil:
		return lease, nil
	case errors.Is(err, locks.ErrNotAcquired):
		return nil, exitWith(exitNotAcquired, fmt.Errorf("lock %s: not acquired: %s", m.Name(), holderText(ctx, lc, m.Name())))
	case errors.Is(context.Cause(waitCtx), errTimedOut):
		return nil, exitWith(exitNotAcquired, fmt.Errorf("lock %s: not acquired within --timeout %v: %s", m.Name(), f.timeout, holderText(ctx, lc, m.Name())))
	}
	return nil, unavailable(err)
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

// runHolding runs argv while the lease is held, stops it if the lease is
// lost, and releases the lock when it exits.
func runHolding(lc *locks.Client, lease *locks.Lease, argv []string, f lockFlags, io stdio, sigs <-chan os.Signal) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.in, io.out, io.err
	cmd.Env = append(os.Environ(), envLockName+"="+lease.Name(), envToken+"="+strconv.FormatInt(lease.Token(), 10))
	inOwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		release(lease)
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		return exitWith(code, fmt.Errorf("lock %s: cannot run %s: %w", lease.Name(), argv[0], err))
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

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
			lost = lease.Err()
			fmt.Fprintf(io.err, "redlua: lock %s: %v; stopping %s (SIGTERM, SIGKILL after %v)\n", lease.Name(), lost, argv[0], f.grace)
			signalGroup(cmd, sigTerm)
			kill = time.After(f.grace)
		case <-kill:
			signalGroup(cmd, sigKill)
		case s := <-sigs:
			signalGroup(cmd, s)
		}
	}
	if lost == nil {
		if err := releaseErr(lease); errors.Is(err, locks.ErrLockLost) {
			lost = err
		} else if err != nil {
			// CMD ran under the lock; only the release failed, and the
			// lease runs out by itself.
			fmt.Fprintf(io.err, "redlua: lock %s: release failed, the lock frees itself within --ttl %v: %v\n", lease.Name(), f.ttl, err)
		} else if f.verbose {
			fmt.Fprintf(io.err, "redlua: lock %s: released\n", lease.Name())
		}
	}
	if lost != nil {
		return exitWith(exitLost, fmt.Errorf("lock %s: the lease was lost while %s ran: %w", lease.Name(), argv[0], lost))
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

func releaseErr(lease *locks.Lease) error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	return lease.Unlock(ctx)
}

func release(lease *locks.Lease) { _ = releaseErr(lease) }
