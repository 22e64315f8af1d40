-- name: rw.runlock
-- version: 1
-- description: Release one read hold of a read-write lock; the last reader out wakes the writers.
-- keys: readers holds
-- args: owner channel
-- returns: 1 when the owner's last read hold was released, 2 when read holds remain, -1 when the owner holds no read lease (it expired)

local readers, holds = KEYS[1], KEYS[2]
local owner, channel = ARGV[1], ARGV[2]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local deadline = redis.call('ZSCORE', readers, owner)
if not deadline or tonumber(deadline) <= now then
  redis.call('ZREM', readers, owner)
  redis.call('HDEL', holds, owner)
  return -1
end
if redis.call('HINCRBY', holds, owner, -1) > 0 then
  return 2
end
redis.call('ZREM', readers, owner)
redis.call('HDEL', holds, owner)
if redis.call('ZCOUNT', readers, '(' .. now, '+inf') == 0 then
  redis.call('PUBLISH', channel, 'released')
end
return 1
