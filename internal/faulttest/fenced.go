package faulttest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// FencedResource is a tiny loopback server that stands for the resource a
// lock guards: it accepts a write only with a fencing token above every
// token it accepted before (or the same token from the same owner, which
// writes again during one hold), as a storage system that checks fencing
// tokens would.
//
// Protocol, one line each way: "WRITE <token> <owner>\n" is answered with
// "OK\n" or "STALE <highest accepted token>\n".
type FencedResource struct {
	// Addr is the loopback address workers dial.
	Addr string

	listener net.Listener
	mu       sync.Mutex
	isHolder func(owner string) bool
	high     int64
	highBy   string
	stats    FenceStats
	wg       sync.WaitGroup
	conns    map[net.Conn]struct{}
}

// FenceStats counts what a FencedResource saw.
type FenceStats struct {
	Writes          int // every write received
	Accepted        int
	Rejected        int // refused for a token below the highest, or equal from another owner
	StaleAccepted   int // accepted from an owner that did not hold the lock (needs SetIsHolder)
	LegitRefused    int // refused although the writer held the lock (needs SetIsHolder)
	DuplicateTokens int // a write whose token equals the highest, from another owner
	Regressions     int // a write whose token is below the highest accepted
	Highest         int64
}

func (s FenceStats) String() string {
	return fmt.Sprintf("writes %d, accepted %d, rejected %d (regressions %d, duplicate tokens %d), stale accepted %d, legitimate refused %d",
		s.Writes, s.Accepted, s.Rejected, s.Regressions, s.DuplicateTokens, s.StaleAccepted, s.LegitRefused)
}

// Add sums counts of several resources (one per lock name); Highest is the
// larger of the two.
func (s FenceStats) Add(o FenceStats) FenceStats {
	s.Writes += o.Writes
	s.Accepted += o.Accepted
	s.Rejected += o.Rejected
	s.StaleAccepted += o.StaleAccepted
	s.LegitRefused += o.LegitRefused
	s.DuplicateTokens += o.DuplicateTokens
	s.Regressions += o.Regressions
	s.Highest = max(s.Highest, o.Highest)
	return s
}

// NewFencedResource starts the resource on a free loopback port; it stops
// when the test ends.
func NewFencedResource(t testing.TB) *FencedResource {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("faulttest: fenced resource: %v", err)
	}
	r := &FencedResource{Addr: l.Addr().String(), listener: l, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	t.Cleanup(r.close)
	return r
}

// SetIsHolder sets the check that tells whether owner holds the lock right
// now (the test asks the server). It classifies writes: an accepted write
// from a non-holder is stale, a refused write from the holder was
// legitimate. Without it, writes are only counted.
func (r *FencedResource) SetIsHolder(isHolder func(owner string) bool) {
	r.mu.Lock()
	r.isHolder = isHolder
	r.mu.Unlock()
}

// Write applies one write directly, as a worker's line would.
func (r *FencedResource) Write(token int64, owner string) (accepted bool, highest int64) {
	r.mu.Lock()
	isHolder := r.isHolder
	r.mu.Unlock()
	holder := true
	if isHolder != nil {
		holder = isHolder(owner) // asked without mu: it may do a network round trip
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Writes++
	switch {
	case token > r.high, token == r.high && owner == r.highBy:
		accepted = true
		r.high, r.highBy = token, owner
		r.stats.Accepted++
		if !holder {
			r.stats.StaleAccepted++
		}
	default:
		r.stats.Rejected++
		if token == r.high {
			r.stats.DuplicateTokens++
		} else {
			r.stats.Regressions++
		}
		if holder && isHolder != nil {
			r.stats.LegitRefused++
		}
	}
	r.stats.Highest = r.high
	return accepted, r.high
}

// WriteChecked is Write with FenceClient's answer: nil when accepted, an
// error wrapping ErrStale when refused.
func (r *FencedResource) WriteChecked(token int64, owner string) error {
	if ok, high := r.Write(token, owner); !ok {
		return fmt.Errorf("token %d, highest accepted %d: %w", token, high, ErrStale)
	}
	return nil
}

// Stats returns the counts so far.
func (r *FencedResource) Stats() FenceStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *FencedResource) serve() {
	defer r.wg.Done()
	for {
		c, err := r.listener.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		r.conns[c] = struct{}{}
		r.mu.Unlock()
		r.wg.Add(1)
		go r.handle(c)
	}
}

func (r *FencedResource) handle(c net.Conn) {
	defer r.wg.Done()
	defer func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
		c.Close()
	}()
	in := bufio.NewReader(c)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		token, owner, err := parseWrite(line)
		reply := ""
		if err != nil {
			reply = "ERR " + err.Error() + "\n"
		} else if ok, high := r.Write(token, owner); ok {
			reply = "OK\n"
		} else {
			reply = "STALE " + strconv.FormatInt(high, 10) + "\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
	}
}

func parseWrite(line string) (int64, string, error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "WRITE" {
		return 0, "", fmt.Errorf("want \"WRITE <token> <owner>\", got %q", strings.TrimSpace(line))
	}
	token, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("token %q is not an integer", f[1])
	}
	return token, f[2], nil
}

func (r *FencedResource) close() {
	_ = r.listener.Close()
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// FenceClient is one writer's connection to a FencedResource.
type FenceClient struct {
	conn net.Conn
	in   *bufio.Reader
}

// DialFence connects to a FencedResource at addr.
func DialFence(addr string) (*FenceClient, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("faulttest: dialing the fenced resource: %w", err)
	}
	return &FenceClient{conn: c, in: bufio.NewReader(c)}, nil
}

// ErrStale is returned by FenceClient.Write when the resource refused the token.
var ErrStale = errors.New("faulttest: the fenced resource refused a stale token")

// Write sends one write and waits for the verdict.
func (f *FenceClient) Write(token int64, owner string) error {
	_ = f.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(f.conn, "WRITE %d %s\n", token, owner); err != nil {
		return fmt.Errorf("faulttest: fenced write: %w", err)
	}
	line, err := f.in.ReadString('\n')
	if err != nil {
		return fmt.Errorf("faulttest: fenced write: %w", err)
	}
	switch {
	case line == "OK\n":
		return nil
	case strings.HasPrefix(line, "STALE "):
		return fmt.Errorf("token %d, highest accepted %s: %w", token, strings.TrimSpace(line[6:]), ErrStale)
	}
	return fmt.Errorf("faulttest: fenced write: %s", strings.TrimSpace(line))
}

// Close closes the connection.
func (f *FenceClient) Close() error { return f.conn.Close() }
