#!lua flags=no-writes
-- name: ok
return redis.call("GET", KEYS[1])
