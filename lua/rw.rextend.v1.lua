-- name: rw.rextend
-- version: 1
-- description: Reset a reader's lease on a read-write lock to a new length, when the reader still holds it.
-- keys: readers holds
-- args: owner ttl_ms
-- returns: 1 when extended, -1 when the owner holds no live read lease

local readers, holds = KEYS[1], KEYS[2]
local owner, ttl = ARGV[1], tonumber(ARGV[2])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local deadline = redis.call('ZSCORE', readers, owner)
if not deadline or tonumber(deadline) <= now then
  return -1
end
redis.call('ZADD', readers, now + ttl, owner)
if redis.call('PTTL', readers) < ttl then
  redis.call('PEXPIRE', readers, ttl)
  redis.call('PEXPIRE', holds, ttl)
end
return 1
