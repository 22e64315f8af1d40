-- name: multi.acquire
-- version: 3
-- description: Take several mutexes of one cluster slot at once, all or none.
-- keys: gone locks...
-- args: owner ttl_ms meta attempt
-- returns: {1, fence_token_1, fence_token_2, ...} when all were free and are taken; {0, index, pttl_ms} naming the first held lock otherwise; {-1, index, kind} when another kind of lock holds a name; {0, 0, 0} when the caller gave up on this attempt
--
-- Nothing is written unless every lock is free, so a caller never holds
-- part of the set. Locks in different cluster slots cannot share a script;
-- the locks package takes such groups in a fixed order instead.
--
-- Version 3 changes three things from version 2:
--
-- * gone is the gone hash of the group's first lock: an attempt recorded
--   there takes nothing. A call that gave up on a timeout undoes its attempt
--   with mutex.release@4 on each lock, the first lock first: that records
--   the attempt in the lock's gone hash and drops the hold only if this
--   attempt took it, which each lock hash now says (field attempt). Before,
--   a timed-out call whose script ran, or ran later, left every lock of the
--   group held by no one until the lease ran out.
-- * The locks come in triples: the lock hash, then the name's readers and
--   permits (an RWMutex's and a Semaphore's keys). A name that another kind
--   of lock holds is refused with {-1, index, kind}, as mutex.acquire
--   refuses it; version 2 took a name a Semaphore or readers held, and
--   waited on an RWMutex writer as on a mutex.
-- * Each lock's last fencing token is read from and kept in its hash (field
--   fence), where mutex.acquire@3 and later keep it; version 2's separate
--   fence keys are neither read nor written. A token is max(last + 1, TIME
--   in microseconds).

local gone = KEYS[1]
local owner, ttl, meta, attempt = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if #KEYS < 4 or (#KEYS - 1) % 3 ~= 0 then
  return redis.error_reply('ERR multi.acquire takes the gone key, then a lock, readers and permits key per lock')
end

if redis.call('HEXISTS', gone, attempt) == 1 then
  return {0, 0, 0}
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

local last = {}
for i = 2, #KEYS, 3 do
  local index = (i + 1) / 3
  local held = redis.call('HMGET', KEYS[i], 'owner', 'kind', 'fence')
  if held[1] and held[2] and held[2] ~= 'mutex' then
    return {-1, index, held[2]}
  end
  if held[1] then
    return {0, index, redis.call('PTTL', KEYS[i])}
  end
  if redis.call('ZCOUNT', KEYS[i + 1], '(' .. now, '+inf') > 0 then
    return {-1, index, 'rwmutex'}
  end
  if redis.call('ZCOUNT', KEYS[i + 2], '(' .. now, '+inf') > 0 then
    return {-1, index, 'semaphore'}
  end
  last[i] = tonumber(held[3]) or 0
end

local reply = {1}
for i = 2, #KEYS, 3 do
  local token = string.format('%d', math.max(last[i] + 1, now_us))
  redis.call('HSET', KEYS[i], 'owner', owner, 'count', '1', 'fence', token, 'meta', meta, 'kind', 'mutex',
    'attempt', attempt)
  redis.call('PEXPIRE', KEYS[i], ttl)
  reply[#reply + 1] = tonumber(token)
end
return reply
