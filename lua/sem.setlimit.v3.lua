-- name: sem.setlimit
-- version: 3
-- description: Change a semaphore's permit count at run time and wake the queued waiters that now fit.
-- keys: limit permits queue waiters
-- args: permits channel publish notify_prefix
-- returns: the previous permit count, or false when it had never been set
--
-- Version 3 serves sem.acquire@5's queue: a larger count wakes the waiters
-- at the head whose permits now fit, in order, with "wake <owner>" on
-- notify_prefix .. their client, and a smaller one wakes those that ask
-- for more than it, so that they give up instead of holding the queue.
-- "released" still goes on channel for waiters of sem.acquire@4 (a mixed
-- deploy). Version 2: publish is PUBLISH, or SPUBLISH on a cluster with
-- sharded pub/sub.

local limit_key, permits, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local limit, channel, publish, notify_prefix = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if not limit or limit < 1 then
  return redis.error_reply('ERR permits must be at least 1')
end

local previous = redis.call('GET', limit_key)
redis.call('SET', limit_key, ARGV[1])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
local used = redis.call('ZCARD', permits)
local reserved, i = 0, 0
while true do
  local who = redis.call('ZRANGE', queue, i, i)[1]
  if not who then
    break
  end
  local deadline, n, its_client
  local entry = redis.call('HGET', waiters, who)
  if entry then
    deadline, n, its_client = string.match(entry, '^(%d+) %d+ (%d+) %d+ (%S+)$')
  end
  if deadline and tonumber(deadline) > now then
    n = tonumber(n)
    if n <= limit then
      if used + reserved + n > limit then
        break
      end
      reserved = reserved + n
    end
    redis.call(publish, notify_prefix .. its_client, 'wake ' .. who)
    i = i + 1
  else
    redis.call('ZREM', queue, who)
    redis.call('HDEL', waiters, who)
  end
end
redis.call(publish, channel, 'released')
return previous
