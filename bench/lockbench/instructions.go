package lockbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

// A pair is one uncontended acquisition and its release, as a user's code
// runs it.
type pair func(ctx context.Context) error

// PairCost is the server's work for one uncontended pair of a contender,
// counted by callgrind: instructions the redis-server process executed,
// with the idle server's own work (serverCron) subtracted.
type PairCost struct {
	Name, Settings string
	// Instructions per pair: the median over the rounds.
	Instructions float64
	// Rounds are each round's instructions per pair.
	Rounds []float64
	// Commands is the number of commands the server ran per pair
	// (INFO commandstats, EVALSHA and the commands a script calls counted once each).
	Commands float64
	// PerCommand is Commands by command name ("evalsha", "hmget", ...), of
	// the median round.
	PerCommand map[string]float64
}

// costContender builds a contender's pair on a server.
type costContender struct {
	name, settings string
	start          func(addr string) (pair, func(), error)
}

// CostOptions tune ServerCost.
type CostOptions struct {
	// Pairs per round (default 1000). Redis steps Lua's garbage collector
	// every 50 script calls, and the step's work depends on where its cycle
	// is: with 200 pairs a round's figure varied by about 1%, with 1000 by
	// about 0.2%.
	Pairs  int
	Rounds int // rounds per contender (default 3)
	// Only runs the named contenders (all when empty).
	Only map[string]bool
	// Log receives progress lines; nil for none.
	Log func(format string, args ...any)
	// KeepDumps, when not empty, is a directory where each round's
	// callgrind dump of the pairs stays (<contender>.round<N>.callgrind),
	// for callgrind_annotate: where a script's instructions go.
	KeepDumps string
}

// PairInstructions starts redis-server under valgrind's callgrind and counts the
// server's instructions per uncontended pair for raw SET NX + a
// compare-and-delete script, redsync, bsm/redislock and redlua's lock kinds.
// Instruction counts do not depend on the machine's load, so the ratios are
// stable from run to run; the absolute figures depend on the redis-server
// build.
func PairInstructions(ctx context.Context, o CostOptions) ([]PairCost, error) {
	if o.Pairs <= 0 {
		o.Pairs = 1000
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	srv, err := startCallgrindServer(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	var out []PairCost
	for _, c := range costContenders() {
		if len(o.Only) > 0 && !o.Only[c.name] {
			continue
		}
		o.Log("%s: warming up", c.name)
		res, err := srv.measure(ctx, c, o)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.name, err)
		}
		o.Log("%s: %.0f instructions per pair", c.name, res.Instructions)
		out = append(out, res)
	}
	return out, nil
}

func costContenders() []costContender {
	lockerPair := func(newLocker func(string) (Locker, error)) func(string) (pair, func(), error) {
		return func(addr string) (pair, func(), error) {
			l, err := newLocker(addr)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				unlock, err := l.Lock(ctx, "cost")
				if err != nil {
					return err
				}
				return unlock(ctx)
			}, l.Close, nil
		}
	}
	return []costContender{
		{"raw", "SET NX PX, then a compare-and-delete EVALSHA", lockerPair(newRaw)},
		{"redsync", "redsync v4 defaults, one server", lockerPair(newRedsync)},
		{"redislock", "bsm/redislock", lockerPair(newRedislock)},
		{"mutex", "locks Mutex", redluaPair(nil, leaseOf(func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			m, err := c.Mutex("cost")
			if err != nil {
				return nil, err
			}
			return m.Lock(ctx)
		}))},
		{"mutex-fair", "locks Mutex with WithFair", redluaPair([]locks.Option{locks.WithFair(0)}, leaseOf(func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			m, err := c.Mutex("cost")
			if err != nil {
				return nil, err
			}
			return m.Lock(ctx)
		}))},
		{"rw-write", "locks RWMutex Lock", redluaPair(nil, leaseOf(func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			rw, err := c.RWMutex("cost")
			if err != nil {
				return nil, err
			}
			return rw.Lock(ctx)
		}))},
		{"rw-read", "locks RWMutex RLock", redluaPair(nil, leaseOf(func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			rw, err := c.RWMutex("cost")
			if err != nil {
				return nil, err
			}
			return rw.RLock(ctx)
		}))},
		{"semaphore", "locks Semaphore(4), 1 permit", redluaPair(nil, leaseOf(func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			s, err := c.Semaphore("cost", 4)
			if err != nil {
				return nil, err
			}
			return s.Acquire(ctx, 1)
		}))},
		{"multilock-2", "locks MultiLock of 2 names", redluaPair(nil, func(ctx context.Context, c *locks.Client) (func(context.Context) error, error) {
			m, err := c.MultiLock([]string{"cost-a", "cost-b"})
			if err != nil {
				return nil, err
			}
			l, err := m.Lock(ctx)
			if err != nil {
				return nil, err
			}
			return l.Unlock, nil
		})},
	}
}

// leaseOf turns an acquisition into the release a pair calls.
func leaseOf(take func(context.Context, *locks.Client) (*locks.Lease, error)) func(context.Context, *locks.Client) (func(context.Context) error, error) {
	return func(ctx context.Context, c *locks.Client) (func(context.Context) error, error) {
		l, err := take(ctx, c)
		if err != nil {
			return nil, err
		}
		return l.Unlock, nil
	}
}

// redluaPair makes a pair of a redlua lock kind on one client, TTL 10 s.
func redluaPair(opts []locks.Option, lock func(context.Context, *locks.Client) (func(context.Context) error, error)) func(string) (pair, func(), error) {
	return func(addr string) (pair, func(), error) {
		rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4})
		c, err := locks.New(rc, append([]locks.Option{locks.WithTTL(ttl)}, opts...)...)
		if err != nil {
			rc.Close()
			return nil, nil, err
		}
		closeAll := func() { c.Close(); rc.Close() }
		return func(ctx context.Context) error {
			unlock, err := lock(ctx, c)
			if err != nil {
				return err
			}
			return unlock(ctx)
		}, closeAll, nil
	}
}

// callgrindServer is a redis-server running under callgrind.
type callgrindServer struct {
	addr, dir string
	cmd       *exec.Cmd
	admin     *redis.Client
	dumps     int
}

func startCallgrindServer(ctx context.Context) (*callgrindServer, error) {
	for _, tool := range []string{"valgrind", "callgrind_control", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found (apt-get install -y valgrind redis-server): %w", tool, err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "servercost-")
	if err != nil {
		return nil, err
	}
	// Collect inside the event loop (aeMain) but not in serverCron, the
	// server's timer (expiry sampling, statistics, client timeouts), whose
	// work depends on wall time, not on the commands.
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, "callgrind.out"),
		"--toggle-collect=aeMain", "--toggle-collect=serverCron",
		"redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting valgrind redis-server: %w", err)
	}
	s := &callgrindServer{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, cmd: cmd}
	s.admin = redis.NewClient(&redis.Options{Addr: s.addr, PoolSize: 1})
	// Valgrind takes seconds to start the server: wait for its port before
	// the client's first command.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.Dial("tcp", s.addr)
		if err == nil {
			conn.Close()
			if err = s.admin.Ping(ctx).Err(); err == nil {
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("redis-server under valgrind on %s did not answer: %w", s.addr, err)
		}
	}
}

func (s *callgrindServer) stop() {
	s.admin.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
	os.RemoveAll(s.dir)
}

// zero resets the server's instruction counters.
func (s *callgrindServer) zero() error {
	out, err := exec.Command("callgrind_control", "-z", strconv.Itoa(s.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("callgrind_control -z: %v: %s", err, out)
	}
	return nil
}

// dump writes the counters since the last zero and returns their total;
// the dump file is moved to keep when that is not empty.
func (s *callgrindServer) dump(keep string) (float64, error) {
	out, err := exec.Command("callgrind_control", "-d", strconv.Itoa(s.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("callgrind_control -d: %v: %s", err, out)
	}
	s.dumps++
	path := filepath.Join(s.dir, fmt.Sprintf("callgrind.out.%d", s.dumps))
	n, err := callgrindSummary(path)
	if keep != "" && err == nil {
		if err := os.Rename(path, keep); err != nil {
			return n, fmt.Errorf("keeping the callgrind dump: %w", err)
		}
	}
	os.Remove(path)
	return n, err
}

// callgrindSummary reads the "summary:" line of a callgrind dump: the
// instructions executed in the dumped period.
func callgrindSummary(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "summary:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseFloat(fields[0], 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no summary line", path)
}

// measure runs rounds of pairs between a zero and a dump of the counters,
// and as long an idle period, whose work it subtracts.
func (s *callgrindServer) measure(ctx context.Context, c costContender, o CostOptions) (PairCost, error) {
	res := PairCost{Name: c.name, Settings: c.settings}
	p, closeFn, err := c.start(s.addr)
	if err != nil {
		return res, err
	}
	defer closeFn()
	for i := 0; i < 20; i++ { // load scripts, open connections, subscribe
		if err := p(ctx); err != nil {
			return res, err
		}
	}
	type roundCommands struct {
		total float64
		per   map[string]float64
	}
	var rounds []roundCommands
	for r := 0; r < o.Rounds; r++ {
		if err := s.admin.ConfigResetStat(ctx).Err(); err != nil {
			return res, err
		}
		if err := s.zero(); err != nil {
			return res, err
		}
		start := time.Now()
		for i := 0; i < o.Pairs; i++ {
			if err := p(ctx); err != nil {
				return res, err
			}
		}
		busy := time.Since(start)
		keep := ""
		if o.KeepDumps != "" {
			keep = filepath.Join(o.KeepDumps, fmt.Sprintf("%s.round%d.callgrind", c.name, r+1))
		}
		work, err := s.dump(keep)
		if err != nil {
			return res, err
		}
		calls, perCommand, err := s.commandCalls(ctx)
		if err != nil {
			return res, err
		}
		if err := s.zero(); err != nil {
			return res, err
		}
		idleStart := time.Now()
		select {
		case <-time.After(busy):
		case <-ctx.Done():
			return res, ctx.Err()
		}
		idle, err := s.dump("")
		if err != nil {
			return res, err
		}
		idle *= float64(busy) / float64(time.Since(idleStart))
		res.Rounds = append(res.Rounds, (work-idle)/float64(o.Pairs))
		per := map[string]float64{}
		for cmd, n := range perCommand {
			per[cmd] = float64(n) / float64(o.Pairs)
		}
		rounds = append(rounds, roundCommands{float64(calls) / float64(o.Pairs), per})
	}
	order := make([]int, len(res.Rounds))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return res.Rounds[order[i]] < res.Rounds[order[j]] })
	median := order[len(order)/2]
	res.Instructions = res.Rounds[median]
	res.Commands, res.PerCommand = rounds[median].total, rounds[median].per
	return res, nil
}

// commandCalls sums the calls of INFO commandstats, less the CONFIG
// RESETSTAT and INFO the harness itself sent, and returns them by command.
func (s *callgrindServer) commandCalls(ctx context.Context) (int64, map[string]int64, error) {
	info, err := s.admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, nil, err
	}
	var total int64
	per := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_config|resetstat" || name == "cmdstat_info" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, nil, fmt.Errorf("commandstats %q: %w", line, err)
				}
				total += n
				per[strings.TrimPrefix(name, "cmdstat_")] += n
			}
		}
	}
	if total == 0 {
		return 0, nil, errors.New("commandstats counted no calls")
	}
	return total, per, nil
}
