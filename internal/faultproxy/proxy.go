// Package faultproxy is an in-test TCP proxy on loopback that sits between a
// client (or a replica) and a redis-server and injects network faults:
// delay, black-hole (hold every byte in both directions) and killed
// connections. Tests use it to partition one client from the server, or as
// the replication link of a primary and its replica so that the test decides
// how far the replica lags.
//
// Bytes are never dropped from a live connection (TCP would not drop them
// either): a black-hole holds them and delivers them when it lifts, unless
// the connection is killed first, which discards whatever is held — the
// bytes a crashed primary had not yet sent.
package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy forwards connections accepted on Addr to a target address. It is
// safe for concurrent use; every goroutine and connection it starts ends on
// Close, which New registers as test cleanup.
type Proxy struct {
	// Addr is the loopback address clients dial instead of the target.
	Addr string

	listener net.Listener
	mu       sync.Mutex
	target   string
	delay    time.Duration
	holdTill time.Time     // black-hole until then (zero: not held)
	held     bool          // black-hole until Release
	changed  chan struct{} // closed and replaced whenever the mode changes
	links    map[*link]struct{}
	accepted int
	closed   bool
	wg       sync.WaitGroup
}

// New starts a proxy in front of target on a free loopback port. It is
// closed when the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := Listen(target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Listen starts a proxy in front of target on a free loopback port; the
// caller must Close it. Tests use New.
func Listen(target string) (*Proxy, error) {
	if target == "" {
		return nil, errors.New("faultproxy: empty target address; pass the server's host:port")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listening on loopback: %w", err)
	}
	p := &Proxy{Addr: l.Addr().String(), listener: l, target: target,
		changed: make(chan struct{}), links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Port returns the port of Addr.
func (p *Proxy) Port() int { return p.listener.Addr().(*net.TCPAddr).Port }

// SetTarget points new connections at another server (existing connections
// keep their server until killed), as a failover that moves an address does.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// SetDelay delays every chunk of bytes by d in each direction (0 turns the
// delay off). Order is kept: a chunk never overtakes an earlier one.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.notifyLocked()
	p.mu.Unlock()
}

// BlackHole holds every byte in both directions on every connection, old
// and new, for d; connections stay open, as in a network partition. The
// held bytes are delivered when the black-hole lifts.
func (p *Proxy) BlackHole(d time.Duration) {
	p.mu.Lock()
	p.holdTill = time.Now().Add(d)
	p.notifyLocked()
	p.mu.Unlock()
}

// Hold holds every byte in both directions until Release (or a kill).
func (p *Proxy) Hold() {
	p.mu.Lock()
	p.held = true
	p.notifyLocked()
	p.mu.Unlock()
}

// Release lifts Hold and any BlackHole: held bytes flow again.
func (p *Proxy) Release() {
	p.mu.Lock()
	p.held, p.holdTill = false, time.Time{}
	p.notifyLocked()
	p.mu.Unlock()
}

// KillAll closes every open connection at once, both sides, discarding the
// bytes held or delayed in them. New connections are still accepted.
func (p *Proxy) KillAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.kill()
	}
	return len(links)
}

// Accepted reports how many connections the proxy accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Open reports how many connections are open now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// Close stops accepting, kills every connection and waits for the proxy's
// goroutines to end. It is safe to call more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	p.mu.Unlock()
	if !already {
		_ = p.listener.Close()
	}
	p.KillAll()
	p.wg.Wait()
}

func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// gate reports how long a chunk that arrived at arrived must still wait
// before it may be forwarded (0: now), and a channel closed on any change of
// mode, so a waiting pump re-reads the mode.
func (p *Proxy) gate(arrived time.Time) (wait time.Duration, changed <-chan struct{}, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held {
		return 0, p.changed, true
	}
	now := time.Now()
	if now.Before(p.holdTill) {
		return p.holdTill.Sub(now), p.changed, false
	}
	return time.Until(arrived.Add(p.delay)), p.changed, false
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		target, closed := p.target, p.closed
		p.mu.Unlock()
		if closed {
			_ = client.Close()
			return
		}
		server, err := net.DialTimeout("tcp", target, 2*time.Second)
		if err != nil {
			_ = client.Close() // the server is down: the client sees a refused connection
			continue
		}
		l := &link{p: p, a: client, b: server, dead: make(chan struct{})}
		p.mu.Lock()
		p.links[l] = struct{}{}
		p.accepted++
		p.mu.Unlock()
		p.wg.Add(4)
		go l.pump(l.a, l.b)
		go l.pump(l.b, l.a)
	}
}

// link is one proxied connection: a (the client side) and b (the server side).
type link struct {
	p    *Proxy
	a, b net.Conn
	once sync.Once
	dead chan struct{}
}

func (l *link) kill() {
	l.once.Do(func() {
		close(l.dead)
		_ = l.a.Close()
		_ = l.b.Close()
		l.p.mu.Lock()
		delete(l.p.links, l)
		l.p.mu.Unlock()
	})
}

type chunk struct {
	data    []byte
	arrived time.Time
}

// pump copies src to dst through a queue: a reader goroutine stamps each
// chunk with its arrival time, a writer forwards it once the proxy's mode
// lets it. The queue is bounded, so a held connection stops reading and TCP
// pushes back on the sender, as a real partition does.
func (l *link) pump(src, dst net.Conn) {
	queue := make(chan chunk, 1024)
	go func() {
		defer l.p.wg.Done()
		defer close(queue)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case queue <- chunk{buf[:n], time.Now()}:
				case <-l.dead:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer l.p.wg.Done()
	for c := range queue {
		if !l.waitGate(c.arrived) {
			break
		}
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	// The reader ended (EOF or error) and everything before it was forwarded:
	// end both sides, as a closed TCP connection would, after the mode lets
	// the close through too. A killed link ends at once.
	l.kill()
	for range queue { // let the reader exit
	}
}

// waitGate blocks until a chunk that arrived at arrived may go, or the link
// dies (false).
func (l *link) waitGate(arrived time.Time) bool {
	for {
		wait, changed, held := l.p.gate(arrived)
		if !held && wait <= 0 {
			return true
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if !held {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-l.dead:
			stopTimer(timer)
			return false
		case <-changed:
		case <-fire:
		}
		stopTimer(timer)
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}
