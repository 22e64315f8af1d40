-- name: sem.take
-- version: 5
-- description: Take count permits of a semaphore when they are free and no one is queued, in one key; otherwise leave the call to sem.acquire.
-- keys: lock index
-- args: owner counts holder
-- returns: fence_token (an integer) when the caller holds the permits; 0 when it does not and sem.acquire must decide (queue, claim, recount); {0, 0, 0} when the caller gave up on this attempt; {-1, kind} when another kind of lock holds the name
--
-- The first attempt of every Acquire call: the uncontended case with the
-- fewest keys and arguments (the queue's key and the waiter's TTL are
-- sem.acquire@10's). counts is "<count> <ttl_ms> <default_limit>": one
-- argument, since each argument costs the server more than the match that
-- splits it. Layout and the fast paths are sem.acquire@10's: with no
-- waiter (q) and no record of this call, the permits are taken when they
-- fit (with other holders, when the index finds every record: h's
-- fresh_until_ms is 9999999999999). The lone holder stays out of the
-- index (u names it); the holder that joins it moves it in, files its
-- own record and sweeps at most 8 records whose time passed, as
-- sem.acquire@10 does. In every other case the script writes nothing
-- and replies 0.
--
-- Cost: one HMGET, TIME, at most one HSET, a PTTL and, about once per TTL,
-- a PEXPIRE, whatever count is (on the fast path, one pattern match of
-- counts, one number formatted, the time's digits reused as the floor); with other holders, the same plus a parse
-- of h, a ZADD and a sweep (a ZRANGE, and for at most 8 records an HMGET,
-- HDEL and ZREM; the lone record's move, an HGET and a ZADD).

local lock, index = KEYS[1], KEYS[2]
-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #lock > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #lock ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end
local owner, holder = ARGV[1], ARGV[3]
local count, ttl, default_limit = string.match(ARGV[2], '^(%d+) (%d+) (%d+)$')
if not count then
  return redis.error_reply('ERR counts must be "<count> <ttl_ms> <default_limit>", three whole numbers')
end
-- At most 2^53, so every count and sum stays an exact integer: compared
-- as decimal digits, since tonumber rounds 2^53 + 1 down to 2^53.
local most = '9007199254740992'
if (#count >= 16 and (#count > 16 or count > most))
  or (#default_limit >= 16 and (#default_limit > 16 or default_limit > most)) then
  return redis.error_reply('ERR count and default_limit must be integers in 1..9007199254740992')
end
-- Digits only (matched above): arithmetic converts them without a call.
count, ttl = count + 0, ttl + 0
if count < 1 then
  return redis.error_reply('ERR count must be an integer in 1..9007199254740992')
end
if ttl < 1 or ttl > 604800000 then
  return redis.error_reply('ERR ttl_ms must be an integer in 1..604800000')
end

local mine = 'p:' .. owner
local got = redis.call('HMGET', lock, 'h', 'f', 'q', 'l', mine, 'g:' .. owner, 'u')
local h, rec, stored = got[1], got[5], got[4]
local time = redis.call('TIME')
-- TIME's seconds and zero-padded microseconds side by side are the time's
-- decimal digits in microseconds: converted once, they are the number.
local micros = time[2]
if #micros < 6 then
  micros = string.rep('0', 6 - #micros) .. micros
end
local time_s = time[1] .. micros
local now_us = time_s + 0
local now = (now_us - now_us % 1000) / 1000
if got[6] and tonumber(got[6]) > now then
  return {0, 0, 0} -- the caller gave up on this attempt and undid it
end
local limit = stored and tonumber(stored)
if not limit then
  limit = default_limit + 0
  if limit < 1 then
    return redis.error_reply('ERR default_limit must be an integer in 1..9007199254740992')
  end
end

if not h and not got[3] and not rec and count <= limit then
  -- The fast path: no holder, no waiter. The token is the server's time
  -- unless the last one is as large (compared as decimal strings).
  local token, token_s, last_s = now_us, time_s, got[2]
  if last_s and (#last_s > #token_s or (#last_s == #token_s and last_s >= token_s)) then
    token = tonumber(last_s) + 1
    token_s = string.format('%d', token)
  end
  local e, c = string.format('%d', now + ttl), '1'
  if count ~= 1 then
    c = string.format('%d', count)
  end
  redis.call('HSET', lock, 'h', 'semaphore\t' .. e .. '\tp\t9999999999999\t' .. c, 'f', token_s,
    mine, e .. '\th\t' .. c .. '\t' .. holder, 'u', owner .. '\t' .. time[1] .. string.sub(micros, 1, 3))
  if not stored and redis.call('PTTL', lock) < ttl then
    redis.call('PEXPIRE', lock, ttl + ttl) -- a stored limit keeps the hash for good
  end
  return token
end

local indexed = 9999999999999 -- fresh_until_ms while the index finds every record
local hold_until, used, fresh, floor, lone = 0, 0, indexed, now, nil
if h then
  local kind, other_until, rest = string.match(h, '^([^\t]*)\t(%d+)(.*)$')
  if kind ~= 'semaphore' then
    if not other_until or tonumber(other_until) > now then
      return {-1, kind or h}
    end
  elseif tonumber(other_until) > now then
    local e, u = string.match(rest, '^\tp\t(%d+)\t(%d+)$')
    hold_until, fresh, used = tonumber(other_until), tonumber(e) or 0, tonumber(u) or 0
    local lo, fl = string.match(got[7] or '', '^([^\t]*)\t(%d+)$')
    floor = tonumber(fl) or 0
    if lo and lo ~= '' then
      lone = lo
    end
  end
end
local queued = got[3] and tonumber(got[3]) > now
local last = tonumber(got[2]) or 0

if rec or queued or fresh ~= indexed or count > limit - used then
  return 0
end

-- Other holders (or a hold that ended), no waiter: take the permits.
local token = math.max(now_us, last + 1)
local expiry = now + ttl
local index_until = 0
local function file(member, e)
  redis.call('ZADD', index, e, member)
  index_until = math.max(index_until, e)
end
if hold_until == 0 then
  lone = owner -- the count starts again: this record is the lone one
else
  if lone then
    local e = tonumber(string.match(redis.call('HGET', lock, 'p:' .. lone) or '', '^(%d+)\t'))
    if e then
      file('p:' .. lone, e)
    end
    lone = nil
  end
  file(mine, expiry)
  -- A sweep: at most 8 records whose time passed.
  local due = redis.call('ZRANGE', index, '-inf', now, 'BYSCORE', 'LIMIT', 0, 8)
  if #due > 0 then
    local recs = redis.call('HMGET', lock, unpack(due))
    local gone = {}
    for i, member in ipairs(due) do
      local e, n = string.match(recs[i] or '', '^(%d+)\t%a\t(%d+)\t')
      e = tonumber(e)
      if e and e > now then
        file(member, e)
      else
        if e and e > floor then
          used = math.max(0, used - tonumber(n))
        end
        gone[#gone + 1] = member
      end
    end
    if #gone > 0 then
      redis.call('HDEL', lock, unpack(gone))
      redis.call('ZREM', index, unpack(gone))
    end
  end
end
hold_until = math.max(hold_until, expiry)
redis.call('HSET', lock,
  'h', string.format('semaphore\t%d\tp\t%d\t%d', hold_until, fresh, used + count),
  'f', string.format('%d', token), mine, string.format('%d\th\t%d\t', expiry, count) .. holder,
  'u', (lone or '') .. string.format('\t%d', floor))
if not stored and redis.call('PTTL', lock) < hold_until - now then
  redis.call('PEXPIRE', lock, hold_until - now + ttl)
end
if index_until > 0 and not stored and redis.call('PTTL', index) < hold_until - now then
  redis.call('PEXPIRE', index, hold_until - now + ttl)
end
return token
