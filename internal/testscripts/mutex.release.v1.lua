-- name: mutex.release
-- version: 1
-- description: Release one hold of a mutex by its owner and wake the waiters when it becomes free.
-- keys: lock
-- args: owner channel
-- returns: 1 when the lock became free, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does (the lease expired)

local lock = KEYS[1]
local owner, channel = ARGV[1], ARGV[2]

local holder = redis.call('HGET', lock, 'owner')
if not holder then
  return -1
end
if holder ~= owner then
  return 0
end

if redis.call('HINCRBY', lock, 'count', -1) > 0 then
  return 2
end

redis.call('DEL', lock)
-- Waiters subscribed before their failed attempt, so this message cannot
-- slip between their attempt and their wait.
redis.call('PUBLISH', channel, 'released')
return 1
