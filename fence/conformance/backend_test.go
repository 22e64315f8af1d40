package conformance

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/simulate"
)

// Environment of the suite. The DSNs default to the services of the
// development and CI machines.
const (
	envRequire  = "REDLUA_REQUIRE_DB" // "1": a missing database fails instead of skipping
	envPostgres = "REDLUA_POSTGRES_DSN"
	envMySQL    = "REDLUA_MYSQL_DSN"
)

func postgresDSN() string {
	if v := os.Getenv(envPostgres); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

func mysqlDSN() string {
	if v := os.Getenv(envMySQL); v != "" {
		return v
	}
	return "root@tcp(127.0.0.1:3306)/test"
}

// spec says how to open one backend, in the test and in its workers
// (which get it as environment variables).
type spec struct {
	Kind    string // postgres, mysql, sqlite, redis, simulator
	DSN     string // a database's DSN, or the data Redis's address
	Prefix  string // tables "<prefix>_fence" and "<prefix>_data"; the Redis hash tag
	Isolate string // "", "rc", "rr", "ser": the isolation level of fenced transactions
}

func (s spec) env() []string {
	return []string{"FENCE_KIND=" + s.Kind, "FENCE_DSN=" + s.DSN, "FENCE_PREFIX=" + s.Prefix, "FENCE_ISOLATE=" + s.Isolate}
}

func specFromEnv() spec {
	return spec{Kind: os.Getenv("FENCE_KIND"), DSN: os.Getenv("FENCE_DSN"), Prefix: os.Getenv("FENCE_PREFIX"), Isolate: os.Getenv("FENCE_ISOLATE")}
}

// backend is one fenced resource: a key-value store whose writes are
// fenced, with a counter for read-modify-write histories.
type backend struct {
	spec
	db    *sql.DB
	sqlF  *fence.SQL
	rdb   *redis.Client
	redF  *fence.Redis
	sim   *simulate.Server
	close func()
	pause func(stage string) // incr calls it between its read and its write ("read")
}

const counterKey = "counter"

// set writes key=value under h.
func (b *backend) set(ctx context.Context, h fence.Holder, key, value string) error {
	if b.redF != nil {
		_, err := b.redF.Write(ctx, h, b.Prefix, fence.Set(b.rkey(key), value))
		return err
	}
	return b.sqlF.Do(ctx, h, func(tx *sql.Tx) error { return b.upsert(ctx, tx, key, value) })
}

// setIn is set with fn run inside the fenced transaction after the write
// (SQL only): the frozen-in-transaction trial waits there.
func (b *backend) setIn(ctx context.Context, h fence.Holder, key, value string, inside func()) error {
	return b.sqlF.Do(ctx, h, func(tx *sql.Tx) error {
		if err := b.upsert(ctx, tx, key, value); err != nil {
			return err
		}
		inside()
		return nil
	})
}

// incr adds one to the counter under h, reading and writing it in one
// fenced transaction (script call), and returns the new value. With a
// marker it also writes the key marker in the same transaction, so that
// whether an increment whose caller died committed can be read afterwards.
// Between reading and writing (on Redis, whose script reads and writes in
// one call, before the call) it calls b.pause("read") when set.
func (b *backend) incr(ctx context.Context, h fence.Holder, marker string) (int64, error) {
	if b.redF != nil {
		b.pauseAt("read")
		cmds := []fence.Cmd{fence.IncrBy(b.rkey(counterKey), 1)}
		if marker != "" {
			cmds = append(cmds, fence.Set(b.rkey(marker), "1"))
		}
		r, err := b.redF.Write(ctx, h, b.Prefix, cmds...)
		if err != nil {
			return 0, err
		}
		return r[0].(int64), nil
	}
	var n int64
	err := b.sqlF.Do(ctx, h, func(tx *sql.Tx) error {
		v, err := b.getTx(ctx, tx, counterKey)
		if err != nil {
			return err
		}
		n = 0
		if v != "" {
			if n, err = strconv.ParseInt(v, 10, 64); err != nil {
				return err
			}
		}
		n++
		b.pauseAt("read")
		if marker != "" {
			if err := b.upsert(ctx, tx, marker, "1"); err != nil {
				return err
			}
		}
		return b.upsert(ctx, tx, counterKey, strconv.FormatInt(n, 10))
	})
	return n, err
}

func (b *backend) pauseAt(stage string) {
	if b.pause != nil {
		b.pause(stage)
	}
}

// rawSet writes key=value without the fence, as an application that
// ignores it would: the broken mode the proofs must be able to catch.
func (b *backend) rawSet(ctx context.Context, key, value string) error {
	if b.redF != nil {
		if b.sim != nil {
			return b.sim.Do(ctx, "SET", b.rkey(key), value).Err()
		}
		return b.rdb.Do(ctx, "SET", b.rkey(key), value).Err()
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := b.upsert(ctx, tx, key, value); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// get reads key outside any fence ("" when it is missing).
func (b *backend) get(ctx context.Context, key string) (string, error) {
	if b.redF != nil {
		var cmd *redis.Cmd
		if b.sim != nil {
			cmd = b.sim.Do(ctx, "GET", b.rkey(key))
		} else {
			cmd = b.rdb.Do(ctx, "GET", b.rkey(key))
		}
		v, err := cmd.Text()
		if errors.Is(err, redis.Nil) {
			return "", nil
		}
		return v, err
	}
	return b.getTx(ctx, nil, key)
}

func (b *backend) advance(ctx context.Context, h fence.Holder) error {
	if b.redF != nil {
		return b.redF.Advance(ctx, h, b.Prefix)
	}
	return b.sqlF.Advance(ctx, h)
}

func (b *backend) rkey(key string) string { return "{" + b.Prefix + "}:" + key }

func (b *backend) ph(i int) string {
	if b.Kind == "postgres" {
		return "$" + strconv.Itoa(i)
	}
	return "?"
}

func (b *backend) upsert(ctx context.Context, tx *sql.Tx, key, value string) error {
	t := b.Prefix + "_data"
	var q string
	switch b.Kind {
	case "mysql":
		q = "INSERT INTO " + t + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
	default:
		q = "INSERT INTO " + t + " (k, v) VALUES (" + b.ph(1) + ", " + b.ph(2) + ") ON CONFLICT (k) DO UPDATE SET v = excluded.v"
	}
	_, err := tx.ExecContext(ctx, q, key, value)
	return err
}

func (b *backend) getTx(ctx context.Context, tx *sql.Tx, key string) (string, error) {
	q := "SELECT v FROM " + b.Prefix + "_data WHERE k = " + b.ph(1)
	var row *sql.Row
	if tx != nil {
		row = tx.QueryRowContext(ctx, q, key)
	} else {
		row = b.db.QueryRowContext(ctx, q, key)
	}
	var v string
	err := row.Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// open connects to the backend of s (the tables must exist).
func open(s spec, opts ...fence.Option) (*backend, error) {
	b := &backend{spec: s, close: func() {}}
	switch s.Kind {
	case "redis", "simulator":
		var sc fence.Scripter
		if s.Kind == "redis" {
			b.rdb = redis.NewClient(&redis.Options{Addr: s.DSN})
			r, err := evalsha.New(b.rdb)
			if err != nil {
				return nil, err
			}
			sc = r
			b.close = func() { b.rdb.Close() }
		} else {
			b.sim = simulate.New()
			sc = b.sim
		}
		f, err := fence.NewRedis(sc, opts...)
		if err != nil {
			return nil, err
		}
		b.redF = f
		return b, nil
	}
	driver, dialect := map[string]string{"postgres": "pgx", "mysql": "mysql", "sqlite": "sqlite"}[s.Kind],
		map[string]fence.Dialect{"postgres": fence.Postgres, "mysql": fence.MySQL, "sqlite": fence.SQLite}[s.Kind]
	db, err := sql.Open(driver, s.DSN)
	if err != nil {
		return nil, err
	}
	b.db = db
	b.close = func() { db.Close() }
	var iso *sql.TxOptions
	switch s.Isolate {
	case "rc":
		iso = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	case "rr":
		iso = &sql.TxOptions{Isolation: sql.LevelRepeatableRead}
	case "ser":
		iso = &sql.TxOptions{Isolation: sql.LevelSerializable}
	}
	opts = append([]fence.Option{fence.WithTable(s.Prefix + "_fence"), fence.WithTxOptions(iso)}, opts...)
	if b.sqlF, err = fence.NewSQL(db, dialect, opts...); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// newSpec makes the tables (or the Redis server) of a fresh backend of
// kind for the test, dropped when it ends; it skips the test (fails under
// REDLUA_REQUIRE_DB=1) when the database cannot be reached.
func newSpec(t *testing.T, kind string) spec {
	t.Helper()
	var id [4]byte
	_, _ = rand.Read(id[:])
	s := spec{Kind: kind, Prefix: "rlf_" + hex.EncodeToString(id[:])}
	ctx := context.Background()
	switch kind {
	case "simulator":
		return s
	case "redis":
		s.DSN = redistest.Standalone(t).Addr
		return s
	case "postgres":
		s.DSN = postgresDSN()
	case "mysql":
		s.DSN = mysqlDSN()
	case "sqlite":
		s.DSN = "file:" + filepath.Join(t.TempDir(), "fence.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
	}
	b, err := open(s)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := b.db.PingContext(pingCtx); err != nil {
		missingDB(t, kind, s.DSN, err)
	}
	if err := b.sqlF.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	vtype := "TEXT"
	if kind == "mysql" {
		vtype = "VARCHAR(255)"
	}
	if _, err := b.db.ExecContext(ctx, "CREATE TABLE "+s.Prefix+"_data (k "+vtype+" PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if kind != "sqlite" {
		t.Cleanup(func() {
			c, err := open(s)
			if err != nil {
				return
			}
			defer c.close()
			_, _ = c.db.Exec("DROP TABLE " + s.Prefix + "_fence")
			_, _ = c.db.Exec("DROP TABLE " + s.Prefix + "_data")
		})
	}
	return s
}

func missingDB(t *testing.T, kind, dsn string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s at %s cannot be reached (%v): start it (.ci/run shows how), or set %s/%s; set %s=1 to make this a failure",
		kind, dsn, err, envPostgres, envMySQL, envRequire)
	if os.Getenv(envRequire) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// mustOpen opens s for the test and closes it when the test ends.
func mustOpen(t *testing.T, s spec, opts ...fence.Option) *backend {
	t.Helper()
	b, err := open(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.close)
	return b
}

// kinds are the backends every conformance test runs on.
var kinds = []string{"postgres", "mysql", "sqlite", "redis", "simulator"}
