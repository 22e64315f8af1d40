package simulate

// TraceEntry is one command a script ran through redis.call or redis.pcall.
type TraceEntry struct {
	// Script is the script's ID ("name@version") or, for RunSource, its SHA1.
	Script string
	// Args is the command and its arguments as Redis received them.
	Args []string
	// Reply is the command's reply (an error reply for a refused command).
	Reply Reply
}

// LogLine is one redis.log call.
type LogLine struct {
	// Script is the script's ID ("name@version") or, for RunSource, its SHA1.
	Script string
	// Level is LogDebug, LogVerbose, LogNotice or LogWarning.
	Level int
	// Message is the log call's arguments joined by spaces, as Redis logs them.
	Message string
}

// ring keeps the newest limit entries of a record.
type ring[T any] struct {
	limit int
	buf   []T
	next  int // where the next entry goes once buf is full
}

func (r *ring[T]) add(v T) {
	switch {
	case r.limit <= 0:
	case len(r.buf) < r.limit:
		r.buf = append(r.buf, v)
	default:
		r.buf[r.next] = v
		r.next = (r.next + 1) % r.limit
	}
}

func (r *ring[T]) items() []T {
	out := make([]T, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

func (r *ring[T]) reset() { r.buf, r.next = nil, 0 }

// Trace returns the commands scripts ran since the server started or since
// ResetTrace, oldest first (the newest WithTraceLimit entries).
func (s *Server) Trace() []TraceEntry {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trace.items()
}

// ResetTrace forgets the recorded commands and log lines.
func (s *Server) ResetTrace() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trace.reset()
	s.logs.reset()
}

// Logs returns the lines scripts logged with redis.log, oldest first.
func (s *Server) Logs() []LogLine {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.items()
}

// addTrace and addLog run with s.mu held.
func (s *Server) addTrace(e TraceEntry) { s.trace.add(e) }
func (s *Server) addLog(l LogLine)      { s.logs.add(l) }
