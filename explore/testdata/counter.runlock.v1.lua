-- name: counter.runlock
-- version: 1
-- description: Seed design (flawed on purpose): give back a read hold by lowering the shared reader counter.
-- keys: readers
-- args:
-- returns: the counter after the decrement

return redis.call('DECR', KEYS[1])
