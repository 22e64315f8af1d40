-- name: mutex.handoff
-- version: 1
-- description: Release a mutex by its owner and hand it, in the same step, to a waiter the caller names.
-- keys: lock fence
-- args: owner next_owner ttl_ms meta
-- returns: {1, fence_token} when handed to next_owner; {2} when a reentrant hold remains (nothing handed); {0} when another owner holds it; {-1} when no one does
--
-- A client that has its own goroutines waiting for a lock it releases gives
-- the lock straight to one of them: the lock is never free in between, so no
-- wake-up message and no new attempt are needed. The new owner gets a fresh
-- fencing token like any other acquisition.

local lock, fence = KEYS[1], KEYS[2]
local owner, next_owner, ttl, meta = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local holder = redis.call('HGET', lock, 'owner')
if not holder then
  return {-1}
end
if holder ~= owner then
  return {0}
end
if redis.call('HINCRBY', lock, 'count', -1) > 0 then
  return {2}
end

local token = redis.call('INCR', fence)
redis.call('HSET', lock, 'owner', next_owner, 'count', 1, 'fence', token, 'meta', meta)
redis.call('PEXPIRE', lock, ttl)
return {1, token}
