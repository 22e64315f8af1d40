-- name: mutex.forceunlock
-- version: 3
-- description: Remove a mutex's or an RWMutex writer's holder whoever it is, for operators freeing a stuck lock, and wake the waiters.
-- keys: lock waiting clients
-- args: channel publish notify_prefix
-- returns: 1 when a holder was removed, 0 when the lock was already free
--
-- The holder is not asked: its next renewal or Unlock finds the lock gone
-- (or held by someone else) and reports the lease lost.
--
-- Version 3 also wakes a waiting RWMutex writer. Since rw.lock@4 such a
-- writer listens only for the wake-up a release sends it ("wake <owner>" on
-- notify_prefix .. its client, which rw.lock@4 records in clients), not for
-- "released"; with version 2 it found the forced release only when its
-- wait hint ran out. When the removed holder was an RWMutex writer (kind
-- rwmutex), the oldest live waiting writer of waiting is woken as
-- rw.unlock@1 wakes it. waiting and clients are the RWMutex's "{N}:wwait"
-- and "{N}:wclients"; for a Mutex they do not exist and nothing more
-- happens.
--
-- From version 2: the hash stays without its owner until the removed lease
-- would have run out, keeping the last fencing token (field fence), so the
-- next owner's token is larger even within the same microsecond; publish is
-- PUBLISH or SPUBLISH, so that on a cluster the wake-up stays on the lock's
-- shard; "released" goes on channel, as an Unlock sends it.

local lock, waiting, clients = KEYS[1], KEYS[2], KEYS[3]
local channel, publish, notify_prefix = ARGV[1], ARGV[2], ARGV[3]

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
local kind = redis.call('HGET', lock, 'kind')
if redis.call('HDEL', lock, 'owner', 'count', 'meta', 'kind', 'attempt', 'granted', 'waiting') == 0 then
  return 0
end
redis.call(publish, channel, 'released')

if kind == 'rwmutex' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local head = redis.call('ZRANGEBYSCORE', waiting, '(' .. now, '+inf', 'LIMIT', 0, 1)[1]
  local client = head and redis.call('HGET', clients, head)
  if client then
    redis.call(publish, notify_prefix .. client, 'wake ' .. head)
  end
end
return 1
