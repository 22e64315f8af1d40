-- name: rw.rlock
-- version: 3
-- description: Take a read hold of a read-write lock, unless a writer holds it or (with writer preference) waits for it.
-- keys: writer readers holds waiting fence permits gone
-- args: owner ttl_ms prefer_writers attempt
-- returns: {1, fence_token, hold_count} when the read hold is taken; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- Every reader has its own lease: readers is a sorted set of owner -> lease
-- deadline (server time, ms), holds counts each owner's reentrant read holds.
-- A reader that crashed frees only its own share, when its deadline passes.
-- waiting is a sorted set of writers waiting, by waiter-lease deadline: while
-- one is live, new readers queue behind it, so writers are not starved.
-- The writer itself is the mutex hash under writer; its owner may also take
-- read holds, which is how a writer downgrades.
--
-- Version 2: fencing tokens come from the server's clock, max(last + 1, TIME
-- in microseconds), with the last token kept only as long as a lease, so no
-- key outlives the lock and tokens do not go backwards after data loss
-- unless the server's clock does; and a name held by another kind of lock
-- is refused with {-1, kind}.
--
-- Version 3: an attempt recorded in gone (by rw.runlock@3, with which an
-- RLock that gave up on a timeout undoes its attempt) takes nothing and
-- replies {0, 0}.

local writer, readers, holds, waiting, fence, permits = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local gone = KEYS[7]
local owner, ttl, prefer_writers, attempt = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

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

-- Drop readers and waiting writers whose leases ran out.
for _, expired in ipairs(redis.call('ZRANGEBYSCORE', readers, '-inf', now)) do
  redis.call('ZREM', readers, expired)
  redis.call('HDEL', holds, expired)
end
redis.call('ZREMRANGEBYSCORE', waiting, '-inf', now)

local holder = redis.call('HGET', writer, 'owner')
if holder and holder ~= owner then
  return {0, redis.call('PTTL', writer)}
end
local already = redis.call('ZSCORE', readers, owner)
if not holder and not already and prefer_writers == '1' and redis.call('ZCARD', waiting) > 0 then
  local first = redis.call('ZRANGE', waiting, 0, 0, 'WITHSCORES')
  return {0, math.max(1, tonumber(first[2]) - now)}
end

redis.call('ZADD', readers, now + ttl, owner)
local count = redis.call('HINCRBY', holds, owner, 1)
-- The sets live at least as long as their longest lease.
if redis.call('PTTL', readers) < ttl then
  redis.call('PEXPIRE', readers, ttl)
  redis.call('PEXPIRE', holds, ttl)
end
local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
redis.call('SET', fence, string.format('%d', token), 'PX', ttl)
return {1, token, count}
