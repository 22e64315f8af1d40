package locks_test

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// holderChange is one change of a lock hash's owner as the server ran it,
// timed by the server's clock.
type holderChange struct {
	at     time.Duration // server time (since the Unix epoch)
	owner  string        // "" when the owner was removed
	expiry time.Duration // for a new owner: when its lease ends unless renewed (0 unknown)
}

// holderLog follows one lock hash's owner (or a one-permit semaphore's
// permits set) through MONITOR: every command a
// script runs is listed with the server's microsecond time, so how long a
// hold lasted is measured by the server itself, not by a client whose
// observations a busy machine can delay.
type holderLog struct {
	key  string
	conn net.Conn
	mu   sync.Mutex
	log  []holderChange
	done chan struct{}
}

func monitorHolders(t *testing.T, addr, key string) *holderLog {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h := &holderLog{key: key, conn: conn, done: make(chan struct{})}
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	if line, err := rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q, %v", line, err)
	}
	go func() {
		defer close(h.done)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return // closed by stop, or the server went away
			}
			h.parse(strings.TrimSuffix(line, "\r\n"))
		}
	}()
	t.Cleanup(func() { h.stop() })
	return h
}

func (h *holderLog) stop() []holderChange {
	h.conn.Close()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]holderChange(nil), h.log...)
}

// parse reads `+<sec>.<usec> [<db> lua] "CMD" "key" ...`: only commands
// scripts ran on the lock hash matter.
func (h *holderLog) parse(line string) {
	ts, rest, ok := strings.Cut(strings.TrimPrefix(line, "+"), " ")
	if !ok || !strings.Contains(rest, " lua] ") {
		return
	}
	secs, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return
	}
	at := time.Duration(secs * float64(time.Second))
	_, rest, _ = strings.Cut(rest, "] ")
	args := monitorArgs(rest)
	if len(args) < 2 || args[1] != h.key {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch strings.ToUpper(args[0]) {
	case "HSET":
		for i := 2; i+1 < len(args); i += 2 {
			if args[i] == "owner" {
				h.log = append(h.log, holderChange{at: at, owner: args[i+1]})
			}
		}
	case "HDEL":
		for _, f := range args[2:] {
			if f == "owner" {
				h.log = append(h.log, holderChange{at: at})
			}
		}
	case "DEL":
		h.log = append(h.log, holderChange{at: at})
	case "ZADD":
		// A Semaphore's permit: member "<owner>:<i>", score its deadline
		// (server time in ms). The tests follow a one-permit semaphore, so
		// one permit at a time, as for a lock hash's owner.
		if len(args) >= 4 {
			if i := strings.LastIndexByte(args[3], ':'); i > 0 {
				c := holderChange{at: at, owner: args[3][:i]}
				if ms, err := strconv.ParseFloat(args[2], 64); err == nil {
					c.expiry = time.Duration(ms) * time.Millisecond
				}
				h.log = append(h.log, c)
			}
		}
	case "ZREM":
		// Only the holder's own permit ends its hold (a release of a permit
		// that had expired removes nothing).
		if n := len(h.log); n > 0 && len(args) >= 3 {
			if i := strings.LastIndexByte(args[2], ':'); i > 0 && args[2][:i] == h.log[n-1].owner {
				h.log = append(h.log, holderChange{at: at})
			}
		}
	case "PEXPIRE":
		if n := len(h.log); n > 0 && len(args) > 2 && h.log[n-1].owner != "" {
			if ms, err := strconv.ParseInt(args[2], 10, 64); err == nil {
				h.log[n-1].expiry = at + time.Duration(ms)*time.Millisecond
			}
		}
	}
}

// monitorArgs splits MONITOR's quoted arguments ("a" "b\"c"); the names in
// these tests need no more of Redis's escapes than \" and \\.
func monitorArgs(s string) []string {
	var args []string
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			return args
		}
		s = s[i+1:]
		var b strings.Builder
		for len(s) > 0 && s[0] != '"' {
			if s[0] == '\\' && len(s) > 1 {
				s = s[1:]
			}
			b.WriteByte(s[0])
			s = s[1:]
		}
		args = append(args, b.String())
		if len(s) > 0 {
			s = s[1:]
		}
	}
}

// monitoredHold is one owner's hold, from and until in server time.
type monitoredHold struct {
	owner       string
	from, until time.Duration
}

// holds turns the changes into holds: owner, from, until (the next change,
// or the lease's end when that comes first, since expiry runs no command).
func holds(changes []holderChange) (out []monitoredHold) {
	for i, c := range changes {
		if c.owner == "" {
			continue
		}
		until := time.Duration(1<<62 - 1)
		if i+1 < len(changes) {
			until = changes[i+1].at
		}
		if c.expiry > 0 && c.expiry < until {
			until = c.expiry
		}
		out = append(out, monitoredHold{c.owner, c.at, until})
	}
	return out
}
