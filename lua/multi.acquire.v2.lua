-- name: multi.acquire
-- version: 2
-- description: Take several mutexes of one cluster slot at once, all or none.
-- keys: locks...
-- args: owner ttl_ms meta
-- returns: {1, fence_token_1, fence_token_2, ...} when all were free and are taken; {0, index, pttl_ms} naming the first held lock otherwise
--
-- KEYS come in pairs, as for mutex.acquire: the lock hash, then its fencing
-- counter. Nothing is written unless every lock is free, so a caller never
-- holds part of the set. Locks in different cluster slots cannot share a
-- script; the locks package takes such groups in a fixed order instead.
--
-- Version 2: fencing tokens come from the server's clock, max(last + 1, TIME
-- in microseconds), with the last token kept only as long as a lease, so no
-- key outlives the lock and tokens do not go backwards after data loss
-- unless the server's clock does.

local owner, ttl, meta = ARGV[1], ARGV[2], ARGV[3]
if #KEYS % 2 ~= 0 then
  return redis.error_reply('ERR multi.acquire takes KEYS in pairs: lock, fence')
end

for i = 1, #KEYS, 2 do
  if redis.call('HGET', KEYS[i], 'owner') then
    return {0, (i + 1) / 2, redis.call('PTTL', KEYS[i])}
  end
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])

local reply = {1}
for i = 1, #KEYS, 2 do
  local token = math.max((tonumber(redis.call('GET', KEYS[i + 1])) or 0) + 1, now_us)
  redis.call('SET', KEYS[i + 1], string.format('%d', token), 'PX', ttl)
  redis.call('HSET', KEYS[i], 'owner', owner, 'count', 1, 'fence', string.format('%d', token), 'meta', meta)
  redis.call('HSET', KEYS[i], 'kind', 'mutex')
  redis.call('PEXPIRE', KEYS[i], ttl)
  reply[#reply + 1] = token
end
return reply
