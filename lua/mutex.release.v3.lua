-- name: mutex.release
-- version: 3
-- description: Release one hold of a mutex, or take a waiter that gave up out of the queue, and hand the lock to the next live waiter.
-- keys: lock queue waiters gone
-- args: owner channel notify_prefix publish attempt gone_ttl_ms
-- returns: 3 when handed to the next waiter, 1 when freed, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does
--
-- Version 3 keeps version 2's contract without the fence key: a release
-- leaves the last token in the lock hash (field fence, no owner) until the
-- lease would have run out (see mutex.acquire@3). It looks at the queue
-- only when a waiter marked the lock hash (waiting 1): a release with no
-- one waiting runs three commands.
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

local lock, queue, waiters, gone = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, channel, notify_prefix, publish = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local attempt, gone_ttl = ARGV[5], ARGV[6]

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

if attempt ~= '' then
  -- Giving up: leave the queue, and refuse this attempt if it arrives late.
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
  redis.call('HSET', gone, attempt, 1)
  redis.call('PEXPIRE', gone, gone_ttl)
end

local held = redis.call('HMGET', lock, 'owner', 'count', 'attempt', 'granted', 'fence', 'waiting')
local holder, count, held_attempt, granted = held[1], held[2], held[3], held[4]
if not holder then
  return -1
end
if holder ~= owner then
  return 0
end
if attempt ~= '' and held_attempt ~= attempt and granted ~= '1' then
  -- A reentrant hold taken by another call of the same owner: not ours to drop.
  return 2
end
if count ~= '1' and tonumber(count) > 1 then
  redis.call('HINCRBY', lock, 'count', -1)
  return 2
end
if held[6] == '1' then
  local fence = held[5]
  local time = redis.call('TIME')
  local now_us = time[1] * 1000000 + time[2]
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
        local token = string.format('%d', math.max((tonumber(fence) or 0) + 1, now_us))
        local still_waiting = '0'
        if redis.call('EXISTS', queue) == 1 then
          still_waiting = '1'
        end
        redis.call('HSET', lock, 'owner', head, 'count', '1', 'fence', token, 'meta', meta, 'kind', 'mutex',
          'granted', '1', 'attempt', '', 'waiting', still_waiting)
        redis.call('PEXPIRE', lock, first)
        redis.call(publish, notify_prefix .. client, 'granted ' .. token .. ' ' .. head)
        return 3
      end
    end
  end
end

-- Keep the last token (fence) until the lease would have run out, so that
-- the next grant's token is larger even within the same microsecond.
redis.call('HDEL', lock, 'owner', 'count', 'meta', 'kind', 'attempt', 'granted', 'waiting')
redis.call(publish, channel, 'released')
return 1
