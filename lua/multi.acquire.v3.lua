-- name: multi.acquire
-- version: 3
-- description: Take several mutexes of one cluster slot at once, all or none.
-- keys: gone locks...
-- args: owner ttl_ms meta attempt
-- returns: {1, fence_token_1, fence_token_2, ...} when all were free and are taken; {0, index, pttl_ms} naming the first held lock otherwise; {0, 0, 0} when the caller gave up on this attempt
--
-- Nothing is written unless every lock is free, so a caller never holds
-- part of the set. Locks in different cluster slots cannot share a script;
-- the locks package takes such groups in a fixed order instead.
--
-- Version 3 changes two things from version 2:
--
-- * gone is the gone hash of the group's first lock: an attempt recorded
--   there (its caller gave up on a timeout and undid it, see gone.record)
--   takes nothing. Before, a timed-out call whose script ran, or ran later,
--   left every lock of the group held by no one until the lease ran out.
-- * Each lock's last fencing token is read from and kept in its hash (field
--   fence), where mutex.acquire@3 and later keep it, so KEYS are the lock
--   hashes alone; version 2's separate fence keys are neither read nor
--   written. A token is max(last + 1, TIME in microseconds).

local gone = KEYS[1]
local owner, ttl, meta, attempt = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if #KEYS < 2 then
  return redis.error_reply('ERR multi.acquire takes the gone key, then at least one lock key')
end

if redis.call('HEXISTS', gone, attempt) == 1 then
  return {0, 0, 0}
end

local last = {}
for i = 2, #KEYS do
  local held = redis.call('HMGET', KEYS[i], 'owner', 'fence')
  if held[1] then
    return {0, i - 1, redis.call('PTTL', KEYS[i])}
  end
  last[i] = tonumber(held[2]) or 0
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])

local reply = {1}
for i = 2, #KEYS do
  local token = string.format('%d', math.max(last[i] + 1, now_us))
  redis.call('HSET', KEYS[i], 'owner', owner, 'count', '1', 'fence', token, 'meta', meta, 'kind', 'mutex')
  redis.call('PEXPIRE', KEYS[i], ttl)
  reply[#reply + 1] = tonumber(token)
end
return reply
