-- name: sem.acquire
-- version: 6
-- description: Take count permits of a semaphore when that many are free and no earlier waiter is still owed them, or claim the permits a release handed to the caller; otherwise queue the caller, first come first served.
-- keys: permits limit fence lock readers gone queue waiters offers
-- args: owner count ttl_ms default_limit attempt waiter_ttl_ms client notify_prefix publish
-- returns: {1, fence_token, permits_left} when taken; {0, wait_hint_ms, limit, position, server_time_us} when it must wait (position 0: not queued; {0, 0, 0}: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- Version 6 keeps version 5's queue and rules and lets a release hand the
-- permits over (sem.release@5): a caller that queues leaves its lease
-- length in offers (owner -> ttl_ms), which tells the release that this
-- waiter's Client builds a lease from a grant message. Entering the queue
-- or leaving it (taking the permits, or dropped as dead) writes or drops
-- the offer with the entry; offers expires with the queue.
-- - A caller that is not queued but holds live permits under its owner
--   token was handed them (or took them in an attempt whose reply it
--   never saw): it claims them, their lease now runs ttl_ms from now, and
--   it gets a new fencing token, as a taker does.
-- - The reply on a wait ends with the server's time in microseconds, so
--   the waiter can tell a grant made after this call (its token, drawn
--   from the server's clock, is larger) from an older one that it must
--   not build a lease from.
--
-- From version 5: queue is a sorted set of owners by arrival, waiters maps
-- each owner to its entry "deadline_ms waiter_ttl_ms count default_limit
-- client" (unchanged, so version-5 scripts read version-6 entries). A
-- caller takes its permits only when they fit together with those of every
-- live waiter queued before it. A waiter whose deadline passed is dropped;
-- its Client keeps it queued with sem.keepqueued. waiter_ttl_ms 0 means
-- "do not queue" (TryAcquire). When permits are left after taking, the
-- waiters they are owed to are woken ("wake <owner>" on notify_prefix ..
-- client) and take them themselves. A count larger than the limit replies
-- {0, hint, limit, position}: the caller sees that it can never be served
-- and gives up; such an entry holds no one back.

local permits, limit_key, fence, lock, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local gone, queue, waiters, offers = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local owner, count, ttl, default_limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local attempt, waiter_ttl, client, notify_prefix, publish = ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if not count or count < 1 or not waiter_ttl or waiter_ttl < 0 then
  return redis.error_reply('ERR count must be at least 1 and waiter_ttl_ms at least 0')
end

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
local stored = tonumber(redis.call('GET', limit_key))
local limit = stored or default_limit
local used = redis.call('ZCARD', permits)

-- draw_token is the next fencing token: the server's time, or the last
-- token + 1 when that is larger; it lives as long as the new lease.
local function draw_token()
  local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
  redis.call('SET', fence, string.format('%d', token), 'PX', ttl)
  return token
end

if not redis.call('ZSCORE', queue, owner) and redis.call('ZSCORE', permits, owner .. ':1') then
  -- Handed over by a release (expired permits went above): claim them for
  -- a full lease.
  for k = 1, count do
    redis.call('ZADD', permits, 'XX', now + ttl, owner .. ':' .. k)
  end
  if redis.call('PTTL', permits) < ttl then
    redis.call('PEXPIRE', permits, ttl)
  end
  redis.call('HDEL', offers, owner)
  return {1, draw_token(), limit - used}
end

-- live returns the i-th live waiter (0-based) as who, count, limit,
-- client, dropping the entries before it whose deadline passed; nil at the
-- end of the queue.
local function live(i)
  while true do
    local who = redis.call('ZRANGE', queue, i, i)[1]
    if not who then
      return nil
    end
    local deadline, n, its_limit, its_client
    local entry = redis.call('HGET', waiters, who)
    if entry then
      deadline, n, its_limit, its_client = string.match(entry, '^(%d+) %d+ (%d+) (%d+) (%S+)$')
    end
    if deadline and tonumber(deadline) > now then
      return who, tonumber(n), stored or tonumber(its_limit), its_client
    end
    redis.call('ZREM', queue, who)
    redis.call('HDEL', waiters, who)
    redis.call('HDEL', offers, who)
  end
end

-- The permits owed to live waiters queued before this caller (all of the
-- queue for a caller not queued yet); fits is false once they leave too few.
local owed, fits, i = 0, used + count <= limit, 0
while fits do
  local who, n, its_limit = live(i)
  if not who or who == owner then
    break
  end
  if n <= its_limit then -- a larger request gives up when it looks
    owed = owed + n
    fits = used + owed + count <= limit
  end
  i = i + 1
end

if fits then
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
  redis.call('HDEL', offers, owner)
  for k = 1, count do
    redis.call('ZADD', permits, now + ttl, owner .. ':' .. k)
  end
  if redis.call('PTTL', permits) < ttl then
    redis.call('PEXPIRE', permits, ttl)
  end
  local token = draw_token()
  used = used + count
  if used < limit then
    -- Permits are left (some expired, or the count grew): wake the waiters
    -- they are owed to, as a release would.
    local reserved, j = 0, 0
    while true do
      local who, n, its_limit, its_client = live(j)
      if not who then
        break
      end
      if n <= its_limit then
        if used + reserved + n > its_limit then
          break
        end
        reserved = reserved + n
      end
      redis.call(publish, notify_prefix .. its_client, 'wake ' .. who)
      j = j + 1
    end
  end
  return {1, token, limit - used}
end

local hint = 1000
local first = redis.call('ZRANGE', permits, 0, 0, 'WITHSCORES')
if first[2] then
  hint = math.max(1, tonumber(first[2]) - now)
end
if waiter_ttl == 0 or count > limit then
  return {0, hint, limit, 0}
end

if not redis.call('ZSCORE', queue, owner) then
  local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  local seq = 1
  if last[2] then
    seq = tonumber(last[2]) + 1
  end
  redis.call('ZADD', queue, seq, owner)
end
redis.call('HSET', waiters, owner, table.concat({now + waiter_ttl, waiter_ttl, count, default_limit, client}, ' '))
if redis.call('PTTL', queue) < waiter_ttl then
  redis.call('PEXPIRE', queue, waiter_ttl)
end
if redis.call('PTTL', waiters) < waiter_ttl then
  redis.call('PEXPIRE', waiters, waiter_ttl)
end
redis.call('HSET', offers, owner, ttl)
if redis.call('PTTL', offers) < waiter_ttl then
  redis.call('PEXPIRE', offers, waiter_ttl)
end

-- The head also looks again when the first permit runs out (a holder that
-- died releases nothing); the others wait for a wake-up.
local position = redis.call('ZRANK', queue, owner) + 1
return {0, math.min(hint, math.max(1, math.floor(waiter_ttl / 3))), limit, position, now_us}
