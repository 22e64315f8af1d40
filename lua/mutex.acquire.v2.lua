-- name: mutex.acquire
-- version: 2
-- description: Take a mutex when it is free or re-enter it; otherwise queue the caller so that a release hands the lock to it.
-- keys: lock fence queue waiters readers permits gone
-- args: owner ttl_ms reentrant meta waiter_ttl_ms fair client attempt
-- returns: {1, fence_token, hold_count} when the caller holds the lock; {0, wait_hint_ms, position} when it must wait (position 0: not queued); {-1, kind} when another kind of lock holds the name
--
-- The lock is a hash under KEYS[1] (owner, count, fence, meta, kind, attempt)
-- that expires with the lease; only the server's clock counts.
--
-- Waiters queue in Redis: queue is a sorted set of owners by arrival, waiters
-- a hash of owner -> "deadline_ms ttl_ms waiter_ttl_ms client meta". A
-- release hands the lock to the oldest live waiter inside the release
-- script and tells only that waiter's client, on the channel the client
-- subscribed to; the other waiters run nothing. A waiter refreshes its entry
-- by calling this script again; one that stops is skipped once its deadline
-- passes, so it delays the queue by at most waiter_ttl_ms.
--
-- waiter_ttl_ms 0 means "do not queue" (TryLock). fair '1' forbids taking a
-- free lock ahead of a live waiter; in plain mode a newcomer may take a lock
-- that is free, which happens only when no live waiter was left to hand to.
--
-- Fencing tokens come from the server's clock: max(last token + 1, TIME in
-- microseconds). The last token lives in KEYS[2] only as long as a lease, so
-- no key outlives the lock, and a restart that lost data or a failover to a
-- replica that missed writes cannot make tokens go backwards unless the
-- server's clock does.
--
-- gone holds the attempts whose caller gave up on an ambiguous error (a
-- timeout): such an attempt that reaches the server late takes nothing.

local lock, fence, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local readers, permits, gone = KEYS[5], KEYS[6], KEYS[7]
local owner, ttl, reentrant, meta = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local waiter_ttl, fair, client, attempt = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]

if redis.call('HEXISTS', gone, attempt) == 1 then
  return {0, 0, 0}
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

-- Another kind of lock on the same name would share keys silently.
local kind = redis.call('HGET', lock, 'kind')
if kind and kind ~= 'mutex' then
  return {-1, kind}
end
if redis.call('ZCOUNT', readers, '(' .. now, '+inf') > 0 then
  return {-1, 'rwmutex'}
end
if redis.call('ZCOUNT', permits, '(' .. now, '+inf') > 0 then
  return {-1, 'semaphore'}
end

local function leave_queue(who)
  redis.call('ZREM', queue, who)
  redis.call('HDEL', waiters, who)
end

local holder = redis.call('HGET', lock, 'owner')
if holder == owner then
  local count = tonumber(redis.call('HGET', lock, 'count'))
  local claimed = true
  if redis.call('HGET', lock, 'granted') == '1' then
    -- A release handed the lock to this waiter: claim it, no new hold.
    redis.call('HDEL', lock, 'granted')
  elseif reentrant == '1' then
    count = redis.call('HINCRBY', lock, 'count', 1)
    redis.call('HSET', lock, 'attempt', attempt)
  else
    -- The same call retrying after an attempt that took the lock claims
    -- it; another call with the same owner waits, as for any holder.
    claimed = redis.call('HGET', lock, 'attempt') == attempt
  end
  if claimed then
    redis.call('PEXPIRE', lock, ttl)
    leave_queue(owner)
    return {1, tonumber(redis.call('HGET', lock, 'fence')), count}
  end
end

if not holder then
  -- Skip waiters at the head whose waiter lease ran out.
  local head
  while true do
    head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      break
    end
    local entry = redis.call('HGET', waiters, head)
    if entry and tonumber(string.match(entry, '^(%d+)')) > now then
      break
    end
    leave_queue(head)
  end
  if head == nil or head == owner or fair ~= '1' then
    leave_queue(owner)
    local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
    redis.call('SET', fence, string.format('%d', token), 'PX', ttl)
    redis.call('HSET', lock, 'owner', owner, 'count', 1, 'fence', string.format('%d', token), 'meta', meta)
    redis.call('HSET', lock, 'kind', 'mutex', 'attempt', attempt)
    redis.call('PEXPIRE', lock, ttl)
    return {1, token, 1}
  end
end

local pttl = redis.call('PTTL', lock)
if waiter_ttl == 0 then
  return {0, pttl, 0}
end

if not redis.call('ZSCORE', queue, owner) then
  local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  local seq = 1
  if last[2] then
    seq = tonumber(last[2]) + 1
  end
  redis.call('ZADD', queue, seq, owner)
end
local entry = table.concat({now + waiter_ttl, ttl, waiter_ttl, client, meta}, ' ')
redis.call('HSET', waiters, owner, entry)

-- Refresh before the waiter lease runs out; the head also looks again when
-- the holder's lease ends, in case the holder died without releasing.
local position = redis.call('ZRANK', queue, owner) + 1
local hint = math.floor(waiter_ttl / 3)
if position == 1 and pttl > 0 and pttl < hint then
  hint = pttl
end
return {0, math.max(hint, 1), position}
