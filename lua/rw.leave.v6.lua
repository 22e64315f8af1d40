-- name: rw.leave
-- version: 6
-- description: Undo an RLock or Lock call that gave up: refuse its attempt from now on, drop the hold it took and take a writer out of the waiting writers.
-- keys: lock index
-- args: owner attempt gone_ttl_ms hold publish
-- returns: 1 when a hold the attempt took was dropped, 0 when there was none
--
-- The layout is rw.rlock@6's. A call that gave up on an ambiguous error (a
-- timeout) or stopped waiting runs this once: g:<attempt> = now +
-- gone_ttl_ms is recorded first (and in the index, score 2 * 10^13 +
-- until), so that rw.rlock@6 and rw.lock@7 refuse the attempt if it
-- reaches the server later, and the record and the release happen in one
-- script, with no moment between them for the late attempt. Then, for
-- hold r, one read hold of owner is dropped if this attempt took the
-- record (field attempt), with its member or u, and h counts one fewer;
-- for hold w, one write hold if this attempt took it (a downgrade as in
-- rw.unlock@4), and the writer's W:<owner> goes with its member. An empty
-- owner only records the attempt (a reentrant owner's holds cannot be
-- told apart). A freed lock wakes whoever waits, as rw.runlock@7 and
-- rw.unlock@4 do; a writer that stopped waiting tells the readers it held
-- back ("released"). Cost: a sweep of at most 8 due given-up attempts
-- and a few commands, each constant or logarithmic in the index.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, index = KEYS[1], KEYS[2]
local owner, attempt, gone_ttl, hold, publish = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if not gone_ttl or gone_ttl < 1 or gone_ttl > 1209600000 or gone_ttl % 1 ~= 0 then
  return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds, at most 1209600000')
end
if hold ~= 'r' and hold ~= 'w' then
  return redis.error_reply('ERR hold must be r or w')
end
if attempt == '' then
  return redis.error_reply('ERR attempt must not be empty')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local BAND = 10000000000000
local BAND_END = '(' .. string.format('%d', BAND)

local function keep(key, ms)
  if redis.call('PEXPIRE', key, ms, 'GT') == 0 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ms)
  end
end

redis.call('HSET', lock, 'g:' .. attempt, string.format('%d', now + gone_ttl))
redis.call('ZADD', index, string.format('%d', 2 * BAND + now + gone_ttl), 'g:' .. attempt)
keep(lock, gone_ttl)
keep(index, gone_ttl)

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

-- owns says whether the write hold whose h ends in tail (client \t attempt
-- \t owner \t meta) is owner's: its owner field is owner (a reentrant
-- owner's calls are one holder), or owner is one call's identity (token \t
-- attempt id, for calls that share a token) and the hold is that call's.
local function owns(tail)
  local took, holder = string.match(tail, '^[^\t]*\t([^\t]*)\t([^\t]*)')
  return holder ~= nil and (holder == owner or holder .. '\t' .. took == owner)
end

local mine = 'r:' .. owner
local v
if owner ~= '' then
  v = redis.call('HMGET', lock, 'h', 'q', 'u', mine, 'W:' .. owner)
else
  v = redis.call('HMGET', lock, 'h', 'q', 'u')
end
local h, u, record = v[1], v[3], v[4]
local lone = owner ~= '' and u == owner
local kind, upto, state, rest, n
if h then
  kind, upto, state, rest = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  if kind ~= 'rwmutex' or not upto or tonumber(upto) <= now then
    h = nil -- no live hold of this lock kind
  elseif state == 'r' then
    n = tonumber(rest) or 0
  end
end
-- The given-up attempts' band is swept (each call adds one).
sweep(2)
local n_was = tonumber(rest)

local dropped, freed = 0, false
if owner ~= '' and hold == 'r' then
  local e, s, c, client, took, meta
  if record then
    e, s, c, client, took, meta = string.match(record, '^(%d+)\t(%a)\t(%d+)\t([^\t]*)\t([^\t]*)\t(.*)$')
  end
  if e and tonumber(e) > now and took == attempt then
    dropped = 1
    if tonumber(c) > 1 then
      redis.call('HSET', lock, mine,
        e .. '\t' .. s .. '\t' .. (tonumber(c) - 1) .. '\t' .. client .. '\t' .. took .. '\t' .. meta)
    else
      if lone then
        redis.call('HDEL', lock, mine, 'u')
        u = nil
      else
        redis.call('HDEL', lock, mine)
        redis.call('ZREM', index, mine)
      end
      if n then
        n = n - 1
        if lone and n > 0 then
          -- rw.rlock@4's readers remain: n counts the index's reader members too.
          n = n + redis.call('ZCOUNT', index, '-inf', BAND_END)
        end
        if n <= 0 then
          redis.call('HDEL', lock, 'h')
          freed = true
        end
      end
    end
  end
elseif owner ~= '' and h and state ~= 'r' and state ~= 'g' then
  local c, client, took, holder, meta = string.match(rest, '^(%d+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$')
  if c and took == attempt and owns(client .. '\t' .. took .. '\t' .. holder .. '\t' .. meta) then
    dropped = 1
    if tonumber(c) > 1 then
      redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\t' .. state .. '\t' .. (tonumber(c) - 1) .. '\t' ..
        client .. '\t' .. took .. '\t' .. holder .. '\t' .. meta)
    else
      local own = record and tonumber(string.match(record, '^%d+'))
      if own and own > now then
        -- Downgraded, as in rw.unlock@4.
        local c_own = 1
        if not lone then
          c_own = redis.call('ZCOUNT', index, '-inf', BAND_END)
          if not redis.call('ZSCORE', index, mine) then
            c_own = c_own + 1
          end
        end
        redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', own) .. '\tr\t' .. string.format('%d', c_own))
      elseif record and lone then
        redis.call('HDEL', lock, 'h', mine, 'u') -- its own read hold lapsed
        u = nil
      elseif record then
        redis.call('HDEL', lock, 'h', mine)
        redis.call('ZREM', index, mine)
      else
        redis.call('HDEL', lock, 'h')
      end
      freed = true
    end
  end
end
if n and not freed and n ~= n_was then
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. string.format('%d', n))
end
local left_queue = owner ~= '' and hold == 'w' and v[5]
if left_queue then
  redis.call('HDEL', lock, 'W:' .. owner)
  redis.call('ZREM', index, 'W:' .. owner)
end

local q = tonumber(v[2])
if not (freed or left_queue) or not q or q <= now then
  return dropped
end
-- Someone waits: readers held back by this writer, or waiting for the
-- freed lock, look again; a freed lock with no live reader left wakes the
-- oldest live waiting writer.
redis.call(publish, lock .. ':released', 'released')
if freed then
  local readers = redis.call('ZCOUNT', index, '(' .. string.format('%d', now), BAND_END)
  if u then
    local ue = tonumber(string.match(redis.call('HGET', lock, 'r:' .. u) or '', '^%d+'))
    if ue and ue > now then
      readers = readers + 1
    end
  end
  local first = redis.call('ZRANGE', index, '(' .. string.format('%d', BAND + now),
    '(' .. string.format('%d', 2 * BAND), 'BYSCORE', 'LIMIT', 0, 1)[1]
  if readers == 0 and first then
    local wake = string.match(redis.call('HGET', lock, first) or '', '\t(.*)$')
    if wake and wake ~= '' then
      redis.call(publish, lock .. ':grant:' .. wake, 'wake ' .. string.sub(first, 3))
    end
  end
end
return dropped
