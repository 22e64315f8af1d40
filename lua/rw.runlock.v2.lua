-- name: rw.runlock
-- version: 2
-- description: Release one read hold of a read-write lock; the last reader out wakes the writers.
-- keys: readers holds
-- args: owner channel publish
-- returns: 1 when the owner's last read hold was released, 2 when read holds remain, -1 when the owner holds no read lease (it expired)
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.

local readers, holds = KEYS[1], KEYS[2]
local owner, channel, publish = ARGV[1], ARGV[2], ARGV[3]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end


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
  redis.call(publish, channel, 'released')
end
return 1
