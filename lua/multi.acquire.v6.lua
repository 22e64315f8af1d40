-- name: multi.acquire
-- version: 6
-- description: Take several mutexes of one cluster slot at once, all or none.
-- keys: locks...
-- args: owner ttl_ms attempt client meta
-- returns: {1, fence_token_1, fence_token_2, ...} when all were free and are taken; {0, index, wait_hint_ms} naming the first held lock otherwise; {-1, index, kind} when another kind of lock holds a name; {0, 0, 0} when the caller gave up on this attempt
--
-- Each lock is a lock hash in mutex.acquire's layout. Nothing is written
-- unless every lock is free (no live hold of any kind), so a caller never
-- holds part of the set. The attempt is refused when the first lock's hash
-- records it as given up (g:<attempt>, written by mutex.undo on the first
-- lock before the others). Each token is max(TIME in µs, f + 1) of its
-- lock. Waiters queued for a lock do not keep a MultiLock from taking it
-- when it is free. Locks in different cluster slots cannot share a script;
-- the locks package takes such groups in a fixed order instead.
--
-- Cost: one HMGET per lock, TIME, and one HSET and one PEXPIRE per lock.

-- A MultiLock takes at most MaxMultiLockNames (100) names of at most
-- MaxNameBytes (1024 bytes) each, keys "{name}" of 1026: the client refuses
-- more or longer, and so does the script, for callers that are not this
-- library.
if #KEYS > 100 then
  return redis.error_reply('ERR multi.acquire takes at most 100 lock keys (MaxMultiLockNames), got ' .. #KEYS)
end
for i = 1, #KEYS do
  if #KEYS[i] > 1026 then
    return redis.error_reply('ERR lock key ' .. i .. ' is ' .. #KEYS[i] ..
      ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
  end
end

local owner, attempt, client, meta = ARGV[1], ARGV[3], ARGV[4], ARGV[5]
local ttl = tonumber(ARGV[2])
if not ttl or ttl < 1 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be a whole number of milliseconds from 1 to 604800000 (MaxTTL)')
end
if #KEYS < 1 then
  return redis.error_reply('ERR multi.acquire takes one lock key per lock')
end
if string.find(owner, '\t', 1, true) or string.find(attempt, '\t', 1, true) then
  return redis.error_reply('ERR owner and attempt must not contain a tab: it separates the hold record\'s fields')
end

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

local last = {}
for i = 1, #KEYS do
  local v
  if i == 1 then
    v = redis.call('HMGET', KEYS[i], 'h', 'f', 'g:' .. attempt)
    if v[3] and tonumber(v[3]) > now then
      return {0, 0, 0}
    end
  else
    v = redis.call('HMGET', KEYS[i], 'h', 'f')
  end
  if v[1] then
    local kind, ends = string.match(v[1], '^([^\t]*)\t(%d+)')
    ends = tonumber(ends)
    if ends > now then
      if kind ~= 'mutex' then
        return {-1, i, kind}
      end
      return {0, i, ends - now}
    end
  end
  last[i] = tonumber(v[2]) or 0
end

local reply = {1}
local ends = string.format('%d', now + ttl)
local holder = client .. '\t' .. attempt .. '\t' .. owner .. '\t' .. meta
for i = 1, #KEYS do
  local token = string.format('%d', math.max(last[i] + 1, now_us))
  redis.call('HSET', KEYS[i], 'h', 'mutex\t' .. ends .. '\th\t1\t' .. holder, 'f', token)
  if redis.call('PEXPIRE', KEYS[i], ttl, 'GT') == 0 then
    redis.call('PEXPIRE', KEYS[i], ttl, 'NX')
  end
  reply[#reply + 1] = tonumber(token)
end
return reply
