package faultproxy_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/faultproxy"
)

// echoServer answers every line with the same line, on a free loopback port.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, msg string, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return 0, err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return time.Since(start), err
	}
	if strings.TrimSpace(line) != msg {
		t.Fatalf("echo returned %q, want %q", line, msg)
	}
	return time.Since(start), nil
}

func TestProxyPassDelayBlackHoleKill(t *testing.T) {
	p := faultproxy.New(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := roundTrip(t, c, r, "pass", 5*time.Second); err != nil {
		t.Fatalf("pass-through: %v", err)
	}

	p.SetDelay(100 * time.Millisecond)
	took, err := roundTrip(t, c, r, "delayed", 5*time.Second)
	if err != nil || took < 200*time.Millisecond {
		t.Fatalf("delay 100ms each way: round trip took %v (err %v), want >= 200ms", took, err)
	}
	p.SetDelay(0)

	// A black-hole holds the bytes: the round trip times out, then the held
	// reply arrives once the black-hole lifts.
	p.BlackHole(300 * time.Millisecond)
	if _, err := roundTrip(t, c, r, "held", 100*time.Millisecond); err == nil {
		t.Fatal("a reply came through the black-hole")
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("after the black-hole lifted: %q, %v; want the held reply", line, err)
	}

	p.Hold()
	if _, err := roundTrip(t, c, r, "dropped", 100*time.Millisecond); err == nil {
		t.Fatal("a reply came through Hold")
	}
	if n := p.KillAll(); n != 1 {
		t.Fatalf("KillAll closed %d connections, want 1", n)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("a killed connection still delivered %q", line)
	}
	p.Release()

	// New connections still work after a kill.
	c2, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := roundTrip(t, c2, bufio.NewReader(c2), "again", 5*time.Second); err != nil {
		t.Fatalf("after KillAll: %v", err)
	}
	if p.Accepted() != 2 {
		t.Errorf("Accepted = %d, want 2", p.Accepted())
	}
}

func TestListenRejectsEmptyTarget(t *testing.T) {
	if _, err := faultproxy.Listen(""); err == nil || !strings.Contains(err.Error(), "target") {
		t.Fatalf("Listen(\"\") = %v, want an error naming the target", err)
	}
}
