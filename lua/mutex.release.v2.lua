-- name: mutex.release
-- version: 2
-- description: Release one hold of a mutex, or take a waiter that gave up out of the queue, and hand the lock to the next live waiter.
-- keys: lock fence queue waiters gone
-- args: owner channel notify_prefix publish attempt gone_ttl_ms
-- returns: 3 when handed to the next waiter, 1 when freed, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does
--
-- Handing over inside the script keeps the lock busy: the next owner learns
-- it holds the lock from one message, "granted <fence> <owner>", published
-- on notify_prefix .. <its client id>, the channel only its client listens
-- to. Only when no live waiter is left is the lock freed, with "released" on
-- channel for waiters that do not queue (MultiLock).
--
-- The new owner gets only min(its lease, its waiter lease) at first, so a
-- waiter that died since its last refresh holds the lock no longer than its
-- waiter lease; a live one claims the full lease at once.
--
-- attempt non-empty means the caller gave up on an ambiguous error: it
-- leaves the queue, releases the hold only if this very attempt took it, and
-- records the attempt in gone, so that the attempt, if it reaches the
-- server later, takes nothing. publish is PUBLISH or SPUBLISH (cluster).

local lock, fence, queue, waiters, gone = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, channel, notify_prefix, publish = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local attempt, gone_ttl = ARGV[5], tonumber(ARGV[6])

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

redis.call('ZREM', queue, owner)
redis.call('HDEL', waiters, owner)
if attempt ~= '' then
  redis.call('HSET', gone, attempt, 1)
  redis.call('PEXPIRE', gone, gone_ttl)
end

local holder = redis.call('HGET', lock, 'owner')
if not holder then
  return -1
end
if holder ~= owner then
  return 0
end
if attempt ~= '' and redis.call('HGET', lock, 'attempt') ~= attempt and redis.call('HGET', lock, 'granted') ~= '1' then
  -- A reentrant hold taken by another call of the same owner: not ours to drop.
  return 2
end
if redis.call('HINCRBY', lock, 'count', -1) > 0 then
  return 2
end
redis.call('DEL', lock)

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)
while true do
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if head == nil then
    break
  end
  local entry = redis.call('HGET', waiters, head)
  redis.call('ZREM', queue, head)
  redis.call('HDEL', waiters, head)
  if entry then
    local deadline, ttl, waiter_ttl, client, meta = string.match(entry, '^(%d+) (%d+) (%d+) (%S+) (.*)$')
    if deadline and tonumber(deadline) > now then
      local first = math.min(tonumber(ttl), tonumber(waiter_ttl))
      local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
      redis.call('SET', fence, string.format('%d', token), 'PX', ttl)
      redis.call('HSET', lock, 'owner', head, 'count', 1, 'fence', string.format('%d', token),
        'meta', meta, 'kind', 'mutex', 'granted', 1, 'attempt', '')
      redis.call('PEXPIRE', lock, first)
      redis.call(publish, notify_prefix .. client, 'granted ' .. string.format('%d', token) .. ' ' .. head)
      return 3
    end
  end
end

redis.call(publish, channel, 'released')
return 1
