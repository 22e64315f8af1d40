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

// holderLog follows the holder of one lock hash (docs/layout.md: a
// Mutex's, an RWMutex writer's, a one-permit Semaphore's) through MONITOR:
// every command a
// script runs is listed with the server's microsecond time, so how long a
// hold lasted is measured by the server itself, not by a client whose
// observations a busy machine can delay.
type holderLog struct {
	key    string
	conn   net.Conn
	mu     sync.Mutex
	log    []holderChange
	permit bool // the last holder's record is a p:<owner> field, not h
	done   chan struct{}
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
		// docs/layout.md: a single holder (a Mutex, an RWMutex's writer) is
		// h = kind \t until_ms \t state \t count \t client \t attempt \t
		// owner \t meta; a Semaphore's permit holder is p:<owner> =
		// expiry_ms \t state \t .... The tests follow a one-permit
		// semaphore, so one holder at a time either way.
		for i := 2; i+1 < len(args); i += 2 {
			field, value := args[i], args[i+1]
			if field == "h" {
				f := strings.Split(value, "\t")
				if len(f) >= 7 && (f[2] == "h" || f[2] == "g" || f[2] == "x") {
					h.hold(at, f[6], f[1], false)
				}
			} else if owner, ok := strings.CutPrefix(field, "p:"); ok {
				expiry, _, _ := strings.Cut(value, "\t")
				h.hold(at, owner, expiry, true)
			}
		}
	case "HDEL":
		n := len(h.log)
		if n == 0 || h.log[n-1].owner == "" {
			return
		}
		for _, f := range args[2:] {
			// Only the holder's own record ends its hold (a release of a
			// permit that had expired removes another record).
			if f == "h" && !h.permit || f == "p:"+h.log[n-1].owner && h.permit {
				h.log = append(h.log, holderChange{at: at})
				return
			}
		}
	case "DEL":
		h.log = append(h.log, holderChange{at: at})
	}
}

// hold logs owner's record written at at, expiring at untilMs (server
// time in ms): a new holder, or the same one's renewal (an extend, a
// reentrant hold), which moves its expiry only.
func (h *holderLog) hold(at time.Duration, owner, untilMs string, permit bool) {
	var expiry time.Duration
	if ms, err := strconv.ParseInt(untilMs, 10, 64); err == nil {
		expiry = time.Duration(ms) * time.Millisecond
	}
	if n := len(h.log); n > 0 && h.log[n-1].owner == owner {
		h.log[n-1].expiry = expiry
		return
	}
	h.log = append(h.log, holderChange{at: at, owner: owner, expiry: expiry})
	h.permit = permit
}

// monitorArgs splits MONITOR's quoted arguments ("a" "b\"c"), undoing
// Redis's escapes: \" \\ \n \r \t \a \b and \xHH (the records' tabs
// come as \t).
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
				if c, ok := map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', 'a': '\a', 'b': '\b'}[s[0]]; ok {
					b.WriteByte(c)
					s = s[1:]
					continue
				}
				if s[0] == 'x' && len(s) >= 3 {
					if c, err := strconv.ParseUint(s[1:3], 16, 8); err == nil {
						b.WriteByte(byte(c))
						s = s[3:]
						continue
					}
				}
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
