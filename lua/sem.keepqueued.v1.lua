-- name: sem.keepqueued
-- version: 1
-- description: Keep one client's queued waiters of a semaphore in its queue with a single call, and wake the waiters at the head that fit.
-- keys: permits limit queue waiters
-- args: publish notify_prefix owners...
-- returns: {queued_1, queued_2, ...}: 1 when owners[i] was queued and its deadline moved, 0 when it is not queued (it took its permits, gave up, or was dropped as dead)
--
-- sem.acquire@5 queues a waiter with a deadline of its waiter TTL; a
-- Client refreshes the deadlines of all its waiters of one semaphore with
-- this script, so the script runs grow with the clients, not with the
-- waiters (as mutex.keepqueued does for mutexes). Only the deadline of an
-- entry changes, to the server's time plus the entry's own waiter TTL, and
-- the queue keys live at least that long. An owner without an entry is not
-- queued again: only sem.acquire queues.
--
-- The refresh also wakes the live waiters at the head whose permits fit,
-- as a release does: no release comes when the holders died (their permits
-- run out) or when a woken waiter died before taking its permits, and its
-- entry was dropped only now. A waiter already woken may be woken twice;
-- it looks again, which costs one script run.

local permits, limit_key, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local publish, notify_prefix = ARGV[1], ARGV[2]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
local owners = {unpack(ARGV, 3)}

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local reply = {}
if #owners > 0 then
  local entries = redis.call('HMGET', waiters, unpack(owners))
  local fresh, longest = {}, 0
  for i, owner in ipairs(owners) do
    reply[i] = 0
    local entry = entries[i]
    if entry then
      -- kept is the entry after its deadline, starting with the waiter TTL
      local kept, waiter_ttl = string.match(entry, '^%d+ ((%d+) .*)$')
      if kept then
        fresh[#fresh + 1] = owner
        fresh[#fresh + 1] = string.format('%d', now + tonumber(waiter_ttl)) .. ' ' .. kept
        longest = math.max(longest, tonumber(waiter_ttl))
        reply[i] = 1
      end
    end
  end
  if #fresh > 0 then
    redis.call('HSET', waiters, unpack(fresh))
    if redis.call('PTTL', queue) < longest then
      redis.call('PEXPIRE', queue, longest)
    end
    if redis.call('PTTL', waiters) < longest then
      redis.call('PEXPIRE', waiters, longest)
    end
  end
end

local stored = tonumber(redis.call('GET', limit_key))
redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
local used = redis.call('ZCARD', permits)
local reserved, i = 0, 0
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
return reply
