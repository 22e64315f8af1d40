-- name: sem.forceunlock
-- version: 1
-- description: Remove every permit holder of a semaphore, whoever they are, for operators freeing a stuck semaphore, and wake the queued waiters that now fit.
-- keys: permits limit queue waiters
-- args: channel publish notify_prefix
-- returns: the number of owners whose live permits were removed (0 when no permit was held)
--
-- The holders are not asked: at their next renewal (sem.extend@1 replies
-- -1) or release (sem.release@4 counts none of their permits as held) they
-- find their permits gone and report the lease lost. The fence key stays,
-- so the next holder's token is still larger than the removed ones'.
--
-- The waiters are woken as sem.release@4 wakes them after a release: the
-- live waiters at the head of the queue whose permits now fit, in order,
-- each with "wake <owner>" on notify_prefix .. its client, stopping at the
-- first that does not fit; entries whose deadline passed are dropped on
-- the way; "released" goes on channel when no live waiter is queued, for
-- waiters of sem.acquire@4 (they do not queue). When no permit is held,
-- nothing is written and no one is woken.

local permits, limit_key, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel, publish, notify_prefix = ARGV[1], ARGV[2], ARGV[3]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local owners, removed = {}, 0
for _, member in ipairs(redis.call('ZRANGEBYSCORE', permits, '(' .. now, '+inf')) do
  local who = string.match(member, '^(.*):%d+$') or member
  if not owners[who] then
    owners[who] = true
    removed = removed + 1
  end
end
if removed == 0 then
  return 0
end
redis.call('DEL', permits)

-- No permit is in use now: wake the head of the queue up to the limit.
local stored = tonumber(redis.call('GET', limit_key))
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
      if reserved + n > its_limit then
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
return removed
