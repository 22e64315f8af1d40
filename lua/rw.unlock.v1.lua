-- name: rw.unlock
-- version: 1
-- description: Release one write hold of a read-write lock, or undo a Lock that gave up, and wake the oldest waiting writer.
-- keys: writer gone waiting clients
-- args: owner channel notify_prefix publish attempt gone_ttl_ms
-- returns: 1 when freed, 2 when a reentrant hold remains (or, undoing, a hold this attempt did not take), 0 when another owner holds it, -1 when no one does
--
-- Until now the write hold was released by mutex.release@5, the Mutex's
-- release: the write hold is the same hash (owner, count, fence, meta,
-- kind, attempt). This script is that release for the write hash alone,
-- with one change: once the hold is freed it also wakes the oldest live
-- writer of the waiting set (lowest waiter deadline; the releasing owner
-- is not among them, since taking the lock took it out of the set), with
-- "wake <owner>" on notify_prefix .. the client that rw.lock@4 recorded in
-- clients. Waiting writers of this release listen only there, so a
-- handoff between writers costs one attempt instead of one per waiter.
-- A new script rather than a new mutex.release: the Mutex's release needs
-- none of the RWMutex's keys, and its queue hand-over does not apply here
-- (rw.lock never marks the hash waiting, and a hand-over would write kind
-- mutex).
--
-- "released" still goes on channel whenever the hold is freed, as
-- mutex.release@5 did: waiting readers listen there, and with
-- WithReaderPreference a waiting writer does not hold them back, so they
-- may take the lock now; writers of rw.lock@3 (a mixed deploy) hear it too.
--
-- What is kept from mutex.release@5, for the write hash: an Unlock (attempt
-- empty) drops one hold of owner (count > 1: a reentrant hold remains).
-- Undoing (attempt non-empty) records the attempt in gone first, so that
-- rw.lock refuses it if it reaches the server later (the record lives
-- gone_ttl_ms; the hash is shared per lock name, so its expiry only moves
-- forward), and drops the hold only if that attempt took it (field
-- attempt). lease_attempt is left out: calls that share an owner token hold
-- the write hold under the token joined to their attempt id, so a writer's
-- Unlock never meets another call's hold under its own owner. The last
-- token (field fence) stays until the lease would have run out.

local writer, gone, waiting, clients = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, channel, notify_prefix, publish = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local attempt, gone_ttl = ARGV[5], ARGV[6]

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

if attempt ~= '' then
  -- Giving up: refuse this attempt if it arrives late.
  local gone_ms = tonumber(gone_ttl)
  if not gone_ms or gone_ms < 1 then
    return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds')
  end
  redis.call('HSET', gone, attempt, 1)
  if redis.call('PTTL', gone) < gone_ms then
    redis.call('PEXPIRE', gone, gone_ms)
  end
end

local held = redis.call('HMGET', writer, 'owner', 'count', 'attempt')
local holder, count, held_attempt = held[1], held[2], held[3]
if not holder then
  return -1
end
if holder ~= owner then
  return 0
end
if attempt ~= '' and held_attempt ~= attempt then
  return 2 -- a hold another call of this owner took: not ours to drop
end
if count ~= '1' and tonumber(count) > 1 then
  redis.call('HINCRBY', writer, 'count', -1)
  return 2
end

-- Keep the last token (fence) until the lease would have run out.
redis.call('HDEL', writer, 'owner', 'count', 'meta', 'kind', 'attempt', 'granted', 'waiting')
redis.call(publish, channel, 'released')

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local head = redis.call('ZRANGEBYSCORE', waiting, '(' .. now, '+inf', 'LIMIT', 0, 1)[1]
local client = head and redis.call('HGET', clients, head)
if client then
  redis.call(publish, notify_prefix .. client, 'wake ' .. head)
end -- else no writer waits, or a writer of rw.lock@3 (no client) heard "released"
return 1
