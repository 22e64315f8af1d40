-- name: mutex.extend
-- version: 1
-- description: Reset a mutex's lease to a new length, when the caller still owns it.
-- keys: lock
-- args: owner ttl_ms
-- returns: 1 when extended, 0 when another owner holds it, -1 when no one does (the lease expired)

local lock = KEYS[1]
local owner, ttl = ARGV[1], ARGV[2]

local holder = redis.call('HGET', lock, 'owner')
if not holder then
  return -1
end
if holder ~= owner then
  return 0
end
redis.call('PEXPIRE', lock, ttl)
return 1
