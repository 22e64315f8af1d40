-- name: mutex.release
-- version: 5
-- description: Release one hold of a mutex, or undo a call that gave up, and hand the lock to the call that queued next.
-- keys: lock queue waiters gone
-- args: owner channel notify_prefix publish attempt gone_ttl_ms lease_attempt
-- returns: 3 when handed to the next waiter, 1 when freed, 2 when a reentrant hold remains (or, undoing, a hold this attempt did not take), 0 when another owner (or another call of this owner) holds it, -1 when no one does
--
-- Version 5 keeps version 4's contract and lets the gone hash's expiry only
-- move forward, as rw.runlock@3 and sem.release@3 do: clients with
-- different TTLs share one gone hash per lock name, and version 4 set its
-- expiry to each undo's gone_ttl_ms, so a client with a short TTL could cut
-- short the record of another client's given-up attempt. A gone_ttl_ms
-- that is not a positive number is an error naming it (version 4 passed it
-- to PEXPIRE).
--
-- Version 4 kept version 3's contract and handed the lock to a call, not
-- only to an owner: mutex.acquire@4 ends a waiter's entry with a tab and
-- the attempt id of the call that queued, and a hand-over records that
-- attempt in the lock hash (field attempt) and names it in the message,
-- "grant <fence> <attempt> <owner>", so that of several waiting calls of
-- one owner only that call takes the lock. An entry without an attempt
-- (written by mutex.acquire@3) is handed over as version 3 did, with an
-- empty attempt and the message "granted <fence> <owner>".
--
-- Undoing (attempt non-empty) touches only what that attempt owns: its
-- queue entry (not another call's of the same owner) and a hold whose
-- attempt field is its own. Version 3 also released any grant still
-- unclaimed, which could be another call's. An Unlock (attempt empty)
-- passes lease_attempt, the attempt that took the hold it drops: when
-- another call of the same owner holds the lock now (the first call's
-- lease ran out), the Unlock leaves it alone and replies 0. An empty
-- lease_attempt (a reentrant owner, whose calls are one holder; an RWMutex
-- writer) or a hold without an attempt releases any hold of the owner.
--
-- The rest is version 3's. A release looks at the queue only when a waiter
-- marked the lock hash (waiting 1). Handing over inside the script keeps
-- the lock busy: the message goes on notify_prefix .. <client>, the
-- channel only the new owner's client listens to; only when no live
-- waiter is left is the lock freed, with "released" on channel for waiters
-- that do not queue (MultiLock). The new owner gets min(its lease, its
-- waiter lease) at first, so a waiter that died since its last refresh
-- holds the lock no longer than its waiter lease. The last token stays in
-- the lock hash (field fence, no owner) until the lease would have run
-- out. An undone attempt is recorded in gone so that, if it reaches the
-- server later, it takes nothing. publish is PUBLISH or SPUBLISH (cluster).

local lock, queue, waiters, gone = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, channel, notify_prefix, publish = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local attempt, gone_ttl, lease_attempt = ARGV[5], ARGV[6], ARGV[7]

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

-- entry_parts splits a waiter entry into its fields; attempt is '' in an
-- entry that mutex.acquire@3 wrote.
local function entry_parts(entry)
  local deadline, ttl, waiter_ttl, client, rest = string.match(entry, '^(%d+) (%d+) (%d+) (%S+) (.*)$')
  if not deadline then
    return nil
  end
  local meta, queued_by = string.match(rest, '^(.*)\t([^\t]*)$')
  if not meta then
    meta, queued_by = rest, ''
  end
  return deadline, ttl, waiter_ttl, client, meta, queued_by
end

if attempt ~= '' then
  -- Giving up: leave the queue unless another call of this owner queued
  -- since, and refuse this attempt if it arrives late.
  local gone_ms = tonumber(gone_ttl)
  if not gone_ms or gone_ms < 1 then
    return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds')
  end
  local entry = redis.call('HGET', waiters, owner)
  local queued_by = ''
  if entry then
    queued_by = select(6, entry_parts(entry)) or ''
  end
  if queued_by == '' or queued_by == attempt then
    redis.call('ZREM', queue, owner)
    redis.call('HDEL', waiters, owner)
  end
  redis.call('HSET', gone, attempt, 1)
  if redis.call('PTTL', gone) < gone_ms then
    redis.call('PEXPIRE', gone, gone_ms)
  end
end

local held = redis.call('HMGET', lock, 'owner', 'count', 'attempt', 'granted', 'fence', 'waiting')
local holder, count, held_attempt, granted = held[1], held[2], held[3], held[4]
if not holder then
  return -1
end
if holder ~= owner then
  return 0
end
if lease_attempt ~= '' and held_attempt and held_attempt ~= '' and held_attempt ~= lease_attempt then
  return 0 -- another call of this owner took the lock after this call's lease ran out
end
if attempt ~= '' and held_attempt ~= attempt and not (granted == '1' and held_attempt == '') then
  -- A hold taken by (or handed to) another call of the same owner: not
  -- ours to drop. A grant with no attempt came from a version-3 release
  -- and may be ours: it is dropped, as version 3 did.
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
      local deadline, ttl, waiter_ttl, client, meta, queued_by = entry_parts(entry)
      if deadline and tonumber(deadline) > now then
        local first = math.min(tonumber(ttl), tonumber(waiter_ttl))
        local token = string.format('%d', math.max((tonumber(fence) or 0) + 1, now_us))
        local still_waiting = '0'
        if redis.call('EXISTS', queue) == 1 then
          still_waiting = '1'
        end
        redis.call('HSET', lock, 'owner', head, 'count', '1', 'fence', token, 'meta', meta, 'kind', 'mutex',
          'granted', '1', 'attempt', queued_by, 'waiting', still_waiting)
        redis.call('PEXPIRE', lock, first)
        local message = 'granted ' .. token .. ' ' .. head
        if queued_by ~= '' then
          message = 'grant ' .. token .. ' ' .. queued_by .. ' ' .. head
        end
        redis.call(publish, notify_prefix .. client, message)
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
