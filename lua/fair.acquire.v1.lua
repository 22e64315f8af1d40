-- name: fair.acquire
-- version: 1
-- description: Take a fair (FIFO) mutex when it is free and it is the caller's turn, or queue the caller with a short waiter lease.
-- keys: lock fence queue waiters
-- args: owner ttl_ms waiter_ttl_ms reentrant meta
-- returns: {1, fence_token, hold_count} when the caller holds the lock; {0, wait_hint_ms, position} when it must wait
--
-- queue is a sorted set of waiting owners by arrival; waiters is a hash of
-- owner -> "deadline_ms ttl_ms waiter_ttl_ms meta" (server time). A waiter refreshes its
-- deadline by calling this script again; one that stops (crashed, gone) is
-- purged once its deadline passes, so it delays the queue by at most its
-- waiter lease. Only the server's clock is used.

local lock, fence, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, ttl, waiter_ttl, reentrant, meta = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- Drop waiters whose waiter lease ran out.
local entries = redis.call('HGETALL', waiters)
for i = 1, #entries, 2 do
  local deadline = tonumber(string.match(entries[i + 1], '^(%d+)'))
  if deadline <= now then
    redis.call('HDEL', waiters, entries[i])
    redis.call('ZREM', queue, entries[i])
  end
end

local holder = redis.call('HGET', lock, 'owner')
if holder == owner then
  -- Either a reentrant hold, or ownership that fair.release handed to this
  -- waiter while its wake-up message was on the way: claim it.
  local count = tonumber(redis.call('HGET', lock, 'count'))
  if reentrant == '1' then
    count = redis.call('HINCRBY', lock, 'count', 1)
  end
  -- A handed-over lock starts with only the waiter lease; the caller is
  -- alive, so give it the full lease now.
  redis.call('PEXPIRE', lock, ttl)
  return {1, tonumber(redis.call('HGET', lock, 'fence')), count}
end

if not holder then
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if head == nil or head == owner then
    redis.call('ZREM', queue, owner)
    redis.call('HDEL', waiters, owner)
    local token = redis.call('INCR', fence)
    redis.call('HSET', lock, 'owner', owner, 'count', 1, 'fence', token, 'meta', meta)
    redis.call('PEXPIRE', lock, ttl)
    return {1, token, 1}
  end
end

if not redis.call('ZSCORE', queue, owner) then
  local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  local seq = 1
  if last[2] then
    seq = tonumber(last[2]) + 1
  end
  redis.call('ZADD', queue, seq, owner)
end
redis.call('HSET', waiters, owner, (now + waiter_ttl) .. ' ' .. ttl .. ' ' .. waiter_ttl .. ' ' .. meta)

-- Wait until woken, or until the lock's lease or a waiter refresh is due.
local hint = math.floor(waiter_ttl / 3)
local pttl = redis.call('PTTL', lock)
if pttl > 0 and pttl < hint then
  hint = pttl
end
return {0, hint, redis.call('ZRANK', queue, owner) + 1}
