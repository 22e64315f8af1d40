// Package redistest starts real redis-server processes for tests: a
// standalone server, a primary with a replica (also one whose replication
// runs through a fault-injection proxy, LaggingPair, with manual or Sentinel
// failover), a Sentinel, and a Redis Cluster. Every
// server listens on a free loopback port chosen at start, keeps nothing on
// disk beyond the test's temporary directory, and is killed when the test
// ends, even when it fails (and by the kernel if the test binary dies).
//
// Environment:
//
//	REDLUA_REQUIRE_SERVER=1   a missing redis-server fails the test instead of skipping it (CI sets it)
//	REDLUA_REDIS_SERVER=path  the redis-server binary to run (default: found on PATH); a
//	                          valkey-server works too, for Sentinel and cluster as well
//
// .ci/matrix runs the suite once per binary; docs/servers.md has its last
// results.
package redistest
