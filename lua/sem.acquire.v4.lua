-- name: sem.acquire
-- version: 4
-- description: Take count permits of a semaphore when that many are free; each permit is a lease that expires.
-- keys: permits limit fence lock readers gone
-- args: owner count ttl_ms default_limit attempt
-- returns: {1, fence_token, permits_left} when taken; {0, wait_hint_ms, limit} when too few are free ({0, 0, 0}: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- permits is a sorted set of "owner:i" -> lease deadline (server time, ms):
-- permits of a holder that crashed come back when their deadline passes.
-- limit holds the permit count when it was changed at run time (SetPermits);
-- until then the caller's default applies.
--
-- Version 2: fencing tokens come from the server's clock, max(last + 1, TIME
-- in microseconds), with the last token kept only as long as a lease, so no
-- key outlives the lock and tokens do not go backwards after data loss
-- unless the server's clock does; and a name held by another kind of lock
-- is refused with {-1, kind}.
--
-- Version 3: a mutex or a read-write lock's writer holds the name only
-- while its hash has an owner. Since mutex.release@3 a released lock's hash
-- stays, without owner, to keep its last fencing token until the lease
-- would have run out; version 2 took that hash for a holder.
--
-- Version 4: an attempt recorded in gone (by sem.release@3, with which an
-- Acquire that gave up on a timeout undoes its attempt) takes nothing and
-- replies {0, 0, 0}.

local permits, limit_key, fence, lock, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local gone = KEYS[6]
local owner, count, ttl, default_limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local attempt = ARGV[5]

if redis.call('HEXISTS', gone, attempt) == 1 then
  return {0, 0, 0} -- the caller gave up on this attempt and undid it
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

local holder, kind = unpack(redis.call('HMGET', lock, 'owner', 'kind'))
if holder then
  return {-1, kind or 'mutex'}
end
if redis.call('ZCOUNT', readers, '(' .. now, '+inf') > 0 then
  return {-1, 'rwmutex'}
end

redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
local limit = tonumber(redis.call('GET', limit_key)) or default_limit
local used = redis.call('ZCARD', permits)
if used + count > limit then
  local first = redis.call('ZRANGE', permits, 0, 0, 'WITHSCORES')
  local hint = 1000
  if first[2] then
    hint = math.max(1, tonumber(first[2]) - now)
  end
  return {0, hint, limit}
end

for i = 1, count do
  redis.call('ZADD', permits, now + ttl, owner .. ':' .. i)
end
if redis.call('PTTL', permits) < ttl then
  redis.call('PEXPIRE', permits, ttl)
end
local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
redis.call('SET', fence, string.format('%d', token), 'PX', ttl)
return {1, token, limit - used - count}
