-- name: rw.runlock
-- version: 4
-- description: Release one read hold of a read-write lock; the last reader out wakes the oldest waiting writer.
-- keys: readers holds gone waiting clients
-- args: owner channel publish attempt gone_ttl_ms notify_prefix
-- returns: 1 when the owner's last read hold was released, 2 when read holds remain, -1 when the owner holds no read lease (it expired), 0 when the owner is empty (the attempt was only recorded)
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.
--
-- Version 3: an RLock that gave up on an ambiguous error (a timeout) undoes
-- what its attempt may have taken by calling this script with the attempt's
-- id: the attempt is recorded in gone first, so that rw.rlock@3 refuses it
-- if it reaches the server later, and the record and the release happen in
-- one script, with no moment between them for the late attempt. An empty
-- owner only records the attempt: a reentrant owner's read holds cannot be
-- told apart, so its undo drops none. An Unlock passes an empty attempt.
-- The record lives gone_ttl_ms; several clients share one gone hash per
-- lock name, so its expiry only moves forward.
--
-- Version 4: the last live reader out wakes only the oldest live writer of
-- the waiting set (lowest waiter deadline), with "wake <owner>" on
-- notify_prefix .. its client, the client rw.lock@4 recorded in clients,
-- instead of every waiter with "released" on channel: of several waiting
-- writers only one can take the lock, and a waiting reader cannot take it
-- while a writer waits. "released" still goes on channel when no live
-- writer waits (all waiting readers may proceed together), and when the
-- oldest one recorded no client (a writer of rw.lock@3, during a mixed
-- deploy, which listens only to channel).

local readers, holds, gone = KEYS[1], KEYS[2], KEYS[3]
local waiting, clients = KEYS[4], KEYS[5]
local owner, channel, publish, attempt = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local notify_prefix = ARGV[6]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

if attempt ~= '' then
  local gone_ttl = tonumber(ARGV[5])
  if not gone_ttl or gone_ttl < 1 then
    return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds')
  end
  redis.call('HSET', gone, attempt, 1)
  if redis.call('PTTL', gone) < gone_ttl then
    redis.call('PEXPIRE', gone, gone_ttl)
  end
  if owner == '' then
    return 0
  end
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local deadline = redis.call('ZSCORE', readers, owner)
if not deadline or tonumber(deadline) <= now then
  redis.call('ZREM', readers, owner)
  redis.call('HDEL', holds, owner)
  return -1
end
if redis.call('HINCRBY', holds, owner, -1) > 0 then
  return 2
end
redis.call('ZREM', readers, owner)
redis.call('HDEL', holds, owner)
if redis.call('ZCOUNT', readers, '(' .. now, '+inf') > 0 then
  return 1 -- live readers remain: no waiter can take the lock yet
end
local head = redis.call('ZRANGEBYSCORE', waiting, '(' .. now, '+inf', 'LIMIT', 0, 1)[1]
local client = head and redis.call('HGET', clients, head)
if client then
  redis.call(publish, notify_prefix .. client, 'wake ' .. head)
else
  redis.call(publish, channel, 'released')
end
return 1
