-- name: mutex.keepqueued
-- version: 1
-- description: Keep one client's waiters of a mutex in its queue with a single call: move each waiter's deadline forward by its own waiter TTL.
-- keys: lock waiters
-- args: owners...
-- returns: {held, pttl_ms, queued_1, queued_2, ...}: held 1 when the lock has an owner, else 0; pttl_ms is the lock hash's PTTL; queued_i 1 when owners[i] was queued and its deadline moved, 0 when it is not queued (it was granted the lock, gave up, or a release dropped it as dead)
--
-- Without it every queued waiter refreshes its place by running
-- mutex.acquire on its own, every third of its waiter TTL, so a thousand
-- waiters cost the server more than the hand-overs they wait for. A Client
-- runs this script for all of its waiters of one lock instead: the server's
-- work per refresh is one hash field per waiter, and the number of script
-- runs grows with the clients, not with the waiters.
--
-- A waiter's entry in waiters is "deadline_ms ttl_ms waiter_ttl_ms client
-- meta" (mutex.acquire@2 and @3 write it); only the deadline changes, to
-- the server's time plus the entry's own waiter TTL. An owner without an
-- entry is not queued again: only mutex.acquire queues, so that its
-- position and its claim on a grant stay that script's business. held and
-- pttl_ms let the client see a lock whose holder vanished without a
-- release (no owner while waiters wait), so that its waiters look at once.

local lock, waiters = KEYS[1], KEYS[2]

local reply = {0, redis.call('PTTL', lock)}
if redis.call('HEXISTS', lock, 'owner') == 1 then
  reply[1] = 1
end
if #ARGV == 0 then
  return reply
end

local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local entries = redis.call('HMGET', waiters, unpack(ARGV))

local fresh = {}
for i, owner in ipairs(ARGV) do
  local queued = 0
  local entry = entries[i]
  if entry then
    local rest, waiter_ttl = string.match(entry, '^%d+ (%d+ (%d+) .*)$')
    if rest then
      fresh[#fresh + 1] = owner
      fresh[#fresh + 1] = string.format('%d', now + tonumber(waiter_ttl)) .. ' ' .. rest
      queued = 1
    end
  end
  reply[i + 2] = queued
end
if #fresh > 0 then
  redis.call('HSET', waiters, unpack(fresh))
end
return reply
