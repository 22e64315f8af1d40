-- name: rw.lock
-- version: 6
-- description: Take the write hold of a read-write lock when no one else holds it, or queue the writer with a short waiter lease.
-- keys: lock
-- args: owner ttl_ms given_up spec
-- returns: the fencing token (an integer) when taken or re-entered; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The layout is rw.rlock@5's. The write hold is the single-holder h of
-- docs/layout.md (kind rwmutex, state h). given_up is the attempt's field
-- (g:<attempt>). spec is rw.rlock@5's four flag characters ('r' and 's'
-- count here), the waiter TTL in ms as eight digits, then the new h's tail
-- (client \t attempt \t owner token \t meta): a call that shares its token
-- with other calls (owner is token \t attempt id) is recorded under the
-- token with its attempt.
--
-- Read holds of the writer's own owner do not block it (a reader
-- upgrading alone); h then lasts as long as the longer of the owner's
-- holds. A writer that must wait, with a positive waiter TTL, records
-- W:<owner> = deadline \t client (a release wakes the oldest live one
-- alone, with "wake <owner>" on <lock>:grant:<client>), keeps q at or
-- after its deadline and says in P: how it is told; with writer
-- preference readers wait behind it. A waiter TTL of 0 is a single attempt
-- that records nothing (TryLock). The hint is at most a third of the
-- waiter TTL and at most what the blocking hold has left.
--
-- The fast path (no live h, no q) costs one HMGET, TIME, one HSET and one
-- PEXPIRE, with two numbers formatted; readers of other owners, or lapsed
-- ones still counted, add a scan proportional to the fields the hash
-- holds.

local lock = KEYS[1]
-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #lock > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #lock ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end
local owner, given_up, spec = ARGV[1], ARGV[3], ARGV[4]
local ttl = tonumber(ARGV[2])
if not ttl or ttl < 10 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer from 10 to 604800000')
end
local reentrant, sharded = string.byte(spec, 3, 4)
if not sharded then
  return redis.error_reply('ERR spec must start with four flag characters')
end
local mine = 'r:' .. owner

local v
if reentrant == 114 then -- 'r': the owner may hold reads too
  v = redis.call('HMGET', lock, 'h', 'f', 'q', given_up, mine)
else
  v = redis.call('HMGET', lock, 'h', 'f', 'q', given_up)
end
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = (now_us - now_us % 1000) / 1000
if v[4] and tonumber(v[4]) > now then
  return {0, 0} -- the caller gave up on this attempt and undid it
end
-- The token, as in rw.rlock@5.
local micros = time[2]
if #micros < 6 then
  micros = string.rep('0', 6 - #micros) .. micros
end
local token, fence = now_us, time[1] .. micros
local last = v[2]
if last and (#last ~= #fence or last >= fence) then
  token = math.max(now_us, tonumber(last) + 1)
  fence = string.format('%d', token)
end

if not v[1] and not v[3] and not v[5] then
  -- The fast path: no hold, no one waits, no read hold of this owner. The
  -- hash's expiry as in rw.rlock@5.
  local expiry = string.format('%d', now + ttl)
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. expiry .. '\th\t1\t' .. string.sub(spec, 13), 'f', fence)
  if redis.call('PEXPIRE', lock, ARGV[2], 'GT') == 0 and not last and redis.call('PTTL', lock) == -1 then
    redis.call('PEXPIRE', lock, ARGV[2])
  end
  return token
end

local waiter_ttl = tonumber(string.sub(spec, 5, 12))
if not waiter_ttl or (waiter_ttl ~= 0 and (waiter_ttl < 10 or waiter_ttl > 86400000)) or waiter_ttl % 1 ~= 0 then
  return redis.error_reply('ERR waiter_ttl_ms must be 0 or an integer from 10 to 86400000 (spec, characters 5 to 12)')
end
local q = tonumber(v[3]) or 0
local client = string.match(spec, '^............([^\t]*)')

-- owns says whether the write hold whose h ends in tail (client \t attempt
-- \t owner \t meta) is owner's: its owner field is owner (a reentrant
-- owner's calls are one holder), or owner is one call's identity (token \t
-- attempt id, for calls that share a token) and the hold is that call's.
local function owns(tail)
  local took, holder = string.match(tail, '^[^\t]*\t([^\t]*)\t([^\t]*)')
  return holder ~= nil and (holder == owner or holder .. '\t' .. took == owner)
end

local function keep(ms)
  if redis.call('PEXPIRE', lock, ms, 'GT') == 0 and redis.call('PTTL', lock) == -1 then
    redis.call('PEXPIRE', lock, ms)
  end
end

-- scan drops the lapsed reader records, waiting writers and given-up
-- attempts, and returns how many live readers other than owner remain and
-- when the first of them runs out. Its cost is proportional to the fields
-- the hash holds.
local function scan()
  local all = redis.call('HGETALL', lock)
  local lapsed, readers, soonest = {}, 0, nil
  for i = 1, #all, 2 do
    local field = all[i]
    local kind_of = string.sub(field, 1, 2)
    if kind_of == 'r:' or kind_of == 'W:' or kind_of == 'g:' then
      local at = tonumber(string.match(all[i + 1], '^%d+'))
      if not at or at <= now then
        lapsed[#lapsed + 1] = field
        if #lapsed == 1000 then
          redis.call('HDEL', lock, unpack(lapsed))
          lapsed = {}
        end
      elseif kind_of == 'r:' and field ~= mine then
        readers = readers + 1
        soonest = math.min(soonest or at, at)
      end
    end
  end
  if #lapsed > 0 then
    redis.call('HDEL', lock, unpack(lapsed))
  end
  return readers, soonest
end

-- The owner's own live read hold, if any.
local own = 0
if v[5] then
  local e = tonumber(string.match(v[5], '^%d+'))
  if e and e > now then
    own = e
  end
end

local h = v[1]
local count, first, blocked = 0, nil, nil
if h then
  local kind, upto, state, rest = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  upto = tonumber(upto) or 0
  if upto <= now then
    if kind == 'rwmutex' and state == 'r' then
      scan() -- readers lapsed: their records go
    end
  elseif kind ~= 'rwmutex' then
    return {-1, kind}
  elseif state == 'r' then
    local mine_counted = 0
    if own > 0 then
      mine_counted = 1
    end
    if (tonumber(rest) or 0) > mine_counted then
      local readers, soonest = scan()
      if readers > 0 then
        blocked = soonest
        if readers + mine_counted ~= tonumber(rest) then
          local n = string.format('%d', readers + mine_counted)
          redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', upto) .. '\tr\t' .. n)
        end
      end
    end
  else
    local c, tail = string.match(rest, '^(%d+)\t(.*)$')
    if state == 'h' and tail and owns(tail) then
      count, first = tonumber(c), tail -- a re-entry
    else
      blocked = upto
    end
  end
end

if blocked then
  local hint = blocked - now
  if waiter_ttl > 0 then
    local deadline = now + waiter_ttl
    local publish = 'PUBLISH'
    if sharded == 115 then -- 's'
      publish = 'SPUBLISH'
    end
    if deadline > q then
      redis.call('HSET', lock, 'W:' .. owner, string.format('%d', deadline) .. '\t' .. client,
        'q', string.format('%d', deadline), 'P:', publish)
    else
      redis.call('HSET', lock, 'W:' .. owner, string.format('%d', deadline) .. '\t' .. client, 'P:', publish)
    end
    keep(waiter_ttl)
    hint = math.min(hint, math.floor(waiter_ttl / 3))
  end
  return {0, math.max(1, hint)}
end

local upto = string.format('%d', math.max(now + ttl, own))
if count > 0 then
  local held = 'rwmutex\t' .. upto .. '\th\t' .. string.format('%d', count + 1) .. '\t' .. first
  redis.call('HSET', lock, 'h', held, 'f', fence)
else
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\th\t1\t' .. string.sub(spec, 13), 'f', fence)
end
if q > now then
  redis.call('HDEL', lock, 'W:' .. owner) -- it may have waited
end
keep(ARGV[2])
return token
