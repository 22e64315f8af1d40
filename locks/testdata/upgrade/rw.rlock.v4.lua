-- name: rw.rlock
-- version: 4
-- description: Take a read hold of a read-write lock, unless a writer holds it or (with writer preference) waits for it.
-- keys: lock
-- args: record ttl_ms given_up spec
-- returns: the fencing token (an integer) when the read hold is taken; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The lock is one hash (docs/layout.md). Field h is the hold marker:
--   readers: rwmutex \t until_ms \t r \t n  (n: reader records counted)
--   writer:  rwmutex \t until_ms \t h|x \t count \t client \t attempt \t owner \t meta
-- and each reader has its own record, field r:<owner>:
--   expiry_ms \t h|x \t count \t client \t attempt \t meta
-- (count: the owner's reentrant read holds). n is never lower than the
-- number of live reader records (a script that writes a record counts it;
-- a lapsed one may stay counted until a scan drops it), so the reader that
-- takes n to 0 knows that no reader is left. A writer's own owner may read
-- while it writes (that record is not counted: there is no n then), which
-- is how a writer downgrades. Waiting writers are fields W:<owner> =
-- deadline_ms \t client; whoever waits keeps q (until_ms) at or after its
-- deadline and says in P: how it is told (PUBLISH, or SPUBLISH on a
-- cluster with sharded pub/sub), so that a release that finds no live q
-- does no more than its HMGET and HDEL or HSET. g:<attempt> (until_ms) is
-- an attempt given up by rw.leave: it takes nothing.
--
-- record is the owner's record field (r:<owner>) and given_up the
-- attempt's (g:<attempt>), both named by the caller. spec is four flag
-- characters, each '-' when off, then the new record's tail (client \t
-- attempt \t meta): 'w' writer preference (a live waiting writer holds new
-- readers back); 'q' the caller waits for "released" when refused (it then
-- keeps q); 'r' a reentrant owner (its record may exist, while another
-- owner is one call, whose record cannot); 's' the caller's client listens
-- with SSUBSCRIBE.
--
-- The fast path (no live h, no q) costs one HMGET, TIME, one HSET and one
-- PEXPIRE, with two numbers formatted; numbers go to redis.call as strings
-- (the ttl as it arrived). A live q with writer preference adds a scan
-- proportional to the fields the hash holds (holders, waiters, given-up
-- attempts).

local lock = KEYS[1]
local mine, given_up, spec = ARGV[1], ARGV[3], ARGV[4]
local ttl = tonumber(ARGV[2])
if not ttl or ttl < 10 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer from 10 to 604800000')
end
local reentrant, sharded = string.byte(spec, 3, 4)
if not sharded then
  return redis.error_reply('ERR spec must start with four flag characters')
end

local v
if reentrant == 114 then -- 'r'
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
-- The token: the server's time in microseconds, or the last token + 1
-- when that is larger (granted within the same microsecond, or the clock
-- stepped back). Its decimal string is TIME's seconds and microseconds
-- (zero-padded to six digits) side by side, which costs less than
-- formatting the number; decimal strings of equal length compare as their
-- numbers.
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
  -- The fast path: no hold, no one waits, no record of this owner. The
  -- hash lives at least ttl_ms more: PEXPIRE GT only moves its expiry
  -- forward; a hash with a token (f) has one (every script that writes
  -- the hash gives it one), a hash without may have been just created.
  local expiry = string.format('%d', now + ttl)
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. expiry .. '\tr\t1', 'f', fence,
    mine, expiry .. '\th\t1\t' .. string.sub(spec, 5))
  if redis.call('PEXPIRE', lock, ARGV[2], 'GT') == 0 and not last and redis.call('PTTL', lock) == -1 then
    redis.call('PEXPIRE', lock, ARGV[2])
  end
  return token
end

local owner = string.sub(mine, 3)
local prefer_writers, waits = string.byte(spec, 1, 2)
local q = tonumber(v[3]) or 0

-- keep makes the hash live at least ms more.
local function keep(ms)
  if redis.call('PEXPIRE', lock, ms, 'GT') == 0 and redis.call('PTTL', lock) == -1 then
    redis.call('PEXPIRE', lock, ms)
  end
end

-- owns says whether the write hold whose h ends in tail (client \t attempt
-- \t owner \t meta) is owner's: its owner field is owner (a reentrant
-- owner's calls are one holder), or owner is one call's identity (token \t
-- attempt id, for calls that share a token) and the hold is that call's.
local function owns(tail)
  local took, holder = string.match(tail, '^[^\t]*\t([^\t]*)\t([^\t]*)')
  return holder ~= nil and (holder == owner or holder .. '\t' .. took == owner)
end

-- wait refuses the attempt with a hint; a caller that waits for "released"
-- keeps q until its next look, and says how it is told.
local function wait(hint)
  hint = math.max(1, hint)
  if waits == 113 and now + hint > q then -- 'q'
    local publish = 'PUBLISH'
    if sharded == 115 then -- 's'
      publish = 'SPUBLISH'
    end
    redis.call('HSET', lock, 'q', string.format('%d', now + hint), 'P:', publish)
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
if count == 0 and q > now and (not h or state == 'r') and prefer_writers == 119 then -- 'w'
  -- Writer preference: a live waiting writer holds new readers back.
  local oldest = scan()
  if oldest then
    return wait(oldest - now)
  end
end

local expiry = now + ttl
local record
if count > 0 then
  record = string.format('%d', expiry) .. '\th\t' .. string.format('%d', count + 1) .. '\t' .. first
else
  record = string.format('%d', expiry) .. '\th\t1\t' .. string.sub(spec, 5)
  n = n + 1
end
if h and state ~= 'r' then
  -- The writer's own read hold: h lasts as long as the longest hold.
  if expiry > upto then
    redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', expiry) .. '\t' .. state .. '\t' .. rest,
      'f', fence, mine, record)
  else
    redis.call('HSET', lock, 'f', fence, mine, record)
  end
else
  local readers = 'rwmutex\t' .. string.format('%d', math.max(upto, expiry)) .. '\tr\t' .. string.format('%d', n)
  redis.call('HSET', lock, 'h', readers, 'f', fence, mine, record)
end
if expiry > upto then
  keep(ARGV[2])
end
return token
