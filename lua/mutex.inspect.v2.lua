#!lua flags=no-writes
-- name: mutex.inspect
-- version: 2
-- description: Report what holds a lock name, of any kind: a mutex's or writer's holder, an RWMutex's readers, a semaphore's permit holders, its permit count and queue.
-- keys: lock queue readers holds permits limit squeue swaiters
-- args:
-- returns: {owner, fence_token, hold_count, pttl_ms, meta, queue_length, kind, readers, holders, limit, semaphore_waiters}; owner is false when no mutex or writer holds the lock; kind is 'mutex', 'rwmutex', 'semaphore' or '' when nothing holds the name; readers is {owner, holds, pttl_ms, ...} and holders {owner, permits, pttl_ms, ...}, live leases only; limit is 0 when no SetPermits stored one
--
-- Read-only, so it may run on replicas with EVALSHA_RO: operators asking
-- "who holds this lock?" need not load the primary.
--
-- Version 2 keeps version 1's first six fields and answers for every kind
-- in the same call, so a name held by readers or by a semaphore's permits
-- no longer looks free. Leases are judged by the server's clock: a reader
-- or permit whose deadline passed is not reported (the next script that
-- writes drops it). Permits are the members "owner:i" of permits (see
-- sem.acquire@5), grouped here by owner; an owner's permits share one
-- deadline, so its lease left is the earliest of them. A queued semaphore
-- waiter counts while its entry in swaiters ("deadline_ms ...") is live.
-- Server time only (see server_ms).

local lock, queue, readers, holds = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local permits, limit_key, squeue, swaiters = KEYS[5], KEYS[6], KEYS[7], KEYS[8]

-- A key of another type (written by another tool) reads as absent rather
-- than failing the whole report.
local function is(key, type_name)
  return redis.call('TYPE', key).ok == type_name
end

-- The server's time in ms. miniredis (2.40) refuses TIME in a read-only
-- script, which Redis allows; there the time is read as a key's expiry
-- time less its remaining time, from the keys that hold leases (each has
-- an expiry while it does). When none has one, no lease is live: 0 then
-- keeps every entry, of which there is none.
local function server_ms()
  local time = redis.pcall('TIME')
  if not time.err then
    return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  for _, key in ipairs({permits, readers, squeue}) do
    local at, left = redis.call('PEXPIRETIME', key), redis.call('PTTL', key)
    if at > 0 and left >= 0 then
      return at - left
    end
  end
  return 0
end

local now = server_ms()

local owner, count, fence, meta, kind = false, nil, nil, nil, nil
if is(lock, 'hash') then
  owner, count, fence, meta, kind = unpack(redis.call('HMGET', lock, 'owner', 'count', 'fence', 'meta', 'kind'))
end
local waiting = 0
if is(queue, 'zset') then
  waiting = redis.call('ZCARD', queue)
end

local live_readers = {}
if is(readers, 'zset') then
  local with_holds = is(holds, 'hash')
  local found = redis.call('ZRANGEBYSCORE', readers, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #found, 2 do
    local n = 1
    if with_holds then
      n = tonumber(redis.call('HGET', holds, found[i])) or 1
    end
    table.insert(live_readers, found[i])
    table.insert(live_readers, n)
    table.insert(live_readers, tonumber(found[i + 1]) - now)
  end
end

local holders, at = {}, {}
if is(permits, 'zset') then
  local found = redis.call('ZRANGEBYSCORE', permits, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #found, 2 do
    local who = string.match(found[i], '^(.*):%d+$') or found[i]
    local j = at[who]
    if j then
      holders[j + 1] = holders[j + 1] + 1
    else
      at[who] = #holders + 1
      table.insert(holders, who)
      table.insert(holders, 1)
      table.insert(holders, tonumber(found[i + 1]) - now) -- the earliest: scores ascend
    end
  end
end

local limit = 0
if is(limit_key, 'string') then
  limit = tonumber(redis.call('GET', limit_key)) or 0
end

local sem_waiting = 0
if is(squeue, 'zset') and is(swaiters, 'hash') then
  for _, who in ipairs(redis.call('ZRANGE', squeue, 0, -1)) do
    local entry = redis.call('HGET', swaiters, who)
    local deadline = entry and string.match(entry, '^(%d+) ')
    if deadline and tonumber(deadline) > now then
      sem_waiting = sem_waiting + 1
    end
  end
end

if owner then
  kind = kind or 'mutex'
elseif #live_readers > 0 then
  kind = 'rwmutex'
elseif #holders > 0 then
  kind = 'semaphore'
else
  kind = ''
end

return {owner, tonumber(fence) or 0, tonumber(count) or 0, redis.call('PTTL', lock), meta or '', waiting,
  kind, live_readers, holders, limit, sem_waiting}
