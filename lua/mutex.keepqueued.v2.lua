-- name: mutex.keepqueued
-- version: 2
-- description: Keep one client's waiters of a mutex in its queue with a single call: move each waiter's deadline forward by its own waiter TTL, and the queue's expiry with them.
-- keys: lock queue waiters
-- args: owners...
-- returns: {held, pttl_ms, queued_1, queued_2, ...}: held 1 when the lock has an owner, else 0; pttl_ms is the lock hash's PTTL; queued_i 1 when owners[i] was queued and its deadline moved, 0 when it is not queued (it was granted the lock, gave up, or a release dropped it as dead)
--
-- Version 2 keeps version 1's contract and takes the queue key too: since
-- mutex.acquire@5 the queue and waiters keys expire once no entry can be
-- live, so moving deadlines forward must move the keys' expiry with them,
-- or a waiter kept past its first waiter TTL would lose its place with
-- the keys.
--
-- Without it every queued waiter refreshes its place by running
-- mutex.acquire on its own, every third of its waiter TTL, so a thousand
-- waiters cost the server more than the hand-overs they wait for. A Client
-- runs this script for all of its waiters of one lock instead: the server's
-- work per refresh is one hash field per waiter, and the number of script
-- runs grows with the clients, not with the waiters.
--
-- A waiter's entry in waiters is "deadline_ms ttl_ms waiter_ttl_ms client
-- meta..." (mutex.acquire@2 and later write it); only the deadline changes,
-- to the server's time plus the entry's own waiter TTL. An owner without an
-- entry is not queued again: only mutex.acquire queues, so that its
-- position and its claim on a grant stay that script's business. held and
-- pttl_ms let the client see a lock whose holder vanished without a
-- release (no owner while waiters wait), so that its waiters look at once.

local lock, queue, waiters = KEYS[1], KEYS[2], KEYS[3]

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
local longest = 0
for i, owner in ipairs(ARGV) do
  local queued = 0
  local entry = entries[i]
  if entry then
    local rest, waiter_ttl = string.match(entry, '^%d+ (%d+ (%d+) .*)$')
    if rest then
      waiter_ttl = tonumber(waiter_ttl)
      fresh[#fresh + 1] = owner
      fresh[#fresh + 1] = string.format('%d', now + waiter_ttl) .. ' ' .. rest
      longest = math.max(longest, waiter_ttl)
      queued = 1
    end
  end
  reply[i + 2] = queued
end
if #fresh > 0 then
  redis.call('HSET', waiters, unpack(fresh))
  -- No key may expire before the latest deadline just written.
  for _, key in ipairs({queue, waiters}) do
    if redis.call('PTTL', key) < longest then
      redis.call('PEXPIRE', key, longest)
    end
  end
end
return reply
