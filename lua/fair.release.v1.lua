-- name: fair.release
-- version: 1
-- description: Release one hold of a fair mutex, or leave its queue, and hand the lock to the next live waiter.
-- keys: lock fence queue waiters
-- args: owner channel
-- returns: 1 when freed, 3 when handed to the next waiter, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does
--
-- Handing over inside the script is what makes the lock fair: no later
-- arrival can barge in, and the next owner learns it holds the lock from the
-- message "granted <fence> <owner>" without another round trip. A waiter that
-- gives up calls this script too: it leaves the queue, and if the lock was
-- handed to it meanwhile, passes it on.
--
-- The new owner gets only min(its lease, its waiter lease) at first: a waiter
-- that died since its last refresh then holds the lock no longer than its
-- waiter lease. A live one extends to its full lease on receipt.

local lock, fence, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, channel = ARGV[1], ARGV[2]

redis.call('ZREM', queue, owner)
redis.call('HDEL', waiters, owner)

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

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
while true do
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if head == nil then
    break
  end
  local entry = redis.call('HGET', waiters, head)
  redis.call('ZREM', queue, head)
  redis.call('HDEL', waiters, head)
  if entry then
    local deadline, ttl, waiter_ttl, meta = string.match(entry, '^(%d+) (%d+) (%d+) ?(.*)$')
    if tonumber(deadline) > now then
      local token = redis.call('INCR', fence)
      redis.call('HSET', lock, 'owner', head, 'count', 1, 'fence', token, 'meta', meta)
      redis.call('PEXPIRE', lock, math.min(tonumber(ttl), tonumber(waiter_ttl)))
      redis.call('PUBLISH', channel, 'granted ' .. token .. ' ' .. head)
      return 3
    end
  end
end

redis.call('PUBLISH', channel, 'released')
return 1
