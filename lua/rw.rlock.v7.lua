-- name: rw.rlock
-- version: 7
-- description: Take a read hold of a read-write lock, unless a writer holds it or (with writer preference) waits for it.
-- keys: lock index
-- args: record ttl_ms given_up spec
-- returns: the fencing token (an integer) when the read hold is taken; {0, wait_hint_ms} when it must wait (wait_hint_ms 0: the caller gave up on this attempt); {-1, kind} when another kind of lock holds the name
--
-- The lock is one hash, lock, and a sorted set, index (docs/layout.md).
-- Field h is the hold marker:
--   readers: rwmutex \t until_ms \t r \t n
--   writer:  rwmutex \t until_ms \t h|x \t count \t client \t attempt \t owner \t meta
-- and each reader has its own record, field r:<owner>:
--   expiry_ms \t h|x \t count \t client \t attempt \t meta
-- (count: the owner's reentrant read holds). until_ms is at or after
-- every live hold's end. A lone reader (the one that found no hold) is
-- named by field u (its owner) and is not in the index; every other
-- reader record is, as member r:<owner> with its expiry as score. While u
-- is set, n counts u's record (and readers of rw.rlock@4, which index
-- nothing); otherwise n counts the index's reader members (live or not)
-- and rw.rlock@4's readers. Whoever removes a counted record or member
-- takes it off n; the reader that takes n to 0 deletes h. A writer's own
-- owner may read while it writes (its record is not counted: there is no
-- n then), which is how a writer downgrades. Waiting writers are fields
-- W:<owner> = deadline_ms \t client, in the index as W:<owner> with score
-- 10^13 + deadline; whoever waits keeps q (until_ms) at or after its
-- deadline and says in P: how it is told (PUBLISH, or SPUBLISH on a
-- cluster with sharded pub/sub), so that a release that finds no live q
-- does no more than its HMGET and HDEL or HSET. g:<attempt> (until_ms) is
-- an attempt given up by rw.leave (in the index with score 2 * 10^13 +
-- until): it takes nothing. Calls sweep the index's entries whose time
-- passed, at most 8 a call, with their records.
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
-- Cost: the fast path (no live h, no q) is one HMGET, TIME, one HSET and
-- one PEXPIRE of the lock hash alone, with one number parsed (the ttl),
-- one formatted (the expiry) and the flags read as one substring; numbers
-- go to redis.call as strings (the ttl as it arrived). Other paths add a
-- few index commands, each logarithmic in the index, and a sweep of at
-- most 8 due reader members (with writer preference and a live q; on a
-- lapsed hold; on every fourth reader joining).

local lock, index = KEYS[1], KEYS[2]
-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #lock > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #lock ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end
local mine, given_up, spec = ARGV[1], ARGV[3], ARGV[4]
local ttl = tonumber(ARGV[2])
if not ttl or ttl < 10 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer from 10 to 604800000')
end
if #spec < 4 then
  return redis.error_reply('ERR spec must start with four flag characters')
end

local v
if string.sub(spec, 3, 3) == 'r' then
  v = redis.call('HMGET', lock, 'h', 'f', 'q', given_up, mine)
else
  v = redis.call('HMGET', lock, 'h', 'f', 'q', given_up)
end
local time = redis.call('TIME')
-- The token: the server's time in microseconds, or the last token + 1
-- when that is larger (granted within the same microsecond, or the clock
-- stepped back). Its decimal string is TIME's seconds and microseconds
-- (zero-padded to six digits) side by side, which costs less than
-- formatting the number, and converting that string once gives the
-- number; decimal strings of equal length compare as their numbers.
local micros = time[2]
if #micros < 6 then
  micros = string.rep('0', 6 - #micros) .. micros
end
local fence = time[1] .. micros
local now_us = fence + 0
local now = (now_us - now_us % 1000) / 1000
if v[4] and tonumber(v[4]) > now then
  return {0, 0} -- the caller gave up on this attempt and undid it
end
local token = now_us
local last = v[2]
if last and (#last ~= #fence or last >= fence) then
  token = math.max(now_us, tonumber(last) + 1)
  fence = string.format('%d', token)
end

if not v[1] and not v[3] and not v[5] then
  -- The fast path: no hold, no one waits, no record of this owner. The
  -- lone reader is named by u and stays out of the index. The hash lives
  -- at least ttl_ms more: PEXPIRE GT only moves its expiry forward; a
  -- hash with a token (f) has one (every script that writes the hash
  -- gives it one), a hash without may have been just created.
  local expiry = string.format('%d', now + ttl)
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. expiry .. '\tr\t1', 'f', fence,
    mine, expiry .. '\th\t1\t' .. string.sub(spec, 5), 'u', string.sub(mine, 3))
  if redis.call('PEXPIRE', lock, ARGV[2], 'GT') == 0 and not last and redis.call('PTTL', lock) == -1 then
    redis.call('PEXPIRE', lock, ARGV[2])
  end
  return token
end

local owner = string.sub(mine, 3)
local prefer_writers, waits, _, sharded = string.byte(spec, 1, 4)
local q = tonumber(v[3]) or 0
-- The index's bands: readers by expiry, waiting writers by BAND +
-- deadline, given-up attempts by 2 * BAND + until.
local BAND = 10000000000000

-- keep makes key live at least ms more.
local function keep(key, ms)
  if redis.call('PEXPIRE', key, ms, 'GT') == 0 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ms)
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
    keep(lock, hint)
  end
  return {0, hint}
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

local h, kind, upto, state, rest = v[1], nil, 0, nil, nil
if h then
  kind, upto, state, rest = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  upto = tonumber(upto) or 0
  if upto <= now then
    h, upto = nil, 0 -- every hold under h ended
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
local readers = h and state == 'r'
local u = redis.call('HGET', lock, 'u')

-- settle sweeps; the reader members it dropped come off n while n counts
-- them (u not set).
local function settle()
  local gone = sweep(0)
  if readers and not u and gone > 0 then
    n = math.max(0, n - gone)
  end
end

if count == 0 and q > now and (not h or readers) and prefer_writers == 119 then -- 'w'
  -- Writer preference: a live waiting writer holds new readers back.
  settle()
  local oldest = redis.call('ZRANGE', index, '(' .. string.format('%d', BAND + now),
    '(' .. string.format('%d', 2 * BAND), 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  if oldest[1] then
    if readers and n ~= tonumber(rest) then
      redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', upto) .. '\tr\t' .. string.format('%d', n))
    end
    return wait(tonumber(oldest[2]) - BAND - now)
  end
elseif not h or (readers and count == 0 and n % 4 == 3) then
  settle()
end

local expiry = now + ttl
local exp = string.format('%d', expiry)
local record
if count > 0 then
  record = exp .. '\th\t' .. string.format('%d', count + 1) .. '\t' .. first
  if u ~= owner and redis.call('ZADD', index, 'XX', 'CH', exp, mine) == 1 then
    keep(index, ARGV[2])
  end
else
  record = exp .. '\th\t1\t' .. string.sub(spec, 5)
end

if h and not readers then
  -- The writer's own read hold: h lasts as long as the longest hold. A
  -- new record goes in the index (it is counted if the writer downgrades).
  if count == 0 then
    redis.call('ZADD', index, exp, mine)
    keep(index, ARGV[2])
  end
  if expiry > upto then
    redis.call('HSET', lock, 'h', 'rwmutex\t' .. exp .. '\t' .. state .. '\t' .. rest,
      'f', fence, mine, record)
  else
    redis.call('HSET', lock, 'f', fence, mine, record)
  end
elseif count > 0 then
  -- A re-entry: h counts the record already.
  local n_text = string.format('%d', math.max(n, 1))
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', math.max(upto, expiry)) .. '\tr\t' .. n_text,
    'f', fence, mine, record)
else
  -- A new reader. A lone reader named by u that is still live goes into
  -- the index beside it (n counted it); then n counts every reader member.
  local lone = false
  if u then
    local ue = u ~= owner and tonumber(string.match(redis.call('HGET', lock, 'r:' .. u) or '', '^%d+'))
    if readers then
      n = n + redis.call('ZCOUNT', index, '-inf', '(' .. string.format('%d', BAND))
    end
    if ue and ue > now then
      redis.call('ZADD', index, string.format('%d', ue), 'r:' .. u)
    else
      if u ~= owner then
        redis.call('HDEL', lock, 'r:' .. u)
      end
      if readers then
        n = math.max(0, n - 1)
      end
    end
    redis.call('HDEL', lock, 'u')
  end
  if not readers then
    -- A new hold: n counts the members left in the index (records whose
    -- time passed, swept later).
    n = n + redis.call('ZCOUNT', index, '-inf', '(' .. string.format('%d', BAND))
    lone = n == 0
  end
  n = n + 1
  if lone then
    redis.call('HSET', lock, 'h', 'rwmutex\t' .. exp .. '\tr\t1', 'f', fence, mine, record, 'u', owner)
  else
    redis.call('ZADD', index, exp, mine)
    keep(index, ARGV[2])
    local readers_h = 'rwmutex\t' .. string.format('%d', math.max(upto, expiry)) .. '\tr\t' .. string.format('%d', n)
    redis.call('HSET', lock, 'h', readers_h, 'f', fence, mine, record)
  end
end
if expiry > upto then
  keep(lock, ARGV[2])
end
return token
