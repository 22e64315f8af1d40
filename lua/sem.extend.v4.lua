-- name: sem.extend
-- version: 4
-- description: Reset the lease of the permits an Acquire call holds to ttl_ms from now, when it still holds them.
-- keys: lock index
-- args: owner ttl_ms
-- returns: 1 when extended, -1 when the call's permits expired or are not there, -2 when they were revoked (forced unlock)
--
-- The layout is docs/layout.md's: the call's record p:<owner> in the lock
-- hash (expiry_ms \t state \t count \t client \t attempt \t meta). A live
-- record in state h, or g (handed over by a release, so this extension
-- confirms it), gets expiry now + ttl_ms and state h; h's until_ms moves
-- forward when the new expiry lies beyond it, and the hash lives at least
-- that long. The record's member in the index (sem.acquire@10's layout)
-- moves to the new expiry (ZADD XX: none for the lone record u names, or
-- for a record an older version wrote, which the next recount files). A
-- record in state x was revoked: the lease ends (-2), and the
-- record holds the permits until its own expiry or the holder's release.
--
-- Cost: one HMGET, TIME, one HSET, a ZADD XX (not for the lone record)
-- and at most two PTTLs and PEXPIREs, whatever the count.

local lock, index = KEYS[1], KEYS[2]
local owner, ttl = ARGV[1], tonumber(ARGV[2])
if not ttl or ttl < 1 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer in 1..604800000')
end
local mine = 'p:' .. owner

local got = redis.call('HMGET', lock, mine, 'h', 'l', 'u')
local rec = got[1]
if not rec then
  return -1
end
local time = redis.call('TIME')
local now = math.floor((time[1] * 1000000 + time[2]) / 1000)
local expiry, state, rest = string.match(rec, '^(%d+)\t(%a)(\t.*)$')
if not expiry or tonumber(expiry) <= now then
  return -1
end
if state == 'x' then
  return -2
end

local renewed = now + ttl
if string.match(got[4] or '', '^([^\t]*)') ~= owner then
  if redis.call('ZADD', index, 'XX', 'CH', renewed, mine) == 1 and not got[3] and redis.call('PTTL', index) < ttl then
    redis.call('PEXPIRE', index, ttl)
  end
end
local hold_until, tail = string.match(got[2] or '', '^semaphore\t(%d+)(\t.*)$')
if hold_until and tonumber(hold_until) < renewed then
  redis.call('HSET', lock, mine, string.format('%d\th', renewed) .. rest,
    'h', string.format('semaphore\t%d', renewed) .. tail)
  if not got[3] and redis.call('PTTL', lock) < ttl then
    redis.call('PEXPIRE', lock, ttl)
  end
else
  redis.call('HSET', lock, mine, string.format('%d\th', renewed) .. rest)
end
return 1
