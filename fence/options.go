package fence

import (
	"database/sql"
	"fmt"
	"regexp"
	"time"
)

// Option configures a SQL or Redis fence.
type Option func(*settings)

type settings struct {
	table       string
	maxAhead    time.Duration
	now         func() time.Time
	lockTimeout time.Duration
	idleTimeout time.Duration
	retries     int
	txOptions   *sql.TxOptions
	retryable   func(error) bool
	err         error
}

func defaults() settings {
	return settings{table: DefaultTable, now: time.Now, lockTimeout: 5 * time.Second, retries: 5}
}

func (s *settings) apply(opts []Option) error {
	for _, o := range opts {
		if o == nil {
			return fmt.Errorf("%w: a nil Option; pass options such as fence.WithTable(name)", ErrInvalidArgument)
		}
		o(s)
	}
	return s.err
}

// DefaultTable is the fence table's name unless WithTable names another.
const DefaultTable = "redlua_fence"

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// WithTable names the SQL fence table (default DefaultTable): letters,
// digits and underscores, at most 63, as every dialect accepts unquoted.
func WithTable(name string) Option {
	return func(s *settings) {
		if !tableName.MatchString(name) {
			s.err = fmt.Errorf("%w: WithTable(%q): a table name is 1 to 63 letters, digits or underscores, not starting with a digit", ErrInvalidArgument, name)
			return
		}
		s.table = name
	}
}

// WithMaxAhead refuses a token more than d ahead of the resource's clock
// with ErrTokenAhead (default 0: off). Tokens are the lock server's clock in
// microseconds: a lock server whose clock jumped forward hands out tokens
// that, once accepted, refuse every holder until the clock catches up. The
// resource's clock is the Redis server's (TIME) for the Redis fence and
// this process's (WithClock) for SQL.
func WithMaxAhead(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.err = fmt.Errorf("%w: WithMaxAhead(%v): pass a positive duration, or 0 for no check", ErrInvalidArgument, d)
			return
		}
		s.maxAhead = d
	}
}

// WithClock replaces the clock WithMaxAhead measures against on the SQL
// fence (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(s *settings) {
		if now == nil {
			s.err = fmt.Errorf("%w: WithClock(nil): pass a clock such as time.Now", ErrInvalidArgument)
			return
		}
		s.now = now
	}
}

// WithLockTimeout bounds how long a SQL fenced transaction waits for the
// fence row another transaction holds (default 5 s); the wait then fails,
// the transaction rolls back and is tried again (WithRetries). PostgreSQL
// sets lock_timeout for the transaction, MySQL and MariaDB the session's
// innodb_lock_wait_timeout (whole seconds, at least 1), SQLite the
// connection's busy_timeout.
func WithLockTimeout(d time.Duration) Option {
	return func(s *settings) {
		if d <= 0 {
			s.err = fmt.Errorf("%w: WithLockTimeout(%v): pass a positive duration", ErrInvalidArgument, d)
			return
		}
		s.lockTimeout = d
	}
}

// WithIdleTimeout asks the database to end the session of a fenced
// transaction that sits idle longer than d (default 0: no limit), so a
// holder frozen while it holds the fence row blocks the next holder for at
// most d, and its COMMIT fails when it resumes. PostgreSQL sets
// idle_in_transaction_session_timeout for the transaction, MySQL and
// MariaDB the session's wait_timeout (whole seconds, at least 1; it stays
// on the pooled connection). SQLite has no sessions: there the holder's
// own Err, asked before COMMIT, is what refuses a late commit.
func WithIdleTimeout(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.err = fmt.Errorf("%w: WithIdleTimeout(%v): pass a positive duration, or 0 for no limit", ErrInvalidArgument, d)
			return
		}
		s.idleTimeout = d
	}
}

// WithRetries is how many times a fenced transaction is tried in all when
// it fails with a lock timeout, a deadlock or a serialization failure
// (default 5). The last failure is returned wrapping ErrBusy. A refusal
// (ErrStale) is never retried.
func WithRetries(n int) Option {
	return func(s *settings) {
		if n < 1 || n > 1000 {
			s.err = fmt.Errorf("%w: WithRetries(%d): pass 1 to 1000 tries", ErrInvalidArgument, n)
			return
		}
		s.retries = n
	}
}

// WithTxOptions sets the isolation level and read-only flag of the
// transactions Do begins (default: the driver's). Every isolation level
// from READ COMMITTED up keeps the fence correct.
func WithTxOptions(o *sql.TxOptions) Option {
	return func(s *settings) { s.txOptions = o }
}

// WithRetryable replaces the test that tells a transient failure (tried
// again) from any other (returned at once). The default knows the
// SQLSTATEs 40001, 40P01 and 55P03 (drivers with a SQLState method, as pgx
// and lib/pq), MySQL's errors 1205 and 1213 and SQLite's SQLITE_BUSY and
// SQLITE_LOCKED.
func WithRetryable(f func(error) bool) Option {
	return func(s *settings) {
		if f == nil {
			s.err = fmt.Errorf("%w: WithRetryable(nil): pass a function, or leave the option out for the default", ErrInvalidArgument)
			return
		}
		s.retryable = f
	}
}
