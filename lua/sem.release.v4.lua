-- name: sem.release
-- version: 4
-- description: Give back the permits an owner holds, or undo an Acquire that gave up, and wake the queued waiters that now fit.
-- keys: permits gone limit queue waiters
-- args: owner count channel publish attempt gone_ttl_ms notify_prefix
-- returns: the number of the owner's permits that were still held (0 when they had expired)
--
-- Version 4 keeps version 3's contract and serves sem.acquire@5's queue:
-- instead of waking every waiter with "released" on channel, it wakes only
-- the waiters at the head of the queue whose permits now fit, in order,
-- each with "wake <owner>" on notify_prefix .. its client (see
-- sem.acquire@5 for the entries and the rule), and stops at the first that
-- does not fit. Waiters whose deadline passed are dropped on the way.
-- "released" still goes on channel when no live waiter is queued, for
-- waiters of sem.acquire@4 during a mixed deploy (they do not queue).
--
-- Undoing (attempt non-empty; the locks package passes the call's owner
-- token) also takes the call out of the queue, and wakes those behind it
-- that it held back.
--
-- The rest is version 3's: the attempt is recorded in gone first, so that
-- an acquire of it that reaches the server later takes nothing; the record
-- lives gone_ttl_ms, and since several clients share one gone hash per
-- semaphore, its expiry only moves forward.

local permits, gone, limit_key, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, count, channel, publish, attempt = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local notify_prefix = ARGV[7]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if not count or count < 1 then
  return redis.error_reply('ERR count must be at least 1')
end

if attempt ~= '' then
  local gone_ttl = tonumber(ARGV[6])
  if not gone_ttl or gone_ttl < 1 then
    return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds')
  end
  redis.call('HSET', gone, attempt, 1)
  if redis.call('PTTL', gone) < gone_ttl then
    redis.call('PEXPIRE', gone, gone_ttl)
  end
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', waiters, owner)
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local held = 0
for i = 1, count do
  local member = owner .. ':' .. i
  local deadline = redis.call('ZSCORE', permits, member)
  if deadline and tonumber(deadline) > now then
    held = held + 1
  end
  redis.call('ZREM', permits, member)
end

-- Wake the live waiters at the head that now fit, in order; a waiter that
-- asks for more than the limit is woken to give up and holds no one back.
local stored = tonumber(redis.call('GET', limit_key))
redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
local used = redis.call('ZCARD', permits)
local reserved, i, waiting = 0, 0, false
while true do
  local who = redis.call('ZRANGE', queue, i, i)[1]
  if not who then
    break
  end
  local deadline, n, its_limit, its_client
  local entry = redis.call('HGET', waiters, who)
  if entry then
    deadline, n, its_limit, its_client = string.match(entry, '^(%d+) %d+ (%d+) (%d+) (%S+)$')
  end
  if deadline and tonumber(deadline) > now then
    n, its_limit = tonumber(n), stored or tonumber(its_limit)
    if n <= its_limit then
      if used + reserved + n > its_limit then
        waiting = true
        break
      end
      reserved = reserved + n
    end
    redis.call(publish, notify_prefix .. its_client, 'wake ' .. who)
    waiting = true
    i = i + 1
  else
    redis.call('ZREM', queue, who)
    redis.call('HDEL', waiters, who)
  end
end
if not waiting then
  redis.call(publish, channel, 'released')
end
return held
