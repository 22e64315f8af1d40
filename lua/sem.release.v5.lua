-- name: sem.release
-- version: 5
-- description: Give back the permits an owner holds, or undo an Acquire that gave up, and hand the freed permits to the queued waiters that now fit.
-- keys: permits gone limit queue waiters fence offers
-- args: owner count channel publish attempt gone_ttl_ms notify_prefix
-- returns: the number of the owner's permits that were still held (0 when they had expired)
--
-- Version 5 keeps version 4's contract and hands permits over instead of
-- only waking: a waiter that sem.acquire@6 queued left its lease length in
-- offers (owner -> ttl_ms). Such a waiter at the head of the queue whose
-- permits now fit gets them here, in this script: its permits go into the
-- permits set with a lease of min(its TTL, its waiter TTL) from now, it
-- leaves the queue, a fencing token is drawn as sem.acquire draws one, and
-- "grant <token> <owner> <owner>" goes on notify_prefix .. its client (the
-- owner is also the attempt: a Semaphore call's owner token names the
-- call). Its Client builds the lease from the message, with no round
-- trip, and confirms the longer lease before the short one runs out; a
-- waiter that died meanwhile holds the permits no longer than its waiter
-- TTL. A waiter with no offer (queued by sem.acquire@5, during a mixed
-- deploy) is woken as version 4 wakes it and takes its permits itself.
--
-- Undoing (attempt non-empty) also drops the call's offer. The rest is
-- version 4's: the attempt is recorded in gone first, so that an acquire
-- of it that reaches the server later takes nothing; the record lives
-- gone_ttl_ms, and since several clients share one gone hash per
-- semaphore, its expiry only moves forward. "released" goes on channel
-- when no live waiter is queued.

local permits, gone, limit_key, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local fence, offers = KEYS[6], KEYS[7]
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
  redis.call('HDEL', offers, owner)
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

local held = 0
for i = 1, count do
  local member = owner .. ':' .. i
  local deadline = redis.call('ZSCORE', permits, member)
  if deadline and tonumber(deadline) > now then
    held = held + 1
  end
  redis.call('ZREM', permits, member)
end

-- grant gives n permits to the waiter who, whose lease is ttl_ms and
-- waiter lease waiter_ttl, and tells its client.
local function grant(who, n, ttl_ms, waiter_ttl, its_client)
  local first = math.min(ttl_ms, waiter_ttl)
  for k = 1, n do
    redis.call('ZADD', permits, now + first, who .. ':' .. k)
  end
  if redis.call('PTTL', permits) < first then
    redis.call('PEXPIRE', permits, first)
  end
  local token = math.max((tonumber(redis.call('GET', fence)) or 0) + 1, now_us)
  redis.call('SET', fence, string.format('%d', token), 'PX', ttl_ms)
  redis.call('ZREM', queue, who)
  redis.call('HDEL', waiters, who)
  redis.call('HDEL', offers, who)
  redis.call(publish, notify_prefix .. its_client, 'grant ' .. string.format('%d', token) .. ' ' .. who .. ' ' .. who)
end

-- Serve the live waiters at the head that now fit, in order: hand the
-- permits to those with an offer, wake the others; a waiter that asks for
-- more than the limit is woken to give up and holds no one back.
local stored = tonumber(redis.call('GET', limit_key))
redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
local used = redis.call('ZCARD', permits)
local reserved, i, waiting = 0, 0, false
while true do
  local who = redis.call('ZRANGE', queue, i, i)[1]
  if not who then
    break
  end
  local deadline, waiter_ttl, n, its_limit, its_client
  local entry = redis.call('HGET', waiters, who)
  if entry then
    deadline, waiter_ttl, n, its_limit, its_client = string.match(entry, '^(%d+) (%d+) (%d+) (%d+) (%S+)$')
  end
  if deadline and tonumber(deadline) > now then
    n, its_limit = tonumber(n), stored or tonumber(its_limit)
    local ttl_ms = tonumber(redis.call('HGET', offers, who))
    if n > its_limit then
      redis.call(publish, notify_prefix .. its_client, 'wake ' .. who)
      waiting = true
      i = i + 1
    elseif used + reserved + n > its_limit then
      waiting = true
      break
    elseif ttl_ms then
      grant(who, n, ttl_ms, tonumber(waiter_ttl), its_client)
      used = used + n -- who left the queue: the next entry is at i now
    else
      reserved = reserved + n
      redis.call(publish, notify_prefix .. its_client, 'wake ' .. who)
      waiting = true
      i = i + 1
    end
  else
    redis.call('ZREM', queue, who)
    redis.call('HDEL', waiters, who)
    redis.call('HDEL', offers, who)
  end
end
if not waiting then
  redis.call(publish, channel, 'released')
end
return held
