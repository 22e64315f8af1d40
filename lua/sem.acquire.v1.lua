-- name: sem.acquire
-- version: 1
-- description: Take count permits of a semaphore when that many are free; each permit is a lease that expires.
-- keys: permits limit fence
-- args: owner count ttl_ms default_limit
-- returns: {1, fence_token, permits_left} when taken; {0, wait_hint_ms} when too few are free
--
-- permits is a sorted set of "owner:i" -> lease deadline (server time, ms):
-- permits of a holder that crashed come back when their deadline passes.
-- limit holds the permit count when it was changed at run time (SetPermits);
-- until then the caller's default applies.

local permits, limit_key, fence = KEYS[1], KEYS[2], KEYS[3]
local owner, count, ttl, default_limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
local limit = tonumber(redis.call('GET', limit_key)) or default_limit
local used = redis.call('ZCARD', permits)
if used + count > limit then
  local first = redis.call('ZRANGE', permits, 0, 0, 'WITHSCORES')
  local hint = 1000
  if first[2] then
    hint = math.max(1, tonumber(first[2]) - now)
  end
  return {0, hint}
end

for i = 1, count do
  redis.call('ZADD', permits, now + ttl, owner .. ':' .. i)
end
if redis.call('PTTL', permits) < ttl then
  redis.call('PEXPIRE', permits, ttl)
end
return {1, redis.call('INCR', fence), limit - used - count}
