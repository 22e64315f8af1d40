package lockbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartServer starts a scratch redis-server on a free loopback port and
// returns its address and a function that stops it.
func StartServer() (string, func(), error) {
	return startServer()
}

// StartServerOnCPUs is StartServer with the server bound to cpus (a
// taskset list such as "0"), so that on a small machine the callers'
// scheduling does not land inside the server's script runs.
func StartServerOnCPUs(cpus string) (string, func(), error) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return "", nil, fmt.Errorf("binding redis-server to CPUs %s needs taskset (apt-get install -y util-linux): %w", cpus, err)
	}
	return startServerVia([]string{taskset, "-c", cpus})
}

// startServer starts redis-server with extra arguments on a free loopback port.
func startServer(extra ...string) (string, func(), error) {
	return startServerVia(nil, extra...)
}

// startServerVia starts redis-server through the command prefix (none, or
// taskset and its arguments).
func startServerVia(prefix []string, extra ...string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "lockbench-")
	if err != nil {
		return "", nil, err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	argv := append(append(prefix[:len(prefix):len(prefix)], "redis-server"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("starting redis-server (apt-get install -y redis-server): %w", err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("redis-server on %s did not start", addr)
}

// StartServers starts n independent scratch servers for a quorum, and
// returns once they have been up for longer than QuorumMaxTTL: a quorum
// Client counts a server towards a majority only then, since a server
// restarted sooner may have forgotten a lease it granted (the same holds
// for a new one, which the Client cannot tell from a restarted one).
func StartServers(n int) ([]string, func(), error) {
	started := time.Now()
	var addrs []string
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	for range n {
		a, stop, err := startServer()
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		addrs = append(addrs, a)
		stops = append(stops, stop)
	}
	time.Sleep(time.Until(started.Add(QuorumMaxTTL + 1500*time.Millisecond)))
	return addrs, stopAll, nil
}

// StartPrimaryReplica starts a primary and one replica of it on loopback and
// waits until the replica is in sync; it returns the primary's address.
func StartPrimaryReplica() (string, func(), error) {
	// Without the delay the replica's first full sync starts at once
	// rather than after Redis 7's default 5 s wait for more replicas.
	primary, stopPrimary, err := startServer("--repl-diskless-sync-delay", "0")
	if err != nil {
		return "", nil, err
	}
	host, port, _ := net.SplitHostPort(primary)
	replica, stopReplica, err := startServer("--replicaof", host, port)
	if err != nil {
		stopPrimary()
		return "", nil, err
	}
	stop := func() { stopReplica(); stopPrimary() }
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	pc := redis.NewClient(&redis.Options{Addr: primary})
	defer pc.Close()
	ctx := context.Background()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		info, err := rc.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			continue
		}
		// The replica reports its link up while the primary still counts
		// it as waiting for the sync's end (state=wait_bgsave), and the
		// first WAIT after that took about a second: a replica-acknowledged
		// run that starts here measures the sync's tail, not WAIT (the
		// first slice ran at 0.3x plain instead of 0.6-0.7x). Wait for
		// state=online and one acknowledged write.
		info, err = pc.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "state=online") {
			continue
		}
		if err := pc.Set(ctx, "lockbench:sync", 1, 0).Err(); err != nil {
			continue
		}
		if n, err := pc.Wait(ctx, 1, 5*time.Second).Result(); err == nil && n == 1 {
			return primary, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("the replica on %s was not in sync (master_link_status:up, state=online, one write acknowledged) within 20s", replica)
}
