-- name: rw.lock
-- version: 7
-- description: Take the write hold of a read-write lock when no one else holds it, or queue the writer with a short waiter lease.
-- keys: lock index
-- args: owner ttl_ms given_up spec
-- returns: the fencing token (an integer) when taken or re-entered; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The layout is rw.rlock@6's. The write hold is the single-holder h of
-- docs/layout.md (kind rwmutex, state h). given_up is the attempt's field
-- (g:<attempt>). spec is rw.rlock@6's four flag characters ('r' and 's'
-- count here), the waiter TTL in ms as eight digits, then the new h's tail
-- (client \t attempt \t owner token \t meta): a call that shares its token
-- with other calls (owner is token \t attempt id) is recorded under the
-- token with its attempt.
--
-- Read holds of the writer's own owner do not block it (a reader
-- upgrading alone); h then lasts as long as the longer of the owner's
-- holds. Other readers block it while they live: the live reader members
-- of the index (ZCOUNT), the lone reader u while its record lives, and
-- readers of rw.rlock@4 (h's n beyond what the index and u account for)
-- while h lives. A writer that must wait, with a positive waiter TTL,
-- records W:<owner> = deadline \t client and the index member W:<owner>
-- (score 10^13 + deadline): a release wakes the oldest live one alone,
-- with "wake <owner>" on <lock>:grant:<client>; it keeps q at or after
-- its deadline and says in P: how it is told; with writer preference
-- readers wait behind it. A waiter TTL of 0 is a single attempt that
-- records nothing (TryLock). The hint is at most a third of the waiter
-- TTL and at most what the blocking hold has left.
--
-- Cost: the fast path (no live h, no q) is one HMGET, TIME, one HSET and
-- one PEXPIRE of the lock hash alone, with two numbers formatted. Past
-- readers it adds a sweep of at most 8 due reader members and a few
-- index commands, each logarithmic in the index; a writer that waits
-- behind a writer adds one ZADD.

local lock, index = KEYS[1], KEYS[2]
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
-- The token, as in rw.rlock@6.
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
  -- hash's expiry as in rw.rlock@6.
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
-- The index's bands, as in rw.rlock@6.
local BAND = 10000000000000
local BAND_END = '(' .. string.format('%d', BAND)

-- owns says whether the write hold whose h ends in tail (client \t attempt
-- \t owner \t meta) is owner's: its owner field is owner (a reentrant
-- owner's calls are one holder), or owner is one call's identity (token \t
-- attempt id, for calls that share a token) and the hold is that call's.
local function owns(tail)
  local took, holder = string.match(tail, '^[^\t]*\t([^\t]*)\t([^\t]*)')
  return holder ~= nil and (holder == owner or holder .. '\t' .. took == owner)
end

local function keep(key, ms)
  if redis.call('PEXPIRE', key, ms, 'GT') == 0 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ms)
  end
end

-- sweep drops at most 8 entries of one band of the index whose time
-- passed (0 readers, 1 waiting writers, 2 given-up attempts), with their
-- records (an entry whose record's time moved on is filed again under
-- it), and returns how many went. Band 0 comes first in the index, so its
-- due entries are its first ranks.
local function sweep(band)
  local lo = band * BAND
  local due = redis.call('ZRANGE', index, lo, string.format('%d', lo + now), 'BYSCORE', 'LIMIT', 0, 8)
  if #due == 0 then
    return 0
  end
  local values = redis.call('HMGET', lock, unpack(due))
  local drop, refile = {}, {}
  for i = 1, #due do
    local at = values[i] and tonumber(string.match(values[i], '^%d+'))
    if at and at > now then
      refile[#refile + 1] = string.format('%d', lo + at)
      refile[#refile + 1] = due[i]
    elseif values[i] then
      drop[#drop + 1] = due[i]
    end
  end
  if band == 0 then
    redis.call('ZREMRANGEBYRANK', index, 0, #due - 1)
  else
    redis.call('ZREM', index, unpack(due))
  end
  if #refile > 0 then
    redis.call('ZADD', index, unpack(refile))
  end
  if #drop > 0 then
    redis.call('HDEL', lock, unpack(drop))
  end
  return #due - #refile / 2
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
local u = redis.call('HGET', lock, 'u')
local count, first, blocked = 0, nil, nil
local u_gone = true -- u names another owner's reader whose time passed
if h then
  local kind, upto, state, rest = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  upto = tonumber(upto) or 0
  if upto <= now then
    sweep(0) -- every hold under h ended
  elseif kind ~= 'rwmutex' then
    return {-1, kind}
  elseif state == 'r' then
    local n = tonumber(rest) or 0
    local gone = sweep(0)
    if not u then
      n = math.max(0, n - gone)
    end
    -- The live readers other than owner: the index's, u's, and what n
    -- counts beyond both (rw.rlock@4's readers, live while h is).
    local live = redis.call('ZCOUNT', index, '(' .. string.format('%d', now), BAND_END)
    local mine_counted = 0
    if own > 0 and u ~= owner then
      if redis.call('ZSCORE', index, mine) then
        live = live - 1
      end
      mine_counted = 1
    end
    if u and u ~= owner then
      local ue = tonumber(string.match(redis.call('HGET', lock, 'r:' .. u) or '', '^%d+'))
      if ue and ue > now then
        live = live + 1
        u_gone = false
      end
    end
    -- What n counts beyond the index's members and u (or the owner's own
    -- record) are rw.rlock@4's readers; the index's members are counted
    -- only when n is more than the live ones.
    local accounted = n
    if u then
      accounted = 1 + mine_counted
    elseif n > live + mine_counted then
      accounted = redis.call('ZCOUNT', index, '-inf', BAND_END)
      if mine_counted == 1 and not redis.call('ZSCORE', index, mine) then
        accounted = accounted + 1 -- its own rw.rlock@4 record
      end
    end
    if n > accounted then
      live = live + n - accounted
    end
    local soonest = upto
    if live > 0 then
      blocked = soonest
      if n ~= tonumber(rest) then
        redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', upto) .. '\tr\t' .. string.format('%d', n))
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
    local deadline = string.format('%d', now + waiter_ttl)
    local publish = 'PUBLISH'
    if sharded == 115 then -- 's'
      publish = 'SPUBLISH'
    end
    if now + waiter_ttl > q then
      redis.call('HSET', lock, 'W:' .. owner, deadline .. '\t' .. client, 'q', deadline, 'P:', publish)
    else
      redis.call('HSET', lock, 'W:' .. owner, deadline .. '\t' .. client, 'P:', publish)
    end
    redis.call('ZADD', index, string.format('%d', BAND + now + waiter_ttl), 'W:' .. owner)
    keep(lock, waiter_ttl)
    keep(index, waiter_ttl)
    hint = math.min(hint, math.floor(waiter_ttl / 3))
  end
  return {0, math.max(1, hint)}
end

-- Taken. A lone reader of another owner whose time passed goes with u.
if u and u ~= owner and u_gone then
  redis.call('HDEL', lock, 'u', 'r:' .. u)
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
  redis.call('ZREM', index, 'W:' .. owner)
end
keep(lock, ARGV[2])
return token
