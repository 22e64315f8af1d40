package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Dialect is the SQL spoken by the database behind a SQL fence.
type Dialect int

const (
	// Postgres is PostgreSQL (any driver: pgx's stdlib, lib/pq).
	Postgres Dialect = iota + 1
	// MySQL is MySQL or MariaDB (github.com/go-sql-driver/mysql).
	MySQL
	// SQLite is SQLite (modernc.org/sqlite, mattn/go-sqlite3). Open it with
	// a busy timeout (modernc: "?_pragma=busy_timeout(5000)") and, for
	// transactions of your own that call Check, "_txlock=immediate".
	SQLite
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "Postgres"
	case MySQL:
		return "MySQL"
	case SQLite:
		return "SQLite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// TableSQL returns the statement that creates the fence table named table
// in dialect d, for migration tools; CreateTable runs it. A row per lock
// name holds the highest token accepted, its owner, and how many fenced
// transactions wrote it.
func TableSQL(d Dialect, table string) (string, error) {
	if !tableName.MatchString(table) {
		return "", fmt.Errorf("%w: table %q: a table name is 1 to 63 letters, digits or underscores, not starting with a digit", ErrInvalidArgument, table)
	}
	switch d {
	case Postgres:
		return "CREATE TABLE IF NOT EXISTS " + table + " (name TEXT PRIMARY KEY, token BIGINT NOT NULL, owner TEXT NOT NULL, writes BIGINT NOT NULL DEFAULT 0)", nil
	case MySQL:
		// VARBINARY: a 1 KiB name fits InnoDB's 3072-byte key in any
		// character set, and names compare byte for byte, as in Redis.
		return "CREATE TABLE IF NOT EXISTS " + table + " (name VARBINARY(1024) NOT NULL PRIMARY KEY, token BIGINT NOT NULL, owner VARBINARY(1024) NOT NULL, writes BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB", nil
	case SQLite:
		return "CREATE TABLE IF NOT EXISTS " + table + " (name TEXT PRIMARY KEY, token INTEGER NOT NULL, owner TEXT NOT NULL, writes INTEGER NOT NULL DEFAULT 0)", nil
	}
	return "", fmt.Errorf("%w: unknown dialect %v; pass fence.Postgres, fence.MySQL or fence.SQLite", ErrInvalidArgument, d)
}

// SQL fences writes to a database reached through database/sql. Every
// fenced transaction first takes the fence row of each lock name (SELECT
// ... FOR UPDATE; in SQLite a write, which takes the database's write lock),
// checks the holder's token against it and raises it, so everything the
// transaction writes, in any number of tables and rows, new rows too,
// commits under one check or not at all. Each write also counts up the
// row, so two fenced transactions on one name never run side by side, at
// any isolation level: under REPEATABLE READ and SERIALIZABLE a
// transaction that began before another committed fails with a
// serialization error and is tried again.
//
// A SQL is safe for concurrent use.
type SQL struct {
	db *sql.DB
	d  Dialect
	s  settings

	selectRow, insertRow, updateRow string
}

// NewSQL returns a fence on db, which speaks dialect d. The fence table must
// exist (CreateTable, or TableSQL in a migration).
func NewSQL(db *sql.DB, d Dialect, opts ...Option) (*SQL, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: NewSQL got a nil *sql.DB; pass an opened database (sql.Open)", ErrInvalidArgument)
	}
	f := &SQL{db: db, d: d, s: defaults()}
	if err := f.s.apply(opts); err != nil {
		return nil, err
	}
	if _, err := TableSQL(d, f.s.table); err != nil {
		return nil, err
	}
	t := f.s.table
	switch d {
	case Postgres:
		f.selectRow = "SELECT token, owner FROM " + t + " WHERE name = $1 FOR UPDATE"
		f.insertRow = "INSERT INTO " + t + " (name, token, owner) VALUES ($1, 0, '') ON CONFLICT (name) DO NOTHING"
		f.updateRow = "UPDATE " + t + " SET token = $2, owner = $3, writes = writes + 1 WHERE name = $1"
	case MySQL:
		f.selectRow = "SELECT token, owner FROM " + t + " WHERE name = ? FOR UPDATE"
		f.insertRow = "INSERT IGNORE INTO " + t + " (name, token, owner) VALUES (?, 0, '')"
		f.updateRow = "UPDATE " + t + " SET token = ?, owner = ?, writes = writes + 1 WHERE name = ?"
	case SQLite:
		// The first statement writes, so the transaction holds the
		// database's write lock from its start (BEGIN IMMEDIATE's
		// semantics) and the row it reads next cannot change under it.
		f.insertRow = "INSERT INTO " + t + " (name, token, owner) VALUES (?, 0, '') ON CONFLICT (name) DO UPDATE SET writes = writes"
		f.selectRow = "SELECT token, owner FROM " + t + " WHERE name = ?"
		f.updateRow = "UPDATE " + t + " SET token = ?, owner = ?, writes = writes + 1 WHERE name = ?"
	}
	return f, nil
}

// CreateTable creates the fence table when it does not exist (the
// statement of TableSQL).
func (f *SQL) CreateTable(ctx context.Context) error {
	stmt, err := TableSQL(f.d, f.s.table)
	if err != nil {
		return err
	}
	if _, err := f.db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("fence: creating the table %s: %w", f.s.table, err)
	}
	return nil
}

// Do runs fn in a transaction fenced by h: the transaction takes h's
// fence row first, and commits only when h's token passes the rule
// (Admit). A stale holder gets a *StaleError (ErrStale) and fn does not
// run. When h has an Err method (a *locks.Lease) that reports the lease
// ended, Do rolls back instead of committing (ErrLeaseLost).
//
// A lock timeout, deadlock or serialization failure, of the fence row or
// of fn's own statements, rolls back and tries again (WithRetries), so fn
// may run more than once and must leave nothing outside the transaction.
// An error fn returns is returned as it is, after the rollback.
func (f *SQL) Do(ctx context.Context, h Holder, fn func(tx *sql.Tx) error) error {
	return f.DoAll(ctx, []Holder{h}, fn)
}

// DoAll is Do for the leases of a MultiLock (one Holder per name): the
// fence rows are taken in the order of their names, so two transactions
// over overlapping sets of names cannot deadlock on them, and every token
// must pass.
func (f *SQL) DoAll(ctx context.Context, hs []Holder, fn func(tx *sql.Tx) error) error {
	if ctx == nil {
		return fmt.Errorf("%w: a nil context; pass context.Background() or a request's context", ErrInvalidArgument)
	}
	sorted, err := sortedHolders(hs)
	if err != nil {
		return err
	}
	backoff := 5 * time.Millisecond
	for try := 1; ; try++ {
		err := f.once(ctx, sorted, fn)
		if err == nil || !f.transient(err) {
			return err
		}
		if try >= f.s.retries {
			return fmt.Errorf("%w: %d tries, the last: %w", ErrBusy, try, err)
		}
		// Jittered, growing pauses, so two transactions that deadlocked
		// do not meet again at once.
		pause := backoff/2 + rand.N(backoff)
		backoff = min(2*backoff, 200*time.Millisecond)
		select {
		case <-ctx.Done():
			return fmt.Errorf("fence: %w (after %d tries, the last: %w)", ctx.Err(), try, err)
		case <-time.After(pause):
		}
	}
}

// Advance raises the fence of each holder's name to its token, writing no
// data: call it right after Lock, so a stale holder's write cannot land
// before the new holder's first one.
func (f *SQL) Advance(ctx context.Context, hs ...Holder) error {
	return f.DoAll(ctx, hs, nil)
}

// Check fences a transaction the caller already has: call it first in tx,
// before any other statement (under REPEATABLE READ the snapshot dates from
// the first statement). It takes each holder's fence row in the order of
// the names and returns a *StaleError (ErrStale) for a stale one; the
// caller must then roll back. It does not retry: a lock timeout or a
// serialization failure is returned, and the caller rolls back and tries
// again. With SQLite, begin tx on a connection opened with
// "_txlock=immediate" and a busy timeout.
func (f *SQL) Check(ctx context.Context, tx *sql.Tx, hs ...Holder) error {
	if ctx == nil {
		return fmt.Errorf("%w: a nil context; pass context.Background() or a request's context", ErrInvalidArgument)
	}
	if tx == nil {
		return fmt.Errorf("%w: Check got a nil *sql.Tx; pass the transaction to fence (db.BeginTx)", ErrInvalidArgument)
	}
	sorted, err := sortedHolders(hs)
	if err != nil {
		return err
	}
	return f.take(ctx, tx, sorted)
}

// Highest returns the mark of name: the highest token accepted and its
// owner (the zero Mark when no write for name was ever fenced).
func (f *SQL) Highest(ctx context.Context, name string) (Mark, error) {
	q := strings.TrimSuffix(f.selectRow, " FOR UPDATE")
	var m Mark
	err := f.db.QueryRowContext(ctx, q, name).Scan(&m.Token, &m.Owner)
	if errors.Is(err, sql.ErrNoRows) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, fmt.Errorf("fence: reading the fence of %q: %w", name, err)
	}
	return m, nil
}

// once is one try of DoAll.
func (f *SQL) once(ctx context.Context, hs []Holder, fn func(tx *sql.Tx) error) (err error) {
	conn, err := f.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	defer conn.Close()
	if f.d == SQLite {
		// Before BEGIN, so an immediate BEGIN waits this long too.
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", f.s.lockTimeout.Milliseconds())); err != nil {
			return fmt.Errorf("fence: setting the busy timeout: %w", err)
		}
	}
	tx, err := conn.BeginTx(ctx, f.s.txOptions)
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := f.take(ctx, tx, hs); err != nil {
		return err
	}
	if fn != nil {
		if err := fn(tx); err != nil {
			return err
		}
	}
	for _, h := range hs {
		if l, ok := h.(lossReporter); ok {
			if lerr := l.Err(); lerr != nil {
				return fmt.Errorf("%w: %q token %d: rolled back: %w", ErrLeaseLost, h.Name(), h.Token(), lerr)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fence: commit: %w", err)
	}
	return nil
}

// take sets the transaction's waits, then takes, checks and raises each
// holder's fence row, in the order of hs.
func (f *SQL) take(ctx context.Context, tx *sql.Tx, hs []Holder) error {
	for _, stmt := range f.setup() {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("fence: %s: %w", stmt, err)
		}
	}
	now := f.s.now()
	for _, h := range hs {
		if err := aheadCheck(h, f.s.maxAhead, now); err != nil {
			return err
		}
		m, err := f.lockRow(ctx, tx, h.Name())
		if err != nil {
			return err
		}
		if err := Admit(h, m); err != nil {
			return err
		}
		// Always written, also when the mark stays: the write is what
		// orders every fenced transaction on the name (and MySQL's
		// affected rows, 0 for a row left as it was, are never read).
		var args []any
		if f.d == Postgres {
			args = []any{h.Name(), h.Token(), h.Owner()}
		} else {
			args = []any{h.Token(), h.Owner(), h.Name()}
		}
		if _, err := tx.ExecContext(ctx, f.updateRow, args...); err != nil {
			return fmt.Errorf("fence: raising the fence of %q: %w", h.Name(), err)
		}
	}
	return nil
}

// lockRow returns name's mark with its row locked, making the row first
// when the name has none.
func (f *SQL) lockRow(ctx context.Context, tx *sql.Tx, name string) (Mark, error) {
	if f.d == SQLite {
		if _, err := tx.ExecContext(ctx, f.insertRow, name); err != nil {
			return Mark{}, fmt.Errorf("fence: taking the fence row of %q: %w", name, err)
		}
	}
	for range 2 {
		var m Mark
		var owner []byte // MySQL's VARBINARY scans as bytes
		err := tx.QueryRowContext(ctx, f.selectRow, name).Scan(&m.Token, &owner)
		if err == nil {
			m.Owner = string(owner)
			return m, nil
		}
		if !errors.Is(err, sql.ErrNoRows) || f.d == SQLite {
			return Mark{}, fmt.Errorf("fence: taking the fence row of %q: %w", name, err)
		}
		// The first fenced write of this name: make its row, then lock it.
		if _, err := tx.ExecContext(ctx, f.insertRow, name); err != nil {
			return Mark{}, fmt.Errorf("fence: making the fence row of %q: %w", name, err)
		}
	}
	return Mark{}, fmt.Errorf("fence: the fence row of %q vanished after it was made; is something deleting rows of %s?", name, f.s.table)
}

// setup is what a fenced transaction runs before it takes a row.
func (f *SQL) setup() []string {
	ms := max(f.s.lockTimeout.Milliseconds(), 1)
	secs := func(d time.Duration) int64 { return max(int64((d+time.Second-1)/time.Second), 1) }
	switch f.d {
	case Postgres:
		out := []string{fmt.Sprintf("SET LOCAL lock_timeout = %d", ms)}
		if f.s.idleTimeout > 0 {
			out = append(out, fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", max(f.s.idleTimeout.Milliseconds(), 1)))
		}
		return out
	case MySQL:
		out := []string{fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", secs(f.s.lockTimeout))}
		if f.s.idleTimeout > 0 {
			out = append(out, fmt.Sprintf("SET SESSION wait_timeout = %d", secs(f.s.idleTimeout)))
		}
		return out
	case SQLite:
		return []string{fmt.Sprintf("PRAGMA busy_timeout = %d", ms)}
	}
	return nil
}

// transient tells a failure worth another try.
func (f *SQL) transient(err error) bool {
	if errors.Is(err, ErrStale) || errors.Is(err, ErrTokenAhead) || errors.Is(err, ErrLeaseLost) ||
		errors.Is(err, ErrInvalidArgument) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if f.s.retryable != nil {
		return f.s.retryable(err)
	}
	return DefaultRetryable(err)
}

// DefaultRetryable is the test WithRetryable replaces: a lock timeout, a
// deadlock or a serialization failure, told by SQLSTATE (40001, 40P01,
// 55P03) on errors with a SQLState method (pgx, lib/pq), by MySQL's error
// numbers 1205 and 1213, or by SQLite's SQLITE_BUSY and SQLITE_LOCKED.
func DefaultRetryable(err error) bool {
	if err == nil {
		return false
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		switch st.SQLState() {
		case "40001", "40P01", "55P03":
			return true
		}
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		if c := coded.Code() & 0xff; c == 5 || c == 6 { // SQLITE_BUSY, SQLITE_LOCKED
			return true
		}
	}
	msg := err.Error()
	for _, m := range []string{"Error 1205", "Error 1213", "database is locked", "database table is locked", "(SQLITE_BUSY)", "(SQLITE_LOCKED)"} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
