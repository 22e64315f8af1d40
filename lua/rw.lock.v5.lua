-- name: rw.lock
-- version: 5
-- description: Take the write hold of a read-write lock when no one else holds it, or queue the writer with a short waiter lease.
-- keys: lock
-- args: owner ttl_ms attempt meta client waiter_ttl_ms
-- returns: the fencing token (an integer) when taken or re-entered; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The layout is rw.rlock@4's. The write hold is the single-holder h of
-- LAYOUT.md (kind rwmutex, state h). Read holds of the writer's own owner
-- do not block it (a reader upgrading alone); h then lasts as long as the
-- longer of the owner's holds. A writer that must wait, with a positive
-- waiter_ttl_ms, records W:<owner> = deadline \t client (a release wakes
-- the oldest live one alone, with "wake <owner>" on <lock>:grant:<client>)
-- and keeps q at or after its deadline; with writer preference readers
-- wait behind it. waiter_ttl_ms 0 is a single attempt that records
-- nothing (TryLock). The hint is at most a third of the waiter TTL and at
-- most what the blocking hold has left.
--
-- The fast path (h absent, lapsed, or held by readers that are all this
-- owner's) costs one HMGET, TIME, one HSET and one PEXPIRE; readers of
-- other owners, or lapsed ones still counted, add a scan proportional to
-- the fields the hash holds.

local lock = KEYS[1]
local owner, ttl, attempt, meta = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local client, waiter_ttl = ARGV[5], tonumber(ARGV[6])
if not ttl or ttl < 10 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer from 10 to 604800000')
end
if not waiter_ttl or (waiter_ttl ~= 0 and (waiter_ttl < 10 or waiter_ttl > 86400000)) or waiter_ttl % 1 ~= 0 then
  return redis.error_reply('ERR waiter_ttl_ms must be 0 or an integer from 10 to 86400000')
end
local mine = 'r:' .. owner

-- owns says whether the write hold whose h ends in tail (client \t attempt
-- \t owner \t meta) is owner's: its owner field is owner (a reentrant
-- owner's calls are one holder), or owner is one call's identity (token \t
-- attempt id, for calls that share a token) and the hold is that call's.
local function owns(tail)
  local took, holder = string.match(tail, '^[^\t]*\t([^\t]*)\t([^\t]*)')
  return holder ~= nil and (holder == owner or holder .. '\t' .. took == owner)
end

local v = redis.call('HMGET', lock, 'h', 'f', 'q', 'g:' .. attempt, mine)
local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)
if v[4] and tonumber(v[4]) > now then
  return {0, 0} -- the caller gave up on this attempt and undid it
end
local q = tonumber(v[3]) or 0

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
          redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. (readers + mine_counted))
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
    if deadline > q then
      redis.call('HSET', lock, 'W:' .. owner, deadline .. '\t' .. client, 'q', deadline)
    else
      redis.call('HSET', lock, 'W:' .. owner, deadline .. '\t' .. client)
    end
    keep(waiter_ttl)
    hint = math.min(hint, math.floor(waiter_ttl / 3))
  end
  return {0, math.max(1, hint)}
end

local token = string.format('%d', math.max(now_us, (tonumber(v[2]) or 0) + 1))
local upto = math.max(now + ttl, own)
if count > 0 then
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\th\t' .. (count + 1) .. '\t' .. first, 'f', token)
else
  -- The owner field is the token: a call's identity without its attempt id.
  local token_of = string.match(owner, '^[^\t]*')
  redis.call('HSET', lock,
    'h', 'rwmutex\t' .. upto .. '\th\t1\t' .. client .. '\t' .. attempt .. '\t' .. token_of .. '\t' .. meta, 'f', token)
end
if q > now then
  redis.call('HDEL', lock, 'W:' .. owner) -- it may have waited
end
keep(ttl)
return tonumber(token)
