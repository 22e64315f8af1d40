package redistest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const skipHint = "redis-server not found: install it (apt-get install -y redis-server) or run bash .ci/run; " +
	"set REDLUA_REQUIRE_SERVER=1 to make this a failure, or REDLUA_REDIS_SERVER to name the binary"

// Option configures the servers a helper starts.
type Option func(*config)

type config struct {
	binary string
	args   []string
}

// WithArgs adds redis-server command-line arguments, such as
// WithArgs("--maxmemory", "10mb").
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithBinary runs the given redis-server binary instead of the one on PATH.
func WithBinary(path string) Option { return func(c *config) { c.binary = path } }

func newConfig(opts []Option) *config {
	c := &config{binary: os.Getenv("REDLUA_REDIS_SERVER")}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Available reports the redis-server binary that tests would run.
func Available(opts ...Option) (path string, ok bool) {
	return newConfig(opts).find()
}

func (c *config) find() (string, bool) {
	if c.binary != "" {
		p, err := exec.LookPath(c.binary)
		return p, err == nil
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, true
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// RequireServer skips the test when redis-server is missing, or fails it
// when REDLUA_REQUIRE_SERVER=1. It returns the binary's path.
func RequireServer(t testing.TB, opts ...Option) string {
	t.Helper()
	path, ok := newConfig(opts).find()
	if !ok {
		missing(t)
	}
	return path
}

func missing(t testing.TB) {
	t.Helper()
	if os.Getenv("REDLUA_REQUIRE_SERVER") == "1" {
		t.Fatal(skipHint)
	}
	t.Skip(skipHint)
}

// Server is one running redis-server process.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int

	t       testing.TB
	binary  string
	dir     string
	args    []string
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	paused  bool
	clients []*redis.Client
}

// Standalone starts one redis-server for the test.
func Standalone(t testing.TB, opts ...Option) *Server {
	t.Helper()
	c := newConfig(opts)
	bin := RequireServer(t, opts...)
	return start(t, bin, c.args, 0)
}

func start(t testing.TB, bin string, extra []string, busPort int) *Server {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: finding a free port: %v", err)
		}
		dir, err := os.MkdirTemp("", "redistest-"+strconv.Itoa(port)+"-")
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, t: t, binary: bin, dir: dir}
		s.args = append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"),
			"--enable-debug-command", "local", "--protected-mode", "no",
			// Replicas sync at once instead of after the default 5 s batching delay.
			"--repl-diskless-sync-delay", "0",
		}, extra...)
		if busPort > 0 {
			s.args = append(s.args, "--cluster-port", strconv.Itoa(busPort))
		}
		t.Cleanup(s.stop)
		if lastErr = s.launch(); lastErr == nil {
			return s
		}
		s.stop()
	}
	t.Fatalf("redistest: redis-server would not start: %v", lastErr)
	return nil
}

func (s *Server) launch() error {
	cmd := exec.Command(s.binary, s.args...)
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.binary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited, s.paused = cmd, exited, false
	s.mu.Unlock()
	return s.waitReady(exited, cmd.Process.Pid)
}

// waitReady waits until the process started as pid answers on s.Addr. It
// asks the server for its process id: a port found free can be taken by
// another test run's server before this one binds it, and this one then
// exits while the other answers PING in its place (and is later stopped by
// its own test).
func (s *Server) waitReady(exited chan struct{}, pid int) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited at start; log:\n%s", s.Addr, s.Log())
		default:
		}
		if got, err := serverPid(s.Addr); err == nil {
			if got != pid {
				return fmt.Errorf("%s is answered by process %d, not the redis-server started as %d (another test run took the port)", s.Addr, got, pid)
			}
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on %s did not answer within 10s; log:\n%s", s.Addr, s.Log())
}

// serverPid asks the server at addr for its process id (INFO server's
// process_id, which Sentinel reports too).
func serverPid(addr string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("INFO server\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if !strings.HasPrefix(head, "$") || err != nil {
		return 0, fmt.Errorf("INFO server: reply %q", head) // loading, or not yet a server
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server has no process_id")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Client returns a new go-redis client for the server, closed when the test
// ends. opts may adjust its options (timeouts, protocol).
func (s *Server) Client(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.Addr}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	s.mu.Lock()
	s.clients = append(s.clients, c)
	s.mu.Unlock()
	return c
}

// Pause stops the process (SIGSTOP): it keeps its connections but answers
// nothing, as a server stuck in a long command or a network partition would.
// It returns once the process has stopped (the kernel stops its threads
// after kill returned).
func (s *Server) Pause() {
	s.signal(syscall.SIGSTOP, true)
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for !stopped(cmd.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// stopped reports whether the main thread of pid is stopped (state T in
// /proc; redis-server's other threads do not answer clients).
func stopped(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone, or no /proc: nothing to wait for
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'T' || stat[i+2] == 't'
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT, false) }

func (s *Server) signal(sig syscall.Signal, paused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if err := s.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Errorf("redistest: signal %v to %s: %v", sig, s.Addr, err)
	}
	s.paused = paused
}

// Kill ends the process at once (SIGKILL) and waits for it to exit.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited, paused := s.cmd, s.exited, s.paused
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
	if paused {
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}
	<-exited
}

// Restart kills the process and starts a fresh one on the same port and
// data directory. With the default arguments the data is gone (nothing is
// saved), as after a crash without persistence; a server started
// WithArgs("--appendonly", "yes", "--appendfsync", "always") reloads its
// append-only file, as after a crash with persistence.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond) // the port may linger for a moment
	}
	t.Fatalf("redistest: restarting %s: %v", s.Addr, err)
}

// Log returns the server's log file.
func (s *Server) Log() string {
	data, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return string(data)
}

// Do runs one command on a short-lived connection, for setup steps.
func (s *Server) Do(ctx context.Context, args ...any) *redis.Cmd {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	return c.Do(ctx, args...)
}

func (s *Server) stop() {
	s.mu.Lock()
	clients := s.clients
	s.clients = nil
	s.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	s.Kill()
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// PrimaryReplica starts a primary and a replica of it, and returns once the
// replica is in sync (master_link_status:up).
func PrimaryReplica(t testing.TB, opts ...Option) (primary, replica *Server) {
	t.Helper()
	c := newConfig(opts)
	bin := RequireServer(t, opts...)
	primary = start(t, bin, c.args, 0)
	replica = start(t, bin, append(append([]string{}, c.args...), "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)), 0)
	waitFor(t, 10*time.Second, func() (bool, string) {
		info, err := replica.Do(context.Background(), "INFO", "replication").Text()
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(info, "master_link_status:up"), info
	})
	return primary, replica
}

// waitFor polls cond until it holds or the timeout passes, then fails the
// test with cond's last explanation.
func waitFor(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: timed out after %v: %s", timeout, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
