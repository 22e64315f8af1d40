-- name: counter.incr
-- version: 1
-- description: Add a step to a counter and return the new value.
-- keys: counter
-- args: step
return redis.call('INCRBY', KEYS[1], ARGV[1])
