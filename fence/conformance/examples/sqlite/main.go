// Command sqlite is the README's fenced example: a holder paused past its
// lease writes to SQLite after the next holder did, and is refused.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite"

	"github.com/redlua/redlua/fence"
	"github.com/redlua/redlua/locks"
)

func main() {
	ctx := context.Background()
	mr, _ := miniredis.Run() // or your Redis
	defer mr.Close()
	lc, _ := locks.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}))
	db, _ := sql.Open("sqlite", "file::memory:?cache=shared&_pragma=busy_timeout(5000)")
	f, _ := fence.NewSQL(db, fence.SQLite)
	_ = f.CreateTable(ctx)
	_, _ = db.Exec("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, state TEXT)")
	write := func(l *locks.Lease, state string) error {
		return f.Do(ctx, l, func(tx *sql.Tx) error {
			_, err := tx.Exec("INSERT INTO jobs VALUES ('j1', ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state", state)
			return err
		})
	}
	m, _ := lc.Mutex("job-1", locks.WithTTL(100*time.Millisecond))
	a, _ := m.Lock(ctx)
	mr.FastForward(time.Second) // A pauses past its lease (a GC, SIGSTOP)
	b, _ := m.Lock(ctx)
	fmt.Println("B writes:", write(b, "done by B"))
	fmt.Println("A writes:", write(a, "done by A"))
}
