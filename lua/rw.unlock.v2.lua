-- name: rw.unlock
-- version: 2
-- description: Release one write hold of a read-write lock and, when someone waits, wake the oldest waiting writer and the readers.
-- keys: lock
-- args: owner publish
-- returns: 1 when freed, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does (the lease ran out)
--
-- The layout is rw.rlock@4's. A revoked hold (state x) is dropped like a
-- held one. When the owner also holds reads, h becomes the readers' h with
-- that one record (the owner has downgraded); otherwise h goes. The fencing
-- token (f) stays. Only a live q (someone waits) leads past the HMGET, TIME
-- and HDEL or HSET: then "released" goes on <lock>:released (waiting
-- readers, and other waiters of the name, look again) and "wake <owner>"
-- on <lock>:grant:<client> to the oldest live waiting writer alone, after
-- a scan proportional to the fields the hash holds. publish is PUBLISH, or
-- SPUBLISH on a cluster with sharded pub/sub.

local lock = KEYS[1]
local owner, publish = ARGV[1], ARGV[2]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
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

local v = redis.call('HMGET', lock, 'h', 'q', mine)
if not v[1] then
  return -1
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local kind, upto, state, count, tail = string.match(v[1], '^([^\t]*)\t(%d+)\t(%a)\t?([^\t]*)\t?(.*)$')
if not upto or tonumber(upto) <= now then
  return -1
end
if kind ~= 'rwmutex' or state == 'r' or state == 'g' or not owns(tail) then
  return 0
end
if tonumber(count) > 1 then
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\t' .. state .. '\t' .. (tonumber(count) - 1) .. '\t' .. tail)
  return 2
end

local own = v[3] and tonumber(string.match(v[3], '^%d+'))
if own and own > now then
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. own .. '\tr\t1') -- downgraded: the owner's read hold stays
else
  redis.call('HDEL', lock, 'h')
end
local q = tonumber(v[2])
if not q or q <= now then
  return 1
end

-- Someone waits: find the oldest live waiting writer, dropping the lapsed ones.
local all = redis.call('HGETALL', lock)
local lapsed, oldest, oldest_at, client = {}, nil, nil, nil
for i = 1, #all, 2 do
  local field = all[i]
  if string.sub(field, 1, 2) == 'W:' then
    local at = tonumber(string.match(all[i + 1], '^%d+'))
    if not at or at <= now then
      lapsed[#lapsed + 1] = field
      if #lapsed == 1000 then
        redis.call('HDEL', lock, unpack(lapsed))
        lapsed = {}
      end
    elseif not oldest_at or at < oldest_at then
      oldest, oldest_at, client = string.sub(field, 3), at, string.match(all[i + 1], '\t(.*)$')
    end
  end
end
if #lapsed > 0 then
  redis.call('HDEL', lock, unpack(lapsed))
end
redis.call(publish, lock .. ':released', 'released')
if oldest and client and client ~= '' then
  redis.call(publish, lock .. ':grant:' .. client, 'wake ' .. oldest)
end
return 1
