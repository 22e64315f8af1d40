-- name: multi.acquire
-- version: 1
-- description: Take several mutexes of one cluster slot at once, all or none.
-- keys: locks...
-- args: owner ttl_ms meta
-- returns: {1, fence_token_1, fence_token_2, ...} when all were free and are taken; {0, index, pttl_ms} naming the first held lock otherwise
--
-- KEYS come in pairs, as for mutex.acquire: the lock hash, then its fencing
-- counter. Nothing is written unless every lock is free, so a caller never
-- holds part of the set. Locks in different cluster slots cannot share a
-- script; the locks package takes such groups in a fixed order instead.

local owner, ttl, meta = ARGV[1], ARGV[2], ARGV[3]
if #KEYS % 2 ~= 0 then
  return redis.error_reply('ERR multi.acquire takes KEYS in pairs: lock, fence')
end

for i = 1, #KEYS, 2 do
  if redis.call('HGET', KEYS[i], 'owner') then
    return {0, (i + 1) / 2, redis.call('PTTL', KEYS[i])}
  end
end

local reply = {1}
for i = 1, #KEYS, 2 do
  local token = redis.call('INCR', KEYS[i + 1])
  redis.call('HSET', KEYS[i], 'owner', owner, 'count', 1, 'fence', token, 'meta', meta)
  redis.call('PEXPIRE', KEYS[i], ttl)
  reply[#reply + 1] = token
end
return reply
