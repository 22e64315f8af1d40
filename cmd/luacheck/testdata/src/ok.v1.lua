#!lua flags=no-writes
-- name: ok
-- version: 1
-- description: Read one key.
-- keys: key
-- args:
return redis.call("GET", KEYS[1])
