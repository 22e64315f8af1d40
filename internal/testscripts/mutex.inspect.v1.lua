#!lua flags=no-writes
-- name: mutex.inspect
-- version: 1
-- description: Report who holds a mutex, how long its lease has left and how many wait in its queue.
-- keys: lock queue
-- args:
-- returns: {owner, fence_token, hold_count, pttl_ms, meta, queue_length}; owner is false when the lock is free
--
-- Read-only, so it may run on replicas with EVALSHA_RO: operators asking
-- "who holds this lock?" need not load the primary.

local lock, queue = KEYS[1], KEYS[2]

local owner, count, fence, meta = unpack(redis.call('HMGET', lock, 'owner', 'count', 'fence', 'meta'))
local waiting = 0
if redis.call('TYPE', queue).ok == 'zset' then
  waiting = redis.call('ZCARD', queue)
end
return {owner, tonumber(fence) or 0, tonumber(count) or 0, redis.call('PTTL', lock), meta or '', waiting}
