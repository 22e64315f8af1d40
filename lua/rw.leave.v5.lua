-- name: rw.leave
-- version: 5
-- description: Undo an RLock or Lock call that gave up: refuse its attempt from now on, drop the hold it took and take a writer out of the waiting writers.
-- keys: lock
-- args: owner attempt gone_ttl_ms hold publish
-- returns: 1 when a hold the attempt took was dropped, 0 when there was none
--
-- The layout is rw.rlock@5's. A call that gave up on an ambiguous error (a
-- timeout) or stopped waiting runs this once: g:<attempt> = now +
-- gone_ttl_ms is recorded first, so that rw.rlock@5 and rw.lock@6 refuse
-- the attempt if it reaches the server later, and the record and the
-- release happen in one script, with no moment between them for the late
-- attempt. Then, for hold r, one read hold of owner is dropped if this
-- attempt took the record (field attempt); for hold w, one write hold if
-- this attempt took it, and the writer's W:<owner> goes. An empty owner
-- only records the attempt (a reentrant owner's holds cannot be told
-- apart). A freed lock wakes whoever waits, as rw.runlock@6 and
-- rw.unlock@3 do; a writer that stopped waiting tells the readers it held
-- back ("released"). This is the slow path: its cost is proportional to
-- the fields the hash holds.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock = KEYS[1]
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
redis.call('HSET', lock, 'g:' .. attempt, string.format('%d', now + gone_ttl))
if redis.call('PEXPIRE', lock, gone_ttl, 'GT') == 0 and redis.call('PTTL', lock) == -1 then
  redis.call('PEXPIRE', lock, gone_ttl)
end
if owner == '' then
  return 0
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
local v = redis.call('HMGET', lock, 'h', 'q', mine, 'W:' .. owner)
local h = v[1]
local kind, upto, state, rest
if h then
  kind, upto, state, rest = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
  if kind ~= 'rwmutex' or not upto or tonumber(upto) <= now then
    h = nil -- no live hold of this lock kind
  end
end

local dropped, freed = 0, false
if hold == 'r' then
  local e, s, c, client, took, meta
  if v[3] then
    e, s, c, client, took, meta = string.match(v[3], '^(%d+)\t(%a)\t(%d+)\t([^\t]*)\t([^\t]*)\t(.*)$')
  end
  if e and tonumber(e) > now and took == attempt then
    dropped = 1
    if tonumber(c) > 1 then
      redis.call('HSET', lock, mine,
        e .. '\t' .. s .. '\t' .. (tonumber(c) - 1) .. '\t' .. client .. '\t' .. took .. '\t' .. meta)
    else
      redis.call('HDEL', lock, mine)
      if h and state == 'r' then
        local left = (tonumber(rest) or 1) - 1
        if left <= 0 then
          redis.call('HDEL', lock, 'h')
          freed = true
        else
          redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. left)
        end
      end
    end
  end
elseif h and state ~= 'r' and state ~= 'g' then
  local c, client, took, holder, meta = string.match(rest, '^(%d+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$')
  if c and took == attempt and owns(client .. '\t' .. took .. '\t' .. holder .. '\t' .. meta) then
    dropped = 1
    if tonumber(c) > 1 then
      redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\t' .. state .. '\t' .. (tonumber(c) - 1) .. '\t' ..
        client .. '\t' .. took .. '\t' .. holder .. '\t' .. meta)
    else
      local own = v[3] and tonumber(string.match(v[3], '^%d+'))
      if own and own > now then
        redis.call('HSET', lock, 'h', 'rwmutex\t' .. own .. '\tr\t1')
      else
        redis.call('HDEL', lock, 'h')
      end
      freed = true
    end
  end
end
local left_queue = hold == 'w' and v[4]
if left_queue then
  redis.call('HDEL', lock, 'W:' .. owner)
end

local q = tonumber(v[2])
if not (freed or left_queue) or not q or q <= now then
  return dropped
end
-- Someone waits: count the live readers and find the oldest live waiting
-- writer, dropping what lapsed.
local all = redis.call('HGETALL', lock)
local lapsed, readers, oldest, oldest_at, wake = {}, 0, nil, nil, nil
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
    elseif kind_of == 'r:' then
      readers = readers + 1
    elseif kind_of == 'W:' and (not oldest_at or at < oldest_at) then
      oldest, oldest_at, wake = string.sub(field, 3), at, string.match(all[i + 1], '\t(.*)$')
    end
  end
end
if #lapsed > 0 then
  redis.call('HDEL', lock, unpack(lapsed))
end
-- Readers held back by this writer, or waiting for the freed lock, look again.
redis.call(publish, lock .. ':released', 'released')
if freed and readers == 0 and oldest and wake and wake ~= '' then
  redis.call(publish, lock .. ':grant:' .. wake, 'wake ' .. oldest)
end
return dropped
