-- name: mutex.acquire
-- version: 1
-- description: Take a mutex when it is free, or re-enter it when the same owner holds it and reentrancy is on.
-- keys: lock fence
-- args: owner ttl_ms reentrant meta
-- returns: {1, fence_token, hold_count} when taken or re-entered; {0, pttl_ms} when another owner holds it
--
-- The lock is a hash under KEYS[1] (owner, count, fence, meta) that expires
-- with the lease; the lease's length is relative (PEXPIRE), so only the
-- server's clock counts. KEYS[2] is the fencing counter: it never expires,
-- so tokens keep growing across owners, expiries and re-acquisitions.

local lock, fence = KEYS[1], KEYS[2]
local owner, ttl, reentrant, meta = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local holder = redis.call('HGET', lock, 'owner')
if not holder then
  local token = redis.call('INCR', fence)
  redis.call('HSET', lock, 'owner', owner, 'count', 1, 'fence', token, 'meta', meta)
  redis.call('PEXPIRE', lock, ttl)
  return {1, token, 1}
end

if holder == owner and reentrant == '1' then
  local count = redis.call('HINCRBY', lock, 'count', 1)
  redis.call('PEXPIRE', lock, ttl)
  return {1, tonumber(redis.call('HGET', lock, 'fence')), count}
end

return {0, redis.call('PTTL', lock)}
