// Package conformance holds the fence package's conformance suite, run
// against PostgreSQL, MySQL/MariaDB, SQLite, a real redis-server and the
// simulator, and its frozen-holder proof with worker processes, and the
// README's SQLite example (examples/). It is a module of its own so that
// the database drivers and the linearizability checker it needs stay out
// of the module graph of redlua's users.
package conformance
