-- name: rw.rlock
-- version: 4
-- description: Take a read hold of a read-write lock, unless a writer holds it or (with writer preference) waits for it.
-- keys: lock
-- args: owner ttl_ms attempt flags meta client
-- returns: the fencing token (an integer) when the read hold is taken; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The lock is one hash (LAYOUT.md). Field h is the hold marker:
--   readers: rwmutex \t until_ms \t r \t n  (n: reader records counted)
--   writer:  rwmutex \t until_ms \t h|x \t count \t client \t attempt \t owner \t meta
-- and each reader has its own record, field r:<owner>:
--   expiry_ms \t h|x \t count \t client \t attempt \t meta
-- (count: the owner's reentrant read holds). n is never lower than the
-- live reader records (a record written by a script is counted; a lapsed
-- one may stay counted until a scan drops it), so the reader that takes n
-- to 0 knows that no reader is left. A writer's own owner may read while
-- it writes (its record is not counted in n: there is no n then), which is
-- how a writer downgrades. Waiting writers are fields W:<owner> =
-- deadline_ms \t client; whoever waits keeps q (until_ms) at or after its
-- deadline, so a release that finds no live q does no more than its HMGET
-- and HDEL or HSET. g:<attempt> (until_ms) is an attempt given up by
-- rw.leave: it takes nothing.
--
-- flags: 'w' for writer preference (a live waiting writer holds new readers
-- back), 'q' when the caller waits for "released" if refused (it then sets
-- q). The fast path costs one HMGET, TIME, one HSET and at most one
-- PEXPIRE; a live q with writer preference adds a scan proportional to the
-- fields the hash holds (holders, waiters, given-up attempts).

local lock = KEYS[1]
local owner, ttl, attempt, flags = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
if not ttl or ttl < 10 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer from 10 to 604800000')
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

-- keep makes the hash live at least ms more (PEXPIRE only moves forward;
-- a hash without an expiry, just created, gets one).
local function keep(ms)
  if redis.call('PEXPIRE', lock, ms, 'GT') == 0 and redis.call('PTTL', lock) == -1 then
    redis.call('PEXPIRE', lock, ms)
  end
end

-- wait refuses the attempt with a hint; a caller that waits for "released"
-- keeps q until its next look.
local function wait(hint)
  hint = math.max(1, hint)
  if string.find(flags, 'q', 1, true) and now + hint > q then
    redis.call('HSET', lock, 'q', now + hint)
    keep(hint)
  end
  return {0, hint}
end

-- scan drops the lapsed reader records, waiting writers and given-up
-- attempts, and returns the deadline of the oldest live waiting writer.
-- Its cost is proportional to the fields the hash holds.
local function scan()
  local all = redis.call('HGETALL', lock)
  local lapsed, oldest = {}, nil
  for i = 1, #all, 2 do
    local kind_of = string.sub(all[i], 1, 2)
    if kind_of == 'r:' or kind_of == 'W:' or kind_of == 'g:' then
      local at = tonumber(string.match(all[i + 1], '^%d+'))
      if not at or at <= now then
        lapsed[#lapsed + 1] = all[i]
        if #lapsed == 1000 then
          redis.call('HDEL', lock, unpack(lapsed))
          lapsed = {}
        end
      elseif kind_of == 'W:' and (not oldest or at < oldest) then
        oldest = at
      end
    end
  end
  if #lapsed > 0 then
    redis.call('HDEL', lock, unpack(lapsed))
  end
  return oldest
end

local h, kind, upto, state, rest = v[1], nil, 0, nil, nil
if h then
  kind, upto, state, rest = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  upto = tonumber(upto) or 0
  if upto <= now then
    -- Every hold under h ended. Readers that lapsed leave their records:
    -- drop them, so that the count starts from the live ones (none).
    if kind == 'rwmutex' and state == 'r' then
      scan()
    end
    h, upto = nil, 0
  end
end

-- The owner's own live read hold, if any: a re-entry.
local count, first = 0, nil
if v[5] then
  local e, s, c, r = string.match(v[5], '^(%d+)\t(%a)\t(%d+)\t(.*)$')
  e = tonumber(e)
  if e and e > now then
    if s == 'x' then
      return wait(e - now) -- revoked: held until it runs out or its owner lets go
    end
    count, first = tonumber(c), r
  end
end

local n = 0
if h then
  if kind ~= 'rwmutex' then
    return {-1, kind}
  end
  if state == 'r' then
    n = tonumber(rest) or 0
  elseif not owns(string.match(rest, '^[^\t]*\t(.*)$') or '') then
    return wait(upto - now) -- a writer holds it (only its own owner may read)
  end
end
if count == 0 and q > now and (not h or state == 'r') and string.find(flags, 'w', 1, true) then
  -- Writer preference: a live waiting writer holds new readers back.
  local oldest = scan()
  if oldest then
    return wait(oldest - now)
  end
end

local expiry = now + ttl
local record
if count > 0 then
  record = expiry .. '\th\t' .. (count + 1) .. '\t' .. first
else
  record = expiry .. '\th\t1\t' .. ARGV[6] .. '\t' .. attempt .. '\t' .. ARGV[5]
  n = n + 1
end
local token = string.format('%d', math.max(now_us, (tonumber(v[2]) or 0) + 1))
if h and state ~= 'r' then
  -- The writer's own read hold: h lasts as long as the longest hold.
  if expiry > upto then
    redis.call('HSET', lock, 'h', 'rwmutex\t' .. expiry .. '\t' .. state .. '\t' .. rest, 'f', token, mine, record)
  else
    redis.call('HSET', lock, 'f', token, mine, record)
  end
else
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. math.max(upto, expiry) .. '\tr\t' .. n, 'f', token, mine, record)
end
if expiry > upto then
  keep(ttl)
end
return tonumber(token)
