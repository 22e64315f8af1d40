#!lua flags=no-writes
-- name: counter.get
-- version: 1
-- description: Read a counter without writing, so replicas may serve it.
-- keys: counter
-- args:
return redis.call('GET', KEYS[1])
