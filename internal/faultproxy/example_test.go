package faultproxy_test

import (
	"fmt"
	"net"
	"time"

	"github.com/redlua/redlua/internal/faultproxy"
)

// A proxy in front of a server: the client dials the proxy, and the test
// black-holes the connection for a while.
func Example() {
	server, _ := net.Listen("tcp", "127.0.0.1:0")
	defer server.Close()
	go func() {
		for {
			c, err := server.Accept()
			if err != nil {
				return
			}
			go func() { buf := make([]byte, 64); n, _ := c.Read(buf); c.Write(buf[:n]); c.Close() }()
		}
	}()
	p, err := faultproxy.Listen(server.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	c, _ := net.Dial("tcp", p.Addr)
	defer c.Close()
	p.BlackHole(50 * time.Millisecond) // nothing passes for 50ms, then the held bytes flow
	start := time.Now()
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	n, _ := c.Read(buf)
	fmt.Println(string(buf[:n]), time.Since(start) >= 50*time.Millisecond)
	// Output: ping true
}
