-- name: fence.write
-- version: 1
-- description: Check a lock's fencing token against the highest one this Redis accepted for the name, and when it passes, raise the fence and run the caller's writes, in one call.
-- keys: keys...
-- args: token owner max_ahead_us commands...
-- returns: {1, reply_1, ..., reply_n} when the token passed and the n commands ran; {0, highest_token, highest_owner} when it is stale (nothing written); {-1, server_time_us} when it is more than max_ahead_us ahead of the server's clock (nothing written)
--
-- KEYS[1] is the fence, KEYS[2] on the data keys. The fence is a hash per
-- lock name: t the highest token accepted (decimal microseconds of the
-- lock server's clock), o its owner, n how many writes passed. A token
-- passes when it is above t, or equal to t from the owner o (the same
-- lease writing again). The fence has no TTL: a fence forgotten would
-- accept a stale holder again.
--
-- commands are groups "<COMMAND> <key index> <argument count> <arguments>",
-- the key index naming a data key (2 for KEYS[2], ...); each command takes
-- that key first, then its arguments. Only the write and read commands
-- below, which touch the one key they name, are run. Every key must carry
-- the fence key's hash tag, so the call runs on one cluster slot; with no
-- commands the call only raises the fence (Advance).
--
-- Cost: TIME, one HMGET, one HSET, plus the commands (at most 64),
-- each the cost of that command on its key.

local fence = KEYS[1]
local function tag(k)
  local s = string.find(k, '{', 1, true)
  if not s then return nil end
  local e = string.find(k, '}', s + 1, true)
  if not e or e == s + 1 then return nil end
  return string.sub(k, s + 1, e - 1)
end
local want = tag(fence)
if not want then
  return redis.error_reply('ERR the fence key ' .. fence ..
    ' has no hash tag: name it "{tag}..." and give every data key the same {tag}')
end
for i = 2, #KEYS do
  if tag(KEYS[i]) ~= want then
    return redis.error_reply('ERR key ' .. i .. ' (' .. KEYS[i] .. ') does not carry the fence key\'s hash tag {' ..
      want .. '}: every key of a fenced write must be in the fence\'s cluster slot')
  end
end

local token = tonumber(ARGV[1])
if not token or token < 1 or token > 9007199254740991 or token % 1 ~= 0 then
  return redis.error_reply('ERR token must be a whole number from 1 to 2^53 - 1 (a lease\'s Token)')
end
local owner = ARGV[2]
local ahead = tonumber(ARGV[3])
if not ahead or ahead < 0 or ahead % 1 ~= 0 then
  return redis.error_reply('ERR max_ahead_us must be a whole number of microseconds, 0 for no check')
end

-- Parse every command before anything is written.
local allowed = {
  SET = 1, GET = 0, GETDEL = 0, DEL = 0, UNLINK = 0, APPEND = 1, INCR = 0, INCRBY = 1, DECRBY = 1,
  EXPIRE = 1, PEXPIRE = 1, PERSIST = 0, HSET = 2, HGET = 1, HDEL = 1, HINCRBY = 2,
  LPUSH = 1, RPUSH = 1, SADD = 1, SREM = 1, ZADD = 2, ZREM = 1, XADD = 3,
}
local cmds = {}
local i = 4
while i <= #ARGV do
  if #cmds == 64 then
    return redis.error_reply('ERR at most 64 commands in one fenced write')
  end
  local name = string.upper(ARGV[i])
  local key = tonumber(ARGV[i + 1])
  local n = tonumber(ARGV[i + 2])
  if not allowed[name] then
    return redis.error_reply('ERR command ' .. (#cmds + 1) .. ' (' .. ARGV[i] ..
      ') is not one fence.write runs: use SET, GET, GETDEL, DEL, UNLINK, APPEND, INCR, INCRBY, DECRBY, ' ..
      'EXPIRE, PEXPIRE, PERSIST, HSET, HGET, HDEL, HINCRBY, LPUSH, RPUSH, SADD, SREM, ZADD, ZREM or XADD')
  end
  if not key or key < 2 or key > #KEYS or key % 1 ~= 0 then
    return redis.error_reply('ERR command ' .. (#cmds + 1) .. ' (' .. name ..
      '): key index must name a data key, 2 to ' .. #KEYS)
  end
  if not n or n < allowed[name] or n % 1 ~= 0 or i + 2 + n > #ARGV then
    return redis.error_reply('ERR command ' .. (#cmds + 1) .. ' (' .. name .. '): argument count must be at least ' ..
      allowed[name] .. ' and within the arguments given')
  end
  local c = {name, KEYS[key]}
  for j = 1, n do
    c[j + 2] = ARGV[i + 2 + j]
  end
  cmds[#cmds + 1] = c
  i = i + 3 + n
end

local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
if ahead > 0 and token > now_us + ahead then
  return {-1, now_us}
end

local cur = redis.call('HMGET', fence, 't', 'o')
local high = tonumber(cur[1]) or 0
if token < high or (token == high and cur[2] ~= owner) then
  return {0, high, cur[2] or ''}
end
redis.call('HSET', fence, 't', string.format('%d', token), 'o', owner)
redis.call('HINCRBY', fence, 'n', 1)

local out = {1}
for k = 1, #cmds do
  out[k + 1] = redis.call(unpack(cmds[k]))
end
return out
