-- name: rw.lock
-- version: 4
-- description: Take the write hold of a read-write lock when no one else holds it, or queue the writer with a short waiter lease.
-- keys: writer readers holds waiting fence permits gone clients
-- args: owner ttl_ms waiter_ttl_ms meta attempt client
-- returns: {1, fence_token, hold_count} when taken or re-entered; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The write hold is the same hash a mutex uses (owner, count, fence, meta),
-- so mutex.release, mutex.extend and mutex.inspect serve it. Read holds of
-- the writer's own owner do not block it (a reader upgrading alone).
--
-- Version 2: fencing tokens come from the server's clock, max(last + 1, TIME
-- in microseconds), with the last token kept only as long as a lease, so no
-- key outlives the lock and tokens do not go backwards after data loss
-- unless the server's clock does; and a name held by another kind of lock
-- is refused with {-1, kind}.
--
-- Version 3: an attempt recorded in gone takes nothing and replies {0, 0};
-- it does not join the writers' waiting set either. A Lock that gave up on
-- a timeout undoes its attempt with mutex.release@4, which records the
-- attempt there and drops the write hold only if that attempt took it: a
-- fresh write hold now keeps the attempt that took it (field attempt; a
-- re-entry keeps the first one).
--
-- Version 4: a writer that waits also records its Client's id in clients
-- (owner -> client id), a hash that expires with the waiting set, so that
-- a release wakes only the oldest live waiting writer, with "wake <owner>"
-- on that Client's grant channel (rw.runlock@4, rw.unlock@1), instead of
-- every waiter with "released". Who may take the lock is exactly version
-- 3's; only who is woken changes. An empty client records nothing (such a
-- writer is woken by "released" only). The entries of a writer that takes
-- the lock, or whose waiter lease ran out, are dropped here; rw.leave@3
-- drops those of a writer that gave up. A process still on version 3
-- records no client: a release of this version that finds such a writer at
-- the head of the waiting set publishes "released" as before, and a
-- version-3 release (rw.runlock@3, mutex.release@5) publishes only
-- "released", which a version-4 waiter does not listen to: it looks again
-- when its wait hint runs out (see the locks package's mixed-deploy notes).

local writer, readers, holds, waiting, fence, permits = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local gone, clients = KEYS[7], KEYS[8]
local owner, ttl, waiter_ttl, meta, attempt = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
local client = ARGV[6]

if redis.call('HEXISTS', gone, attempt) == 1 then
  return {0, 0} -- the caller gave up on this attempt and undid it
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

local kind = redis.call('HGET', writer, 'kind')
if kind and kind ~= 'rwmutex' then
  return {-1, kind}
end
if redis.call('ZCOUNT', permits, '(' .. now, '+inf') > 0 then
  return {-1, 'semaphore'}
end

for _, expired in ipairs(redis.call('ZRANGEBYSCORE', readers, '-inf', now)) do
  redis.call('ZREM', readers, expired)
  redis.call('HDEL', holds, expired)
end
-- Writers whose waiter lease ran out leave the set, and their clients
-- with them.
for _, expired in ipairs(redis.call('ZRANGEBYSCORE', waiting, '-inf', now)) do
  redis.call('ZREM', waiting, expired)
  redis.call('HDEL', clients, expired)
end

local holder = redis.call('HGET', writer, 'owner')
if holder == owner then
  local count = redis.call('HINCRBY', writer, 'count', 1)
  redis.call('PEXPIRE', writer, ttl)
  return {1, tonumber(redis.call('HGET', writer, 'fence')), count}
end

local others = redis.call('ZCARD', readers)
if redis.call('ZSCORE', readers, owner) then
  others = others - 1
end
if not holder and others == 0 then
  redis.call('ZREM', waiting, owner)
  redis.call('HDEL', clients, owner)
  local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
  redis.call('SET', fence, string.format('%d', token), 'PX', ttl)
  redis.call('HSET', writer, 'owner', owner, 'count', 1, 'fence', string.format('%d', token), 'meta', meta,
    'kind', 'rwmutex', 'attempt', attempt)
  redis.call('PEXPIRE', writer, ttl)
  return {1, token, 1}
end

-- Wait, and hold new readers back meanwhile.
redis.call('ZADD', waiting, now + waiter_ttl, owner)
if redis.call('PTTL', waiting) < waiter_ttl then
  redis.call('PEXPIRE', waiting, waiter_ttl)
end
-- The client lets a release wake this writer alone; the hash lives as long
-- as the waiting set (at least this waiter's lease).
if client ~= '' then
  redis.call('HSET', clients, owner, client)
  if redis.call('PTTL', clients) < waiter_ttl then
    redis.call('PEXPIRE', clients, waiter_ttl)
  end
end
local hint = math.floor(waiter_ttl / 3)
if holder then
  hint = math.min(hint, redis.call('PTTL', writer))
else
  local first = redis.call('ZRANGE', readers, 0, 0, 'WITHSCORES')
  hint = math.min(hint, tonumber(first[2]) - now)
end
return {0, math.max(1, hint)}
