-- name: mutex.keepqueued
-- version: 6
-- description: Keep one client's waiters of a mutex in its queue with a single call: move each waiter's deadline forward by its own waiter TTL, and q and the keys' expiry with them.
-- keys: lock queue
-- args: owners...
-- returns: {held, left_ms, queued_1, queued_2, ...}: held 1 when a live hold of any kind is on the name, else 0; left_ms is the time until that hold ends (0 when none); queued_i 1 when owners[i] was queued and its deadline moved, 0 when it is not queued (it was granted the lock, gave up, or a release dropped it as dead)
--
-- The layout is mutex.acquire's: a waiter is w:<owner> in the lock hash,
-- "deadline_ms \t ttl_ms \t waiter_ttl_ms \t client \t attempt \t meta";
-- only the deadline changes, to the server's time plus the entry's own
-- waiter TTL, and q (someone may wait until then) moves to the latest
-- deadline when it is earlier. An owner without an entry is not queued
-- again: only mutex.acquire queues. An entry whose deadline passed is kept
-- only while its owner is still in the queue (a release or a fair acquire
-- drops the dead entries it walks past; the queue key expires with the
-- last deadline, while the lock hash may live on): otherwise it goes, and
-- its owner is not queued. held and left_ms let the client see a
-- name whose holder vanished without a release (no live hold while waiters
-- wait), so that its waiters look at once.
--
-- A Client runs this for its waiters of one lock, at most 100 a call,
-- instead of one mutex.acquire per waiter: the number of script runs grows
-- with the clients, not with the waiters. The script refuses more than 100
-- owners, as the locks package never sends more.
--
-- Cost: one HMGET of the owners' entries, TIME, one HSET and a constant
-- number of TTL calls, plus one ZSCORE per dead entry: proportional to the
-- owners passed (at most 100), whatever else waits on the name.

local lock, queue = KEYS[1], KEYS[2]
if #ARGV > 100 then
  return redis.error_reply('ERR mutex.keepqueued takes at most 100 owners a call, got ' .. #ARGV)
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local fields = {'h', 'q'}
for i, owner in ipairs(ARGV) do
  fields[i + 2] = 'w:' .. owner
end
local got = redis.call('HMGET', lock, unpack(fields))

local reply = {0, 0}
if got[1] then
  local ends = tonumber(string.match(got[1], '^[^\t]*\t(%d+)'))
  if ends and ends > now then
    reply = {1, ends - now}
  end
end
if #ARGV == 0 then
  return reply
end

local fresh = {}
local longest = 0
for i = 1, #ARGV do
  local queued = 0
  local entry = got[i + 2]
  if entry and tonumber(string.match(entry, '^(%d+)')) <= now and not redis.call('ZSCORE', queue, ARGV[i]) then
    redis.call('HDEL', lock, fields[i + 2])
    entry = nil
  end
  if entry then
    local waiter_ttl, rest = string.match(entry, '^%d+\t%d+\t(%d+)\t(.*)$')
    if waiter_ttl then
      local ttl = string.match(entry, '^%d+\t(%d+)\t')
      waiter_ttl = tonumber(waiter_ttl)
      fresh[#fresh + 1] = fields[i + 2]
      fresh[#fresh + 1] = (now + waiter_ttl) .. '\t' .. ttl .. '\t' .. waiter_ttl .. '\t' .. rest
      longest = math.max(longest, waiter_ttl)
      queued = 1
    end
  end
  reply[i + 2] = queued
end
if #fresh > 0 then
  if not got[2] or tonumber(got[2]) < now + longest then
    fresh[#fresh + 1] = 'q'
    fresh[#fresh + 1] = string.format('%d', now + longest)
  end
  redis.call('HSET', lock, unpack(fresh))
  -- No key may expire before the latest deadline just written, and the
  -- queue lives as long as the hash (as mutex.acquire keeps it).
  if redis.call('PEXPIRE', lock, longest, 'GT') == 0 then
    redis.call('PEXPIRE', lock, longest, 'NX')
  end
  local life = math.max(redis.call('PTTL', lock), longest)
  if redis.call('PTTL', queue) < life then
    redis.call('PEXPIRE', queue, life)
  end
end
return reply
