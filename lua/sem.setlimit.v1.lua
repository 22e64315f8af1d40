-- name: sem.setlimit
-- version: 1
-- description: Change a semaphore's permit count at run time and wake its waiters.
-- keys: limit
-- args: permits channel
-- returns: the previous permit count, or false when it had never been set

local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], 'released')
return previous
