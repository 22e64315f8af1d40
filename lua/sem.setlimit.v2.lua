-- name: sem.setlimit
-- version: 2
-- description: Change a semaphore's permit count at run time and wake its waiters.
-- keys: limit
-- args: permits channel publish
-- returns: the previous permit count, or false when it had never been set
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.

local publish = ARGV[3]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1])
redis.call(publish, ARGV[2], 'released')
return previous
