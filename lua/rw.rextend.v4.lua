-- name: rw.rextend
-- version: 4
-- description: Reset a read or write hold of a read-write lock to a new length, when its owner still holds it.
-- keys: lock index
-- args: owner ttl_ms hold
-- returns: 1 when extended, 0 when another owner holds the write hold, -1 when the owner holds no live hold of that kind, -2 when the hold was revoked (forced unlock)
--
-- The layout is rw.rlock@6's (docs/layout.md). hold is r (the owner's
-- read record r:<owner>) or w (the write hold, h). The hold's expiry
-- becomes now + ttl_ms, and so does the score of the record's index
-- member when it has one (not the lone reader u, nor a record of
-- rw.rlock@4); h's until_ms never falls below a live hold of the name (so
-- a reader's extend may move it forward, and a writer's keeps it at its
-- own read hold's expiry). A revoked hold (state x) is not extended: its
-- holder learns that it lost the lock. Cost: one HMGET, TIME, one HSET,
-- for a reader in the index one ZADD (logarithmic in the index), and at
-- most two PEXPIREs.

local lock, index = KEYS[1], KEYS[2]
local owner, ttl, hold = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if not ttl or ttl < 10 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer from 10 to 604800000')
end
if hold ~= 'r' and hold ~= 'w' then
  return redis.error_reply('ERR hold must be r or w')
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

local v = redis.call('HMGET', lock, 'h', mine, 'u')
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expiry = now + ttl

local function keep(key, ms)
  if redis.call('PEXPIRE', key, ms, 'GT') == 0 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ms)
  end
end

local kind, upto, state, rest
if v[1] then
  kind, upto, state, rest = string.match(v[1], '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  upto = tonumber(upto)
  if not upto or upto <= now or kind ~= 'rwmutex' then
    kind = nil -- no live hold of this lock kind
  end
end

if hold == 'r' then
  local e, s, tail = nil, nil, nil
  if v[2] then
    e, s, tail = string.match(v[2], '^(%d+)\t(%a)\t(.*)$')
  end
  if not e or tonumber(e) <= now or not kind then
    return -1
  end
  if s == 'x' then
    return -2
  end
  if v[3] ~= owner and redis.call('ZADD', index, 'XX', 'CH', string.format('%d', expiry), mine) == 1 then
    keep(index, ttl)
  end
  if expiry > upto then
    redis.call('HSET', lock, mine, expiry .. '\t' .. s .. '\t' .. tail,
      'h', 'rwmutex\t' .. expiry .. '\t' .. state .. '\t' .. rest)
    keep(lock, ttl)
  else
    redis.call('HSET', lock, mine, expiry .. '\t' .. s .. '\t' .. tail)
  end
  return 1
end

if not kind or state == 'r' then
  return -1
end
if state == 'g' or not owns(string.match(rest, '^[^\t]*\t(.*)$') or '') then
  return 0
end
if state == 'x' then
  return -2
end
local own = v[2] and tonumber(string.match(v[2], '^%d+'))
if own and own > expiry then
  expiry = own -- the owner's read hold outlasts the new write lease
end
redis.call('HSET', lock, 'h', 'rwmutex\t' .. expiry .. '\th\t' .. rest)
keep(lock, ttl)
return 1
